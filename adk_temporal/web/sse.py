"""Server-sent events of an invocation: each event as it is stored, then where it ended.

Frames: ``event: adk_event`` with a stored event as JSON (``partial: true`` pieces of a
streamed reply come as ``event: adk_partial``), then one ``event: end`` with
``{"status": ...}`` once the invocation completes, fails or pauses.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.responses import StreamingResponse

from ..cli.common import event_json
from ..client import InvocationHandle

__all__ = ["frame", "sse_response"]


def frame(name: str, data: str, event_id: str | None = None) -> bytes:
    """One server-sent event; ``data`` is a single line (JSON never holds a raw newline)."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {name}\ndata: {data}\n\n".encode()


async def _frames(
    handle: InvocationHandle, final_status: Callable[[], Awaitable[str]]
) -> AsyncIterator[bytes]:
    # A comment first: proxies and browsers see the stream open before the first event.
    yield b": following\n\n"
    async for event in handle.stream():
        data = json.dumps(event_json(event), ensure_ascii=False)
        if event.partial:
            yield frame("adk_partial", data)
        else:
            yield frame("adk_event", data, event.id or None)
    yield frame("end", json.dumps({"status": await final_status()}))


def sse_response(
    handle: InvocationHandle, final_status: Callable[[], Awaitable[str]]
) -> StreamingResponse:
    """The stream of ``handle``'s events; ``final_status`` says how it ended."""
    return StreamingResponse(
        _frames(handle, final_status),
        media_type="text/event-stream",
        # Buffering proxies would hold the events back until the stream ends.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
