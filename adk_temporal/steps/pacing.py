"""Pacing a rate-limited model's calls: a start slot from the session store before each.

Temporal's matching service dispatches a limit's steps at its rate, but its token bucket
starts full: two workers under a 2/s limit made five calls in one second. A step of a
limited model therefore asks to start right before it calls the model, through the start
record every worker shares (:class:`~adk_temporal.sessions.CallSlots`), and waits and asks
again until it may: calls start ``1 / rate`` seconds apart at the least.
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
    rate = limit.requests_per_second if limit is not None else None
    if limit is None or rate is None:
        return
    while (wait := await services.sessions.take_call_slot(limit.group, rate)) > 0:
        await asyncio.sleep(wait)
