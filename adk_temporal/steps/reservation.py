"""A model step's token reservation: its worst case held in the ledger while the model works.

Under cumulative budgets (:class:`~adk_temporal.usage.TokenBudgets`) a step reserves its
input, counted, plus its output cap before it calls the model; the model step records what
the model reported under the same id, which settles the reservation, and releases it when
no reply is recorded. Steps starting at once thus see each other: together they pass a
budget by one step's reservation at most, instead of each reading the same total and
spending it again (20 runs of one user spent 2,000 tokens against a budget of 500).

A step that finds the rest of a budget reserved by steps running now waits for them,
heartbeating, for at most half its timeout; then, as when spending alone reached the budget,
it calls no model and the invocation asks for more.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..flow.messages import ModelStepInput, OverBudgetStep
from ..models import LlmRequest
from ..run_config import RunConfig
from ..usage import MAX_TOKENS, TokenBudgets
from .heartbeat import Heartbeat, heartbeating
from .ref import SessionRef
from .services import StepServices

__all__ = ["input_token_bound", "reserve_step", "reserved", "worst_case"]

_FIRST_POLL_SECONDS = 0.1
_MAX_POLL_SECONDS = 2.0


def input_token_bound(request: LlmRequest) -> int:
    """At least the tokens ``request``'s input counts: the bytes of its contents, system
    instruction and tools as JSON. A token of text covers one byte or more, and inline
    data travels as base64, longer than the bytes a model counts for it."""
    sent = request.model_dump_json(include={"contents", "system_instruction", "tools"})
    return len(sent.encode())


def worst_case(request: LlmRequest, budgets: TokenBudgets) -> int:
    """What a step with ``request`` may cost at most: its input bound plus its output cap
    (the request's ``max_output_tokens``, else the budgets' default cap)."""
    config = request.generation_config
    cap = (config.max_output_tokens if config is not None else None) or budgets.default_output_cap
    return min(MAX_TOKENS, input_token_bound(request) + cap)


async def reserve_step(
    services: StepServices,
    inp: ModelStepInput,
    ref: SessionRef,
    request: LlmRequest,
    heartbeat: Heartbeat | None,
) -> OverBudgetStep | None:
    """Reserve the step's worst case; ``None`` once reserved (or with no budgets), else the
    budget the step must not start over: reached by spending, or held by steps running now
    for longer than half the step's timeout."""
    budgets = services.app.token_budgets
    if not budgets.bounded():
        return None
    timeout = (inp.run_config or RunConfig()).model_timeout_seconds
    tokens = worst_case(request, budgets)
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout / 2
    poll = _FIRST_POLL_SECONDS
    async with heartbeating(heartbeat):
        while True:
            # Leased for the step's timeout: by then this attempt is over, and a retry
            # replaces the reservation under the same id.
            outcome = await services.sessions.reserve_tokens(
                ref.key, inp.model_event_id, tokens, budgets, lease=timeout
            )
            if outcome.reserved:
                return None
            stop = outcome.over or outcome.held
            assert stop is not None
            if outcome.over is not None or loop.time() >= give_up:
                return OverBudgetStep(kind="over_budget", **stop.model_dump())
            # Jittered, so steps held together do not all ask again at the same moment.
            await asyncio.sleep(poll * random.uniform(0.5, 1.0))
            poll = min(_MAX_POLL_SECONDS, poll * 1.5)


@asynccontextmanager
async def reserved(
    services: StepServices, inp: ModelStepInput, ref: SessionRef
) -> AsyncIterator[None]:
    """Release the step's reservation when the block fails: no reply is recorded to settle
    it, and another step should not wait for the lease to end."""
    try:
        yield
    except BaseException:
        if services.app.token_budgets.bounded():
            await services.sessions.release_tokens(ref.key, inp.model_event_id)
        raise
