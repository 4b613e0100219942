"""``Heartbeat``: how a long step tells its engine that it is alive.

An engine that can notice a dead step (Temporal, through the activity's heartbeat timeout)
hands the step a hook; a heartbeat is also how a running step learns that its invocation was
cancelled (the cancellation then surfaces as ``asyncio.CancelledError``). In-process there
is nobody to tell, and steps get no hook.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

__all__ = ["Heartbeat", "heartbeating"]


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A hook to call at least every ``every`` seconds while a step works."""

    beat: Callable[[], None]
    every: float


@contextlib.asynccontextmanager
async def heartbeating(heartbeat: Heartbeat | None) -> AsyncIterator[None]:
    """Beat in the background for as long as the block runs (nothing without a hook)."""
    if heartbeat is None:
        yield
        return

    async def beat() -> None:
        # The first beat waits too: each one is a call to the server that records it, and
        # most steps end long before it is due, so they cost the server nothing extra.
        while True:
            await asyncio.sleep(max(heartbeat.every, 0.05))
            heartbeat.beat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
