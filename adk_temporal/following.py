"""Following an invocation's events in the session store as they are appended.

Shared by the Temporal client's handle and the in-process runner's: both poll the store
for events after the last one seen and stop once the invocation no longer runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from .events import Event
from .flow.messages import InvocationStatus
from .sessions import SessionService

__all__ = ["follow_events"]


async def follow_events(
    sessions: SessionService,
    ids: tuple[str, str, str],
    status: Callable[[], Awaitable[InvocationStatus | None]],
    closed: Callable[[], bool],
    *,
    poll_interval: float = 0.2,
) -> AsyncIterator[Event]:
    """Yield the invocation's events from the first until it stops running.

    Args:
        sessions: The store the invocation appends to.
        ids: The session's ``(app_name, user_id, session_id)``.
        status: The invocation's status, or ``None`` while it cannot be read yet.
        closed: True once the invocation ended for any reason, recorded or not.
        poll_interval: Seconds between reads of the store.

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
                for event in session.events:
                    if event.invocation_id == now.invocation_id:
                        yield event
        if ended or (now is not None and now.status != "running"):
            return
        await asyncio.sleep(poll_interval)
