"""``PartialChannel``: the session store's side channel for streamed model output.

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

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Protocol

from ..errors import InvalidSessionRequestError
from ..events import Event
from ..ids import SessionKey
from .rules import check_identity

__all__ = [
    "FOLLOW_POLL_SECONDS",
    "PARTIAL_TTL_SECONDS",
    "PartialChannel",
    "follow_log",
    "prepare_partial",
]

PARTIAL_TTL_SECONDS = 600.0
"""How long a partial event is kept when no final event supersedes it."""

FOLLOW_POLL_SECONDS = 0.03
"""How often polling followers (in-memory, SQLite) look for new pieces."""


class PartialChannel(Protocol):
    """Carries the pieces of streamed replies to a session's followers.

    The defaults are a store without a side channel: pieces are checked and dropped, and
    followers get none (the final events still come through the conversation).
    """

    async def publish_partial(self, key: SessionKey, event: Event) -> None:
        """Offer a piece of a streamed model reply to the session's followers.

        Never part of the session: the piece is kept only until the final event with the
        same id is appended, or for :data:`PARTIAL_TTL_SECONDS`. Publishing to a session
        that does not exist is not checked: followers of it would get the piece, no one else.

        Raises:
            InvalidSessionRequestError: A key field is empty, or the event is not marked
                partial or has no id.
        """
        prepare_partial(key, event)

    def follow_partials(self, key: SessionKey) -> AsyncGenerator[Event, None]:
        """The session's partial events still kept, then new ones as they are published.

        Runs until the caller stops iterating (closing the iterator releases what it holds).

        Raises:
            InvalidSessionRequestError: A key field is empty.
        """
        check_identity(key)
        return _nothing()


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield


def prepare_partial(key: SessionKey, event: Event) -> str:
    """The checks every backend's ``publish_partial`` starts with.

    Returns:
        The event's JSON.

    Raises:
        InvalidSessionRequestError: A key field is empty, or the event is not marked
            partial or has no id (the id of the final event that will supersede it).
    """
    check_identity(key)
    if not event.partial or not event.id:
        raise InvalidSessionRequestError(
            "invalid partial event: it needs partial=True and the id of the final event that "
            "will supersede it"
        )
    return event.model_dump_json()


async def follow_log(
    read_after: Callable[[int], Awaitable[Sequence[tuple[int, Event]]]],
    wait: Callable[[], Awaitable[None]],
) -> AsyncGenerator[Event, None]:
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
