"""Server-sent events of an invocation: each event as it is stored, then where it ended.

Frames: ``event: adk_event`` with a stored event as JSON (``partial: true`` pieces of a
streamed reply come as ``event: adk_partial``), then one ``event: end`` with
``{"status": ...}`` once the invocation completes, fails or pauses. Each stored event's frame
carries its id, so a client reconnecting with ``Last-Event-ID`` resumes behind it. A run that
waits for a
worker, or for a long tool call, sends nothing for minutes, and proxies close connections idle
for a minute or so, so a ``: keep-alive`` comment goes out after every ``keepalive`` seconds of
silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

from starlette.responses import StreamingResponse

from ..client import InvocationHandle
from ..render import event_json

__all__ = ["KEEPALIVE", "RETRY_MS", "frame", "sse_response", "with_keepalive"]

KEEPALIVE = b": keep-alive\n\n"
"""The comment sent on a quiet stream; clients ignore comments."""


def frame(name: str, data: str, event_id: str | None = None) -> bytes:
    """One server-sent event; ``data`` is a single line (JSON never holds a raw newline)."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {name}\ndata: {data}\n\n".encode()


RETRY_MS = 2000
"""How soon a browser reconnects a dropped stream (it then sends ``Last-Event-ID``)."""


async def _frames(
    handle: InvocationHandle, final_status: Callable[[], Awaitable[str]], after: str | None
) -> AsyncIterator[bytes]:
    # A comment first: proxies and browsers see the stream open before the first event.
    yield f": following\nretry: {RETRY_MS}\n\n".encode()
    async for event in handle.stream(after=after):
        data = json.dumps(event_json(event), ensure_ascii=False)
        if event.partial:
            yield frame("adk_partial", data)
        else:
            yield frame("adk_event", data, event.id or None)
    yield frame("end", json.dumps({"status": await final_status()}))


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


def sse_response(
    handle: InvocationHandle,
    final_status: Callable[[], Awaitable[str]],
    keepalive: float,
    after: str | None = None,
) -> StreamingResponse:
    """The stream of ``handle``'s events, behind event ``after`` when the client had it;
    ``final_status`` says how it ended; a comment goes out after each ``keepalive`` seconds
    without an event."""
    return StreamingResponse(
        with_keepalive(_frames(handle, final_status, after), keepalive),
        media_type="text/event-stream",
        # Buffering proxies would hold the events back until the stream ends.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
