"""Following an invocation's events in the session store as they are appended.

Shared by the Temporal client's handle and the in-process runner's: both poll the store
for events after the last one seen and stop once the invocation no longer runs.
:func:`with_partials` adds the pieces streamed through the store's side channel, for
followers that show text as the model produces it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing

from .events import Event
from .flow.messages import InvocationStatus
from .sessions import SessionService

__all__ = ["follow_events", "follow_session", "with_partials"]


async def follow_events(
    sessions: SessionService,
    ids: tuple[str, str, str],
    status: Callable[[], Awaitable[InvocationStatus | None]],
    closed: Callable[[], bool],
    *,
    poll_interval: float = 0.2,
    after: str | None = None,
) -> AsyncIterator[Event]:
    """Yield the invocation's events from the first until it stops running.

    Args:
        sessions: The store the invocation appends to.
        ids: The session's ``(app_name, user_id, session_id)``.
        status: The invocation's status, or ``None`` while it cannot be read yet.
        closed: True once the invocation ended for any reason, recorded or not.
        poll_interval: Seconds between reads of the store.
        after: Start after the stored event with this id, when it is one of this
            invocation's (a follower reconnecting); otherwise from the first.

    Yields:
        Events of this invocation (earlier invocations' events are skipped), then new ones
        as they are appended; stops after the run completes, fails or pauses.
    """
    app_name, user_id, session_id = ids
    seen = 0
    while True:
        ended = closed()
        now = await status()
        # Until the invocation answers, its id is unknown and no event of it can be stored
        # yet: reading now could only mix in earlier invocations.
        if now is not None:
            try:
                session = await sessions.get(
                    app_name=app_name, user_id=user_id, session_id=session_id, after_sequence=seen
                )
            except LookupError:
                session = None
            if session is not None:
                seen += len(session.events)
                mine = [e for e in session.events if e.invocation_id == now.invocation_id]
                if after is not None:
                    # The first read holds every event stored so far, the one to resume
                    # after included if it is this invocation's.
                    resumed = [e.id for e in mine]
                    if after in resumed:
                        mine = mine[resumed.index(after) + 1 :]
                    after = None
                for event in mine:
                    yield event
        if ended or (now is not None and now.status != "running"):
            return
        await asyncio.sleep(poll_interval)


async def follow_session(
    sessions: SessionService, ids: tuple[str, str, str], *, poll_interval: float = 0.2
) -> AsyncIterator[Event]:
    """Yield a session's stored events from the first, then new ones, until the caller stops.

    Raises:
        SessionNotFoundError: The session does not exist (when first read).
    """
    app_name, user_id, session_id = ids
    seen = 0
    while True:
        session = await sessions.get(
            app_name=app_name, user_id=user_id, session_id=session_id, after_sequence=seen
        )
        seen += len(session.events)
        for event in session.events:
            yield event
        await asyncio.sleep(poll_interval)


_Item = tuple[bool, Event | BaseException | None]
"""From the merge's sources: (is final, an event, the error that ended it, or its end)."""


async def with_partials(
    sessions: SessionService,
    ids: tuple[str, str, str],
    finals: AsyncIterator[Event],
    invocation_id: Callable[[], Awaitable[str | None]] | None = None,
) -> AsyncIterator[Event]:
    """``finals`` interleaved with the pieces streamed for the session, until ``finals`` ends.

    A piece whose final event was already yielded is dropped (it is superseded), so a
    follower never sees text of a step after the step's event.

    Args:
        sessions: The store whose side channel carries the pieces.
        ids: The session's ``(app_name, user_id, session_id)``.
        finals: The stored events to follow; its end ends the merge, its error is raised.
        invocation_id: Keep only the pieces of this invocation (read again whenever a piece
            names another one, as the id may not be known yet); ``None`` keeps all.
    """
    app_name, user_id, session_id = ids
    queue: asyncio.Queue[_Item] = asyncio.Queue()

    async def pump(final: bool, source: AsyncIterator[Event]) -> None:
        try:
            async with aclosing(source):  # type: ignore[type-var]
                async for event in source:
                    queue.put_nowait((final, event))
        except Exception as err:
            queue.put_nowait((final, err))
            return
        queue.put_nowait((final, None))

    pieces = sessions.follow_partials(app_name=app_name, user_id=user_id, session_id=session_id)
    tasks = [
        asyncio.create_task(pump(False, pieces)),
        asyncio.create_task(pump(True, finals)),
    ]
    superseded: set[str] = set()
    current: str | None = None
    try:
        while True:
            final, item = await queue.get()
            if isinstance(item, BaseException):
                if final:
                    raise item
                continue  # the side channel failed: the stored events still come
            if item is None:
                if final:
                    return
                continue
            if final:
                superseded.add(item.id)
                yield item
                continue
            if item.id in superseded:
                continue
            if invocation_id is not None and item.invocation_id != current:
                current = await invocation_id()
                if item.invocation_id != current:
                    continue
            yield item
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
