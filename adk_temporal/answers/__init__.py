"""The answer desk: the one client-side home that decides whether an answer from outside a
run may reach it, and how.

Every surface that answers a run's confirmation or input requests — the JSON API, the CLI,
the console, answer links, ``chat``, ADK's routes — asks :class:`AnswerDesk` and translates
its typed outcome (:class:`Applied`, :class:`Accepted`, :class:`Refused` with a
:data:`RefusalReason` and the :class:`EarlierAnswer` that came first). The run's history
is read for answers in one place (:func:`read_answers`). The workflow stays the final
judge: it enforces the same rules where it takes an answer, so a raw signal cannot bypass
them.
"""

from __future__ import annotations

from .delivery import VET_AFTER_SECONDS, AnswerDelivery, deliver_answer
from .desk import AnswerDesk
from .history import RunAnswers, read_answers
from .outcome import (
    Accepted,
    AnswerRefusedError,
    Applied,
    DeliveryPolicy,
    EarlierAnswer,
    Outcome,
    RefusalReason,
    Refused,
    raise_if_refused,
)
from .task import TASK_STARTED, once_signals_show

__all__ = [
    "TASK_STARTED",
    "VET_AFTER_SECONDS",
    "Accepted",
    "AnswerDelivery",
    "AnswerDesk",
    "AnswerRefusedError",
    "Applied",
    "DeliveryPolicy",
    "EarlierAnswer",
    "Outcome",
    "RefusalReason",
    "Refused",
    "RunAnswers",
    "deliver_answer",
    "once_signals_show",
    "raise_if_refused",
    "read_answers",
]
