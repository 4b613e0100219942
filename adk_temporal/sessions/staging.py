"""``StagingArea``: events kept beside a session, outside its history, until an append takes them.

A tool step stages its response here, so the response never travels through workflow
history; the step that stores the merged response event reads it back and removes it in the
same transaction as the append (``ConversationStore.append_events(..., unstage=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..events import Event
from ..ids import SessionKey
from .rules import check_event_ids, check_identity

__all__ = ["StagingArea", "prepare_stage"]


class StagingArea(Protocol):
    """Keeps events aside per session, keyed by event id."""

    async def stage_events(self, key: SessionKey, events: Sequence[Event]) -> None:
        """Keep events aside until an append takes them.

        Staging an id again replaces the event: a retried step replaces what an abandoned
        attempt staged. ``get`` never returns them; deleting the session deletes them.

        Args:
            key: The session.
            events: The events; each needs a non-empty ``id``.

        Raises:
            SessionNotFoundError: No such session (nothing is staged).
            InvalidSessionRequestError: A key field or an event id is empty.
        """
        ...

    async def staged_events(self, key: SessionKey, ids: Sequence[str]) -> dict[str, Event]:
        """The staged events among ``ids``, by id; an id with nothing staged is absent.

        Raises:
            SessionNotFoundError: No such session.
            InvalidSessionRequestError: A key field is empty.
        """
        ...


def prepare_stage(key: SessionKey, events: Sequence[Event]) -> list[tuple[str, str]]:
    """The checks every backend's ``stage_events`` starts with.

    Returns:
        ``(id, event JSON)`` per event.

    Raises:
        InvalidSessionRequestError: A key field or an event id is empty.
    """
    check_identity(key)
    check_event_ids(events)
    return [(e.id, e.model_dump_json()) for e in events]
