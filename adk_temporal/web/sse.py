"""Server-sent events of an invocation: each event as it is stored, then where it ended.

Frames: ``event: adk_event`` with a stored event as JSON (``partial: true`` pieces of a
streamed reply come as ``event: adk_partial``), then one ``event: end`` with
``{"status": ...}`` once the invocation completes, fails or pauses. Each stored event's frame
carries its id, so a client reconnecting with ``Last-Event-ID`` resumes behind it. A run that
waits for a
worker, or for a long tool call, sends nothing for minutes, and proxies close connections idle
for a minute or so, so a ``: keep-alive`` comment goes out after every ``keepalive`` seconds of
silence.

Streams are bounded: :class:`StreamSlots` refuses one over the gateway's or the token's
limit (429); each stream reads ahead of its reader at most ``backlog_bytes`` (plus one
frame, and the follower's one page of stored events), then waits for the reader; and a
reader that stays that far behind for ``slow_reader_seconds`` gets a last
``event: dropped`` (``{"reason": "slow_reader", "message": ...}``) instead of the events it
did not take. Before the read-ahead waited, a reader that stopped made the gateway hold
what arrived in the meantime: 200 MB for ten seconds, replaying a 200 MB session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter, deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from ..client import InvocationHandle
from ..render import event_json
from .errors import ApiError

__all__ = [
    "DROPPED",
    "KEEPALIVE",
    "RETRY_AFTER_SECONDS",
    "RETRY_MS",
    "StreamLimits",
    "StreamSlots",
    "frame",
    "sliced",
    "sse_response",
    "with_backlog",
    "with_keepalive",
]

log = logging.getLogger(__name__)

KEEPALIVE = b": keep-alive\n\n"
"""The comment sent on a quiet stream; clients ignore comments."""
DROPPED = "dropped"
"""The name of the last event of a stream whose reader fell too far behind."""
RETRY_AFTER_SECONDS = 5
"""The ``Retry-After`` of a refused stream."""
_SLICE_BYTES = 64 * 1024


@dataclass(frozen=True)
class StreamLimits:
    """How many event streams the gateway serves at once, and how far a reader may lag."""

    streams: int = 200
    """Open streams in all."""
    streams_per_token: int = 20
    """Open streams of one token (a console session counts as its token)."""
    backlog_bytes: int = 8 << 20
    """Bytes of frames that may wait for a reader."""
    slow_reader_seconds: float = 10.0
    """How long more than ``backlog_bytes`` may wait before the reader is dropped."""


class StreamSlots:
    """The event streams open now, in all and by principal."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self._open: Counter[str] = Counter()

    def open(self, principal: str | None = None) -> int:
        """How many streams are open (``principal``'s only, when given)."""
        return self._open[principal] if principal is not None else self._open.total()

    def take(self, principal: str) -> Callable[[], None]:
        """A slot for one more stream of ``principal``; call the function returned once the
        stream ended (calling it again does nothing).

        Raises:
            ApiError: 429 with ``Retry-After`` when the principal or the gateway serves as
                many streams as it may.
        """
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if self._open[principal] >= self.limits.streams_per_token:
            raise ApiError(
                429,
                "too_many_streams",
                f"this token already follows {self.limits.streams_per_token} event streams, "
                "the most one token may; close one, or retry later",
                retry,
            )
        if self._open.total() >= self.limits.streams:
            raise ApiError(
                429,
                "too_many_streams",
                f"the gateway already serves {self.limits.streams} event streams, its most; "
                "retry later",
                retry,
            )
        self._open[principal] += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._open[principal] -= 1
            if not self._open[principal]:
                del self._open[principal]

        return release


def frame(name: str, data: str, event_id: str | None = None) -> bytes:
    """One server-sent event; ``data`` is a single line (JSON never holds a raw newline)."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {name}\ndata: {data}\n\n".encode()


RETRY_MS = 2000
"""How soon a browser reconnects a dropped stream (it then sends ``Last-Event-ID``)."""


async def _frames(
    handle: InvocationHandle, final_status: Callable[[], Awaitable[str]], after: str | None
) -> AsyncGenerator[bytes, None]:
    # A comment first: proxies and browsers see the stream open before the first event.
    yield f": following\nretry: {RETRY_MS}\n\n".encode()
    async for event in handle.stream(after=after):
        data = json.dumps(event_json(event), ensure_ascii=False)
        if event.partial:
            yield frame("adk_partial", data)
        else:
            yield frame("adk_event", data, event.id or None)
    yield frame("end", json.dumps({"status": await final_status()}))


_DROPPED = object()
"""The outcome of a backlog whose reader fell too far behind."""


class _Backlog:
    """The frames read ahead of one reader, and whether it stayed too far behind.

    A task reads ``frames`` as they come, and stops reading while more than ``limit`` bytes
    wait; the reader takes them with :meth:`next`. Once more than ``limit`` bytes have
    waited ``patience`` seconds on end, the waiting frames are discarded and ``frames`` is
    closed, so a reader that stopped holds neither the gateway's memory nor its follower.
    """

    def __init__(
        self, frames: AsyncGenerator[bytes, None], limit: int, patience: float, name: str
    ) -> None:
        self.limit, self.patience, self.name = limit, patience, name
        self.outcome: object | BaseException | None = None
        """``_DROPPED``, the error that ended ``frames``, or ``None``."""
        self._waiting: deque[bytes] = deque()
        self._size = 0
        self._arrived = asyncio.Event()
        self._taken = asyncio.Event()
        self._finished = False
        self._timer: asyncio.TimerHandle | None = None
        self._task = asyncio.create_task(self._read(frames))

    async def next(self) -> bytes | None:
        """The next frame for the reader; ``None`` once there is none (ended, dropped)."""
        while not self._waiting:
            if self._finished or self.outcome is _DROPPED:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        item = self._waiting.popleft()
        self._size -= len(item)
        self._watch()
        self._taken.set()
        return item

    async def close(self) -> None:
        """Stop reading ahead; ``frames`` is closed."""
        if self._timer is not None:
            self._timer.cancel()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _read(self, frames: AsyncGenerator[bytes, None]) -> None:
        try:
            async with aclosing(frames):
                async for item in frames:
                    self._waiting.append(item)
                    self._size += len(item)
                    self._watch()
                    self._arrived.set()
                    # Read no further ahead until the reader takes something: the follower
                    # behind keeps no more than a page meanwhile.
                    while self._size > self.limit:
                        self._taken.clear()
                        await self._taken.wait()
        except Exception as err:  # handed to the reader's side, where it is raised
            self.outcome = err
        finally:
            self._finished = True
            self._arrived.set()

    def _watch(self) -> None:
        # Over the limit from now on: the reader has `patience` to come back under it.
        if self._size > self.limit and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.patience, self._drop)
        elif self._size <= self.limit and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _drop(self) -> None:
        if self._size <= self.limit:
            return
        # Logged now: the reader's side may be stuck handing the server a frame for good.
        log.warning(
            "dropped %s: more than %d bytes waited for its reader for %g s (%d bytes)",
            self.name,
            self.limit,
            self.patience,
            self._size,
        )
        self.outcome = _DROPPED
        self._waiting.clear()
        self._size = 0
        self._task.cancel()  # closes the follower
        self._arrived.set()


async def with_backlog(
    frames: AsyncGenerator[bytes, None],
    limit: int,
    patience: float,
    name: str = "an event stream",
) -> AsyncGenerator[bytes, None]:
    """``frames``, read ahead of the reader by at most ``limit`` bytes (and one frame), and
    handed on as fast as the reader takes them.

    Once more than ``limit`` bytes have waited for the reader for ``patience`` seconds on
    end, the waiting frames are discarded, ``frames`` is closed, and a last ``dropped``
    event says why. A burst (a reconnect replaying a long session) that a reader takes in
    time is not dropped. ``name`` says in the log which stream was dropped.
    """
    backlog = _Backlog(frames, limit, patience, name)
    try:
        while (item := await backlog.next()) is not None:
            yield item
        if backlog.outcome is _DROPPED:
            reason = {
                "reason": "slow_reader",
                "message": f"the reader stayed more than {limit} bytes behind for "
                f"{patience:g} s; reconnect with Last-Event-ID to resume behind the last "
                "event received",
            }
            yield frame(DROPPED, json.dumps(reason))
        elif isinstance(backlog.outcome, BaseException):
            raise backlog.outcome
    finally:
        await backlog.close()


async def with_keepalive(frames: AsyncIterator[bytes], every: float) -> AsyncGenerator[bytes, None]:
    """``frames`` as they come, with :data:`KEEPALIVE` after each ``every`` seconds of none."""
    source = aiter(frames)
    next_frame: asyncio.Future[bytes] = asyncio.ensure_future(anext(source))
    try:
        while True:
            # Waiting on the pending fetch (not wait_for) keeps it alive across pings: a
            # cancelled fetch would cancel the follower mid-poll.
            done, _ = await asyncio.wait({next_frame}, timeout=every)
            if not done:
                yield KEEPALIVE
                continue
            try:
                item = next_frame.result()
            except StopAsyncIteration:
                return
            yield item
            next_frame = asyncio.ensure_future(anext(source))
    finally:
        next_frame.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
            await next_frame
        await source.aclose()  # type: ignore[attr-defined]


async def sliced(
    frames: AsyncGenerator[bytes, None], size: int = _SLICE_BYTES
) -> AsyncGenerator[bytes | memoryview, None]:
    """``frames`` in pieces of at most ``size`` bytes (views, not copies).

    The server copies each piece it is given into its write buffer and waits for the
    reader only between pieces, so a reader that stopped holds one piece there, not a
    whole 5 MB frame.
    """
    async with aclosing(frames):
        async for item in frames:
            if len(item) <= size:
                yield item
                continue
            view = memoryview(item)
            for start in range(0, len(item), size):
                yield view[start : start + size]


class _EventStream(StreamingResponse):
    """A streaming response that gives its slot back however it ends (the client gone
    before the first frame, the run ended, the reader dropped, an error)."""

    def __init__(
        self, content: AsyncGenerator[bytes | memoryview, None], release: Callable[[], None]
    ) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            # Buffering proxies would hold the events back until the stream ends.
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def sse_response(
    handle: InvocationHandle,
    final_status: Callable[[], Awaitable[str]],
    keepalive: float,
    after: str | None = None,
    *,
    slots: StreamSlots | None = None,
    principal: str = "",
) -> StreamingResponse:
    """The stream of ``handle``'s events, behind event ``after`` when the client had it.

    Args:
        handle: The invocation followed.
        final_status: How it ended, asked once its events are over.
        keepalive: Seconds without an event after which a comment goes out.
        after: The id of the last event the client has.
        slots: The gateway's open streams, which this one joins until it is over;
            ``None`` for no limits but the default backlog.
        principal: Who follows (their token), for the limit per token.

    Raises:
        ApiError: 429 when ``principal`` or the gateway already serves as many streams as
            ``slots`` allow.
    """
    limits = StreamLimits() if slots is None else slots.limits
    release = (lambda: None) if slots is None else slots.take(principal)
    frames = with_backlog(
        _frames(handle, final_status, after),
        limits.backlog_bytes,
        limits.slow_reader_seconds,
        f"the event stream of {handle.workflow_id}",
    )
    return _EventStream(sliced(with_keepalive(frames, keepalive)), release)
