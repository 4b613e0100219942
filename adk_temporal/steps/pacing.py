"""Pacing a rate-limited model's calls: a start slot from the session store before each.

Temporal's matching service dispatches a limit's steps at its rate, but its token bucket
starts full: two workers under a 2/s limit made five calls in one second. A step of a
limited model therefore takes the limit's next start slot, shared by every worker
(:class:`~adk_temporal.sessions.CallSlots`), right before it calls the model, and waits
until its slot: calls start ``1 / rate`` seconds apart at most as often.
"""

from __future__ import annotations

import asyncio

from ..model_limits import limit_for
from .services import StepServices

__all__ = ["pace"]


async def pace(services: StepServices, model: str) -> None:
    """Return once a call of ``model`` may start under its limit's rate (at once for a
    model without a rate)."""
    limit = limit_for(services.app.model_limits, model)
    if limit is None or limit.requests_per_second is None:
        return
    wait = await services.sessions.take_call_slot(limit.group, limit.requests_per_second)
    if wait > 0:
        await asyncio.sleep(wait)
