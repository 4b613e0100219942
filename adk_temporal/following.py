"""Following an invocation's events in the session store as they are appended.

Shared by the Temporal client's handle and the in-process runner's: both poll the store
for events after the last one seen and stop once the invocation no longer runs.
:func:`with_partials` adds the pieces streamed through the store's side channel, for
followers that show text as the model produces it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

from .events import Event
from .flow.messages import InvocationStatus
from .ids import SessionKey
from .sessions import ConversationStore, PartialChannel

__all__ = ["PAGE_EVENTS", "StoreReads", "follow_events", "follow_session", "with_partials"]


class StoreReads:
    """Puts a streamed step's text behind the events stored before the step began.

    The stored events are polled and the pieces pushed, so the first pieces of a step can
    arrive before the events stored just ahead of it (the previous call, its response, the
    user's message). Shared by a follower of the store and :func:`with_partials`: the first
    piece of each step waits for one read of the store begun after it arrived (at most
    ``patience`` seconds: the order is for readers, the text must not stall).
    """

    def __init__(self, patience: float = 1.0) -> None:
        self._patience = patience
        self._wake = asyncio.Event()
        self._signal = asyncio.Event()
        self._begun = 0
        self._ended = 0
        self._closed = False

    def begin(self) -> None:
        """A read of the store starts."""
        self._begun += 1

    def end(self) -> None:
        """The read that started last is over and its events were handed on."""
        self._ended = self._begun
        self._notify()

    def close(self) -> None:
        """The follower stopped: nobody waits for its reads any more."""
        self._closed = True
        self._notify()

    async def pause(self, seconds: float) -> bool:
        """Sleep between reads: ``seconds``, or less when a piece asks for a read (True)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        woken = self._wake.is_set()
        self._wake.clear()
        return woken

    async def fresh(self) -> None:
        """Return once a read begun after this call is over (or the patience ran out)."""
        target = self._begun + 1
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._patience):
                while self._ended < target and not self._closed:
                    signal = self._signal
                    await signal.wait()

    def _notify(self) -> None:
        self._signal.set()
        self._signal = asyncio.Event()


async def follow_events(
    sessions: ConversationStore,
    key: SessionKey,
    status: Callable[[], Awaitable[InvocationStatus | None]],
    closed: Callable[[], bool],
    *,
    poll_interval: float = 0.2,
    after: str | None = None,
    reads: StoreReads | None = None,
) -> AsyncGenerator[Event, None]:
    """Yield the invocation's events from the first until it stops running.

    Args:
        sessions: The store the invocation appends to.
        key: The session.
        status: The invocation's status, or ``None`` while it cannot be read yet.
        closed: True once the invocation ended for any reason, recorded or not.
        poll_interval: Seconds between reads of the store.
        after: Start after the stored event with this id, when it is one of this
            invocation's (a follower reconnecting); otherwise from the first.
        reads: Reports each read, and reads early when a streamed piece asks.

    Yields:
        Events of this invocation (earlier invocations' events are skipped), then new ones
        as they are appended; stops after the run completes, fails or pauses.
    """
    reads = reads or StoreReads()
    seen = 0
    now: InvocationStatus | None = None
    woken = False
    try:
        while True:
            reads.begin()
            ended = closed()
            # A piece asking for a read needs the store, not the status: the invocation
            # that streams it is still the one running.
            if not (woken and now is not None):
                now = await status()
            # Until the invocation answers, its id is unknown and no event of it can be
            # stored yet: reading now could only mix in earlier invocations.
            if now is not None:
                if after is not None:
                    seen = await _position(sessions, key, after, now.invocation_id)
                    after = None
                async for page in _pages(sessions, key, seen):
                    seen += len(page)
                    for event in page:
                        if event.invocation_id == now.invocation_id:
                            yield event
            reads.end()
            if ended or (now is not None and now.status != "running"):
                return
            woken = await reads.pause(poll_interval)
    finally:
        reads.close()


PAGE_EVENTS = 16
"""Events a follower reads from the store at once: a reader that stopped taking them holds
one page, not a long session (a 200 MB one held that much per stalled stream)."""


async def _pages(
    sessions: ConversationStore, key: SessionKey, seen: int, *, missing_ok: bool = True
) -> AsyncGenerator[list[Event], None]:
    """The session's events after the first ``seen``, a page at a time; none for a session
    not stored (yet), unless not ``missing_ok``.

    Raises:
        SessionNotFoundError: The session does not exist and not ``missing_ok``.
    """
    while True:
        try:
            page = (await sessions.get(key, after_sequence=seen, limit=PAGE_EVENTS)).events
        except LookupError:
            if missing_ok:
                return
            raise
        if page:
            yield page
        if len(page) < PAGE_EVENTS:
            return
        seen += len(page)


async def _position(
    sessions: ConversationStore, key: SessionKey, after: str, invocation_id: str
) -> int:
    """How many stored events a follower resuming behind event ``after`` skips: up to and
    including it when it is one of the invocation's, else none (it starts from the first)."""
    seen = 0
    async for page in _pages(sessions, key, 0):
        for event in page:
            seen += 1
            if event.id == after and event.invocation_id == invocation_id:
                return seen
    return 0


async def follow_session(
    sessions: ConversationStore,
    key: SessionKey,
    *,
    poll_interval: float = 0.2,
    reads: StoreReads | None = None,
) -> AsyncGenerator[Event, None]:
    """Yield a session's stored events from the first, then new ones, until the caller stops;
    ``reads`` as for :func:`follow_events`.

    Raises:
        SessionNotFoundError: The session does not exist (when first read).
    """
    reads = reads or StoreReads()
    seen = 0
    try:
        while True:
            reads.begin()
            async for page in _pages(sessions, key, seen, missing_ok=False):
                seen += len(page)
                for event in page:
                    yield event
            reads.end()
            await reads.pause(poll_interval)
    finally:
        reads.close()


_Item = tuple[bool, Event | BaseException | None]
"""From the merge's sources: (is final, an event, the error that ended it, or its end)."""


async def with_partials(
    channel: PartialChannel,
    key: SessionKey,
    finals: AsyncGenerator[Event, None],
    invocation_id: Callable[[], Awaitable[str | None]] | None = None,
    reads: StoreReads | None = None,
) -> AsyncGenerator[Event, None]:
    """``finals`` interleaved with the pieces streamed for the session, until ``finals`` ends.

    A piece whose final event was already yielded is dropped (it is superseded), so a
    follower never sees text of a step after the step's event. With ``reads`` (shared with
    the follower ``finals`` comes from), a step's text also comes after the events stored
    before the step.

    Args:
        channel: The store's side channel that carries the pieces.
        key: The session.
        finals: The stored events to follow; its end ends the merge, its error is raised.
        invocation_id: Keep only the pieces of this invocation (read again whenever a piece
            names another one, as the id may not be known yet); ``None`` keeps all.
        reads: The reads of the follower behind ``finals``.
    """
    # Bounded: a reader that stopped stops the sources too, instead of the merge holding
    # whatever they produce meanwhile.
    queue: asyncio.Queue[_Item] = asyncio.Queue(maxsize=PAGE_EVENTS)

    steps: set[str] = set()

    async def pump(final: bool, source: AsyncGenerator[Event, None]) -> None:
        try:
            async with aclosing(source):
                async for event in source:
                    if not final and reads is not None and event.id not in steps:
                        steps.add(event.id)
                        await reads.fresh()
                    await queue.put((final, event))
        except Exception as err:
            await queue.put((final, err))
            return
        await queue.put((final, None))

    pieces = channel.follow_partials(key)
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
