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
    "MAX_QUEUED_BYTES",
    "MessageQueue",
    "MessageWithdrawnError",
    "QueueFullError",
    "QueuedMessageNotFoundError",
]

MAX_QUEUED = 16
"""The most messages a session holds: each waits in the run's memory and in the input of
every run it is carried to, and a sender past this is better told now than after hours."""

MAX_QUEUED_BYTES = 1024 * 1024
"""The most bytes of messages a session holds (their JSON): the queue travels whole in the
input of the run a run continues as new into, which with its carry must stay well under
Temporal's 2 MB a payload — 16 messages of the default 256 KB budget would not."""


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

    def size(self) -> int:
        """The bytes of the queued messages (their JSON)."""
        return sum(item.size() for item in self.items)

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
            QueueFullError: :data:`MAX_QUEUED` messages (or :data:`MAX_QUEUED_BYTES`)
                wait already; or the message alone is larger than that.
        """
        waiting = self.position(message.invocation_id)
        if waiting is not None:
            return waiting, []
        superseded: list[QueuedMessage] = []
        size = message.size()
        if size > MAX_QUEUED_BYTES:
            raise QueueFullError(
                f"the session is busy and a message of {size} bytes is too large to queue "
                f"(at most {MAX_QUEUED_BYTES}); send it once the session is free"
            )
        if message.policy in STOPPING:
            superseded, self.items = self.items, []
        elif len(self.items) >= MAX_QUEUED:
            raise QueueFullError(
                f"the session is busy and {MAX_QUEUED} messages wait already; wait for them "
                "or withdraw one"
            )
        elif self.size() + size > MAX_QUEUED_BYTES:
            raise QueueFullError(
                f"the session is busy and its queue holds {self.size()} bytes of messages; "
                f"{size} more would pass {MAX_QUEUED_BYTES}: wait for them or withdraw one"
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
