"""The session store's side channel for streamed model output (partial events).

A streaming model step publishes each piece of the reply as a partial event; followers of
the session receive them within milliseconds. Pieces never enter the session's history nor
Temporal's: a backend keeps a partial only until the final event with the same id is
appended (which supersedes it) or until it is :data:`PARTIAL_TTL_SECONDS` old (its step
died and never finished). A follower that starts mid-step first gets the pieces still kept,
so it can show the reply so far.

Each backend keeps the pieces as a log with increasing sequence numbers; :func:`follow_log`
is the one follower loop they share, differing only in how they read and how they wait.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from ..errors import InvalidSessionRequestError
from ..events import Event
from .service import check_identity

__all__ = ["FOLLOW_POLL_SECONDS", "PARTIAL_TTL_SECONDS", "follow_log", "prepare_partial"]

PARTIAL_TTL_SECONDS = 600.0
"""How long a partial event is kept when no final event supersedes it."""

FOLLOW_POLL_SECONDS = 0.03
"""How often polling followers (in-memory, SQLite) look for new pieces."""


def prepare_partial(
    app_name: str, user_id: str, session_id: str, event: Event
) -> tuple[tuple[str, str, str], str]:
    """The checks every backend's ``publish_partial`` starts with.

    Returns:
        The session's key and the event's JSON.

    Raises:
        InvalidSessionRequestError: An identity field is empty, or the event is not marked
            partial or has no id (the id of the final event that will supersede it).
    """
    check_identity(app_name, user_id, session_id)
    if not event.partial or not event.id:
        raise InvalidSessionRequestError(
            "invalid partial event: it needs partial=True and the id of the final event that "
            "will supersede it"
        )
    return (app_name, user_id, session_id), event.model_dump_json()


async def follow_log(
    read_after: Callable[[int], Awaitable[Sequence[tuple[int, Event]]]],
    wait: Callable[[], Awaitable[None]],
) -> AsyncIterator[Event]:
    """Yield a partial log's entries in order, then new ones, until the caller stops.

    Args:
        read_after: The entries with a sequence number above the given one, in order.
        wait: Returns when new entries may be there (a poll interval, a notification).
    """
    last = 0
    while True:
        for sequence, event in await read_after(last):
            last = sequence
            yield event
        await wait()
