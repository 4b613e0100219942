"""Event streams: keep-alive comments on a quiet one, limits on how many and how far behind."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

import pytest
from starlette.types import Message, Scope

from adk_temporal.client import InvocationHandle
from adk_temporal.events import Event
from adk_temporal.web.errors import ApiError
from adk_temporal.web.sse import (
    KEEPALIVE,
    RETRY_AFTER_SECONDS,
    StreamLimits,
    StreamSlots,
    sliced,
    sse_response,
    with_backlog,
    with_keepalive,
)


async def test_a_quiet_stream_gets_comments_and_the_pending_frame_still_arrives() -> None:
    release = asyncio.Event()
    closed: list[bool] = []

    async def frames() -> AsyncIterator[bytes]:
        try:
            yield b"first"
            # Stands for a follower polling the store while a run waits for an approval.
            await release.wait()
            yield b"second"
        finally:
            closed.append(True)

    seen: list[bytes] = []
    async for item in with_keepalive(frames(), every=0.01):
        seen.append(item)
        if item == KEEPALIVE and seen.count(KEEPALIVE) == 3:
            release.set()
    assert seen[0] == b"first"
    assert seen[-1] == b"second"
    assert set(seen[1:-1]) == {KEEPALIVE}
    assert seen.count(KEEPALIVE) >= 3
    assert closed == [True]


async def test_a_busy_stream_gets_no_comments() -> None:
    async def frames() -> AsyncIterator[bytes]:
        for n in range(50):
            yield str(n).encode()

    seen = [item async for item in with_keepalive(frames(), every=60)]
    assert seen == [str(n).encode() for n in range(50)]


async def test_a_client_gone_mid_wait_closes_the_source() -> None:
    closed: list[bool] = []

    async def frames() -> AsyncIterator[bytes]:
        try:
            yield b"first"
            await asyncio.Event().wait()
            yield b"never"
        finally:
            closed.append(True)

    stream = with_keepalive(frames(), every=0.01)
    assert await anext(stream) == b"first"
    assert await anext(stream) == KEEPALIVE
    await stream.aclose()
    assert closed == [True]


# ---------------------------------------------------------------- bounded streams


def _dropped(item: bytes) -> dict[str, Any]:
    head, _, data = item.partition(b"\ndata: ")
    assert head == b"event: dropped"
    found: dict[str, Any] = json.loads(data)
    return found


async def _arriving(count: int, size: int, closed: asyncio.Event) -> AsyncGenerator[bytes, None]:
    """``count`` frames of ``size`` bytes as a follower hands them on, each after a turn of
    the loop; ``closed`` is set once the source is closed."""
    try:
        for n in range(count):
            await asyncio.sleep(0)
            yield str(n % 10).encode() * size
    finally:
        closed.set()


async def test_a_reader_that_falls_behind_is_dropped_with_a_last_event() -> None:
    """While the reader takes nothing, the frames that wait for it stay over the limit: they
    are discarded, the source is closed, and the reader's next frame is the last,
    ``dropped``."""
    closed = asyncio.Event()
    stream = with_backlog(_arriving(1000, 1000, closed), limit=10_000, patience=0)
    first = await anext(stream)
    await closed.wait()  # the reader is stalled meanwhile
    rest = [item async for item in stream]
    assert first == b"0" * 1000
    assert len(rest) == 1
    assert _dropped(rest[0])["reason"] == "slow_reader"
    assert "Last-Event-ID" in _dropped(rest[0])["message"]


async def test_a_stalled_reader_holds_the_limit_and_one_frame_not_what_arrives() -> None:
    """While the reader takes nothing (its patience not over yet), the stream reads no
    further than the limit plus one frame: the source is not drained into memory; once the
    reader takes frames again, every frame comes, in order."""
    produced = 0

    async def counted() -> AsyncGenerator[bytes, None]:
        nonlocal produced
        for n in range(1000):
            produced += 1
            yield str(n % 10).encode() * 1000

    stream = with_backlog(counted(), limit=10_000, patience=60)
    assert await anext(stream) == b"0" * 1000
    for _ in range(200):  # turns of the loop, for the read-ahead to go as far as it may
        await asyncio.sleep(0)
    assert produced == 12
    rest = [item async for item in stream]
    assert len(rest) == 999 and produced == 1000


async def test_a_reader_that_keeps_up_gets_every_frame() -> None:
    """A reader taking each frame as it comes is never dropped, whatever the total."""
    closed = asyncio.Event()
    frames = with_backlog(_arriving(1000, 1000, closed), limit=10_000, patience=0)
    seen = [item async for item in frames]
    assert len(seen) == 1000
    assert seen[-1] == b"9" * 1000
    assert closed.is_set()


async def test_one_frame_larger_than_the_limit_passes_when_nothing_else_waits() -> None:
    """The limit bounds what piles up, not the size of one event."""

    async def frames() -> AsyncGenerator[bytes, None]:
        yield b"x" * 50_000

    assert [len(item) async for item in with_backlog(frames(), 10_000, patience=0)] == [50_000]


async def test_a_burst_the_reader_takes_in_time_is_not_dropped() -> None:
    """Far more than the limit arriving at once (a reconnect replaying a long session) is
    kept while the reader works through it within the patience."""

    async def burst() -> AsyncGenerator[bytes, None]:
        for _ in range(100):
            yield b"x" * 1000

    seen = [item async for item in with_backlog(burst(), limit=10_000, patience=60)]
    assert len(seen) == 100


async def test_the_sources_error_reaches_the_reader_after_its_frames() -> None:
    """A follower's failure is raised to the reader once it took the frames before it."""

    async def frames() -> AsyncGenerator[bytes, None]:
        yield b"first"
        raise RuntimeError("the store went away")

    stream = with_backlog(frames(), limit=10_000, patience=0)
    assert await anext(stream) == b"first"
    with pytest.raises(RuntimeError, match="the store went away"):
        await anext(stream)


async def test_a_reader_gone_closes_the_source_behind_the_backlog() -> None:
    """Closing the stream cancels the reading ahead and closes the follower."""
    closed = asyncio.Event()
    stream = with_backlog(_arriving(1000, 10, closed), limit=1 << 20, patience=0)
    await anext(stream)
    await stream.aclose()
    assert closed.is_set()


async def test_big_frames_go_out_in_pieces_that_join_up() -> None:
    """A frame over the piece size is handed to the server in views of at most that size."""

    async def frames() -> AsyncGenerator[bytes, None]:
        yield b"small"
        yield bytes(range(256)) * 800

    pieces = [bytes(item) async for item in sliced(frames(), size=65_536)]
    assert pieces[0] == b"small"
    assert all(len(p) <= 65_536 for p in pieces)
    assert b"".join(pieces[1:]) == bytes(range(256)) * 800
    assert len(pieces) == 5


def test_streams_are_refused_over_the_token_and_the_gateway_limits_until_one_ends() -> None:
    """One token may follow ``streams_per_token``, all together ``streams``; a refusal is
    a 429 with Retry-After naming the limit; a stream that ended gives its place back."""
    slots = StreamSlots(StreamLimits(streams=3, streams_per_token=2))
    first = slots.take("token:a")
    slots.take("token:a")
    with pytest.raises(ApiError) as per_token:
        slots.take("token:a")
    assert (per_token.value.status, per_token.value.type) == (429, "too_many_streams")
    assert per_token.value.headers == {"Retry-After": str(RETRY_AFTER_SECONDS)}
    assert "2 event streams" in per_token.value.message
    slots.take("token:b")
    with pytest.raises(ApiError) as in_all:
        slots.take("token:c")
    assert "the gateway already serves 3" in in_all.value.message
    first()
    first()  # a second release changes nothing
    assert (slots.open(), slots.open("token:a")) == (2, 1)
    slots.take("token:c")
    assert slots.open() == 3


class _Handle:
    """Stands for an invocation handle: two stored events, then the run is over."""

    workflow_id = "adk/app/u/s"

    async def stream(self, after: str | None = None) -> AsyncIterator[Event]:
        for n in range(2):
            yield Event(id=f"e-{n}", author="agent", invocation_id="i-1")


async def _done() -> str:
    return "completed"


async def test_a_stream_gives_its_slot_back_when_it_ends_or_its_client_leaves() -> None:
    """The response sends the events and the end, then frees its slot; a client gone
    before the first frame frees it too."""
    slots = StreamSlots(StreamLimits(streams=1, streams_per_token=1))
    handle = cast(InvocationHandle, _Handle())
    sent: list[Message] = []
    delivered = asyncio.Event()

    async def send(message: Message) -> None:
        sent.append(message)
        if not message.get("more_body", True):
            delivered.set()

    async def stays(*_: Any) -> Message:
        await delivered.wait()
        return {"type": "http.disconnect"}

    scope: Scope = {"type": "http", "asgi": {"spec_version": "2.3"}}
    response = sse_response(handle, _done, 60, slots=slots, principal="token:a")
    assert slots.open("token:a") == 1
    await response(scope, stays, send)
    body = b"".join(bytes(m.get("body", b"")) for m in sent[1:])
    assert body.count(b"event: adk_event\n") == 2
    assert body.endswith(b'event: end\ndata: {"status": "completed"}\n\n')
    assert slots.open() == 0

    async def gone(*_: Any) -> Message:
        return {"type": "http.disconnect"}

    async def nowhere(message: Message) -> None:
        await asyncio.Event().wait()  # a client that never takes anything

    await sse_response(handle, _done, 60, slots=slots, principal="token:a")(scope, gone, nowhere)
    assert slots.open() == 0
