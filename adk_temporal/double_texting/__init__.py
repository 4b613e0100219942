"""Double texting: what a message does when it reaches a session whose invocation is busy.

A session runs one invocation at a time. A message sent meanwhile follows a policy, set per
app (``App.double_texting``) or per call (``AdkClient.start(double_texting=...)``, ``run
--double-texting``, the gateway's and ADK routes' ``double_texting`` field):

* ``reject`` refuses it (:class:`~adk_temporal.errors.SessionBusyError`), as sessions always
  did;
* ``enqueue`` queues it in the session's workflow, durably, to run as its own invocation
  once the invocations before it ended, in the order sent;
* ``interrupt`` stops the running invocation at its next safe point — the step it is in
  finishes and is stored, so a tool that ran keeps its result — and runs the message next;
* ``rollback`` cancels the running invocation at once, rewinds the session to before it
  (:mod:`adk_temporal.rewind`), and runs the message next.

These are LangGraph's double-texting strategies under the same names. This package holds
the engine-neutral parts: the policy names (:mod:`.policy`), the queued message and what
its sender is told (:mod:`.messages`), and the queue's rules (:mod:`.queue`). The Temporal
parts are the session workflow's handlers (``workflows/texting.py``) and the client's start
path (``AdkClient.start``).
"""

from __future__ import annotations

from .messages import (
    MAX_PREVIEW_CHARS,
    InvalidQueuedMessageError,
    MessageAck,
    QueuedMessage,
    QueuedSummary,
    WithdrawInput,
    message_problem,
)
from .policy import (
    POLICIES,
    STOPPING,
    DoubleTexting,
    InvalidDoubleTextingError,
    double_texting_policy,
)
from .queue import (
    MAX_QUEUED,
    MAX_QUEUED_BYTES,
    MessageQueue,
    MessageWithdrawnError,
    QueuedMessageNotFoundError,
    QueueFullError,
)

__all__ = [
    "MAX_PREVIEW_CHARS",
    "MAX_QUEUED",
    "MAX_QUEUED_BYTES",
    "POLICIES",
    "STOPPING",
    "DoubleTexting",
    "InvalidDoubleTextingError",
    "InvalidQueuedMessageError",
    "MessageAck",
    "MessageQueue",
    "MessageWithdrawnError",
    "QueueFullError",
    "QueuedMessage",
    "QueuedMessageNotFoundError",
    "QueuedSummary",
    "WithdrawInput",
    "double_texting_policy",
    "message_problem",
]
