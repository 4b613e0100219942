"""What crosses the session workflow's boundary for double texting: the queued message, its
summary, and what its sender is told."""

from __future__ import annotations

import re
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adk_temporal.budgets import Budgets, json_size
from adk_temporal.errors import AdkRequestError
from adk_temporal.ids import id_problem
from adk_temporal.run_config import RunConfig

from .policy import DoubleTexting

__all__ = [
    "MAX_PREVIEW_CHARS",
    "InvalidQueuedMessageError",
    "MessageAck",
    "QueuedMessage",
    "QueuedSummary",
    "WithdrawInput",
    "message_problem",
]

MAX_PREVIEW_CHARS = 200
"""How much of a queued message's text its summary shows."""

_INVOCATION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
"""A sender's invocation id: what ``e-<uuid>`` ids and ids users choose look like, and no
character a visibility query, a log line or a command line would misread."""


class InvalidQueuedMessageError(AdkRequestError, ValueError):
    """A session's run refused a queued message as malformed or over its budget."""


class QueuedMessage(BaseModel):
    """A message sent to a busy session, as its sender sent it; it runs as an invocation of
    its own once its turn comes.

    The sender chooses the invocation id, so it can follow the invocation before it starts.
    """

    # Decoded from history: fields a newer sender adds are ignored, not refused.
    model_config = ConfigDict(extra="ignore")

    invocation_id: str
    agent_name: str
    message: types.Content | None = None
    policy: DoubleTexting | None = None
    """``None``: the app's (``App.double_texting``), which the run learns from its first
    model step; the message waits for it before it is taken or refused."""
    config: RunConfig = Field(default_factory=RunConfig)
    """The queued invocation's limits and switches."""
    baseline: int = 0
    """The baseline of the sender's release (``InvocationInput.baseline``)."""
    schedule_id: str | None = None
    started_by: str | None = None
    """Who sent it, as their channel authenticated them: the requester of its invocation's
    calls under approval policies."""
    """The schedule that sent it (:mod:`adk_temporal.schedules`), if one did."""
    channel: str | None = None
    """How it came: ``client``, ``cli``, ``gateway``, ``schedule``..."""
    queued_at: float = 0.0
    """When the run took it (the run's time, never the sender's clock)."""

    def size(self) -> int:
        """The message's size in bytes of compact JSON (0 for none)."""
        return _size(self.message)

    def summary(self, position: int) -> QueuedSummary:
        """What ``show`` and the memo list of it: never the whole message."""
        return QueuedSummary(
            invocation_id=self.invocation_id,
            position=position,
            agent=self.agent_name,
            policy=self.policy or "enqueue",
            preview=_text(self.message)[:MAX_PREVIEW_CHARS],
            size=self.size(),
            queued_at=self.queued_at,
            schedule_id=self.schedule_id,
        )


def _text(message: types.Content | None) -> str:
    """The text parts of ``message``, joined."""
    parts = (message.parts or []) if message is not None else []
    return " ".join(p.text for p in parts if p.text)


def _size(message: types.Content | None) -> int:
    """The size of ``message`` in bytes of compact JSON (0 for none)."""
    if message is None:
        return 0
    return json_size(message.model_dump(mode="json", exclude_none=True), "the message")


class QueuedSummary(BaseModel):
    """A queued message as ``show`` and the run's memo list it."""

    invocation_id: str
    position: int
    """1 runs next."""
    agent: str
    policy: DoubleTexting
    preview: str = ""
    """The first :data:`MAX_PREVIEW_CHARS` characters of its text."""
    size: int = 0
    """The message's size in bytes of JSON."""
    queued_at: float = 0.0
    schedule_id: str | None = None


class MessageAck(BaseModel):
    """What the sender of a queued message is told: where it waits."""

    invocation_id: str
    run_id: str
    """The run that took it: following the session's runs from there finds its turn."""
    position: int
    """1 runs next."""
    policy: DoubleTexting
    """The policy it was taken under (the app's, resolved, when it was sent with none)."""
    superseded: list[str] = Field(default_factory=list)
    """Invocation ids of earlier queued messages it withdrew (an interrupt or rollback runs
    next, as LangGraph's do)."""


class WithdrawInput(BaseModel):
    """Update ``adk_withdraw``: take a queued message out before it runs."""

    invocation_id: str


def message_problem(raw: Any, budgets: Budgets) -> tuple[QueuedMessage | None, str | None]:
    """``raw`` as a queued message, or why it is refused (a sender's value is any JSON).

    Returns:
        The message and ``None``, or ``None`` and the problem, naming the field.
    """
    try:
        message = QueuedMessage.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        return None, f"malformed queued message: {where}: {first['msg']}"
    if not _INVOCATION_ID.fullmatch(message.invocation_id):
        return None, (
            f"invocation_id {message.invocation_id[:140]!r} must be 1 to 128 letters, digits, "
            "'.', '_', ':' or '-', starting with a letter or digit"
        )
    problem = (
        id_problem("agent_name", message.agent_name)
        if message.agent_name
        else "agent_name is missing"
    )
    if problem is None and message.schedule_id is not None:
        problem = id_problem("schedule_id", message.schedule_id)
    size = _size(message.message)
    if problem is None and size > budgets.message_bytes:
        problem = (
            f"the message is {size} bytes, over the message_bytes budget of {budgets.message_bytes}"
        )
    return (None, problem) if problem is not None else (message, None)
