"""``MessageQueue``: the messages a busy session holds, in the order they run.

Pure rules, no engine: the session workflow keeps one and carries it across
continue-as-new. A message is taken once (a sender retrying with the same invocation id is
told where it already waits), the queue is bounded, and a message that stops the running
invocation (``interrupt``, ``rollback``) withdraws the messages queued before it and runs
next, as LangGraph cancels a thread's pending runs for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_temporal.errors import AdkRequestError, SessionBusyError

from .messages import QueuedMessage, QueuedSummary
from .policy import STOPPING, DoubleTexting

__all__ = [
    "MAX_QUEUED",
    "MessageQueue",
    "MessageWithdrawnError",
    "QueueFullError",
    "QueuedMessageNotFoundError",
]

MAX_QUEUED = 16
"""The most messages a session holds: each waits in the run's memory and in the input of
every run it is carried to, and a sender past this is better told now than after hours."""


class QueueFullError(SessionBusyError):
    """The session is busy and already holds :data:`MAX_QUEUED` messages."""


class QueuedMessageNotFoundError(AdkRequestError, LookupError):
    """No queued message of the session has this invocation id (it ran, started or was
    withdrawn already, or never was queued)."""


class MessageWithdrawnError(AdkRequestError):
    """A queued message never ran: it was withdrawn, superseded by an interrupt or rollback,
    or the session's workflow was cancelled first."""


class MessageQueue:
    """The queued messages, first to run first.

    Args:
        items: The messages a previous run carried, in order.
    """

    def __init__(self, items: Sequence[QueuedMessage] = ()) -> None:
        self.items: list[QueuedMessage] = list(items)

    def __len__(self) -> int:
        return len(self.items)

    def position(self, invocation_id: str) -> int | None:
        """Where the message of ``invocation_id`` waits (1 runs next), or ``None``."""
        for index, item in enumerate(self.items):
            if item.invocation_id == invocation_id:
                return index + 1
        return None

    def add(self, message: QueuedMessage) -> tuple[int, list[QueuedMessage]]:
        """Queue ``message`` (its ``policy`` resolved); where it waits, and what it withdrew.

        A message whose invocation id waits already is not queued twice: its position is
        returned and nothing changes (a sender retrying).

        Raises:
            QueueFullError: :data:`MAX_QUEUED` messages wait already.
        """
        waiting = self.position(message.invocation_id)
        if waiting is not None:
            return waiting, []
        superseded: list[QueuedMessage] = []
        if message.policy in STOPPING:
            superseded, self.items = self.items, []
        elif len(self.items) >= MAX_QUEUED:
            raise QueueFullError(
                f"the session is busy and {MAX_QUEUED} messages wait already; wait for them "
                "or withdraw one"
            )
        self.items.append(message)
        return len(self.items), superseded

    def withdraw(self, invocation_id: str) -> QueuedMessage:
        """Take the message of ``invocation_id`` out.

        Raises:
            QueuedMessageNotFoundError: None waits (it started, ran or was withdrawn).
        """
        waiting = self.position(invocation_id)
        if waiting is None:
            raise QueuedMessageNotFoundError(
                f"no queued message has invocation id {invocation_id!r}: it started, ran or "
                "was withdrawn already"
            )
        return self.items.pop(waiting - 1)

    def stopping(self) -> DoubleTexting | None:
        """``interrupt`` or ``rollback`` when the next message stops the running invocation."""
        head = self.items[0].policy if self.items else None
        return head if head in STOPPING else None

    def pop(self) -> QueuedMessage | None:
        """The next message to run, taken out; ``None`` when none waits."""
        return self.items.pop(0) if self.items else None

    def summaries(self) -> list[QueuedSummary]:
        """Every queued message as ``show`` lists it, in order."""
        return [item.summary(index + 1) for index, item in enumerate(self.items)]
