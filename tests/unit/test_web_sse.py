"""Keep-alive comments on a quiet event stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from adk_temporal.web.sse import KEEPALIVE, with_keepalive


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
