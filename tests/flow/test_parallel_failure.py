"""A parallel branch that fails stops its siblings at once (issue 28), in process.

Ported from ADK-Go ``agent/workflowagents/parallelagent/agent_test.go``
(``TestNewParallelAgent`` "agent returns error", ``TestParallelAgent_PropagatesContextError``):
the first branch error cancels the other branches' context, so they make no further model
calls, and the parallel agent ends with that error. What a stopped branch had already
produced stays stored.
"""

from __future__ import annotations

import asyncio
import uuid

from adk_temporal.events import Event
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ids import SessionKey

from ..adk_scenarios import FailingFan, failing_fan
from .conftest import LocalFactory

APP = "parallel"
USER = "u-1"


async def _run(run_local: LocalFactory, fan: FailingFan) -> tuple[InvocationResult, list[Event]]:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([fan.agent], models=fan.models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "fan", "go", max_steps=25)
        async with asyncio.timeout(30):  # before: busy never ends
            result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    return result, session.events


def ticks_stored(events: list[Event]) -> list[object]:
    """The tick responses the session holds."""
    return [r.response for e in events for r in e.function_responses() if r.name == "tick"]


async def test_an_error_reply_in_one_branch_stops_the_other(run_local: LocalFactory) -> None:
    """failing's model answers with an error while busy waits in a tool that never
    returns: busy is stopped, the invocation fails with failing's error, and busy's first
    tick, which had returned, is stored."""
    fan = failing_fan(raises=False)
    result, events = await _run(run_local, fan)
    assert result.status == "failed"
    assert result.error == "blocked by the safety filter"
    assert fan.busy_calls == 2
    assert ticks_stored(events) == [{"ticks": 1}]
    assert [e.error_code for e in events if e.error_code] == ["SAFETY"]


async def test_a_branch_that_fails_for_good_stops_the_other(run_local: LocalFactory) -> None:
    """failing's model raises an error no retry helps: busy is stopped the same way, and
    the invocation fails with the step failure, recorded last."""
    fan = failing_fan(raises=True)
    result, events = await _run(run_local, fan)
    assert result.status == "failed"
    assert "HTTP 403: bad key" in (result.error or "")
    assert fan.busy_calls == 2
    assert ticks_stored(events) == [{"ticks": 1}]
    assert events[-1].error_code == "ModelRequestError"
