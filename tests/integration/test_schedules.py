"""Schedules on the dev server: recurring invocations, pause and trigger, overlap, a
scheduled run waiting for approval, and a shared session that is busy."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from temporalio.client import (
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleSpec,
    ScheduleState,
    WorkflowExecution,
)

from adk_temporal.errors import BudgetExceededError
from adk_temporal.schedules import (
    AgentSchedule,
    InvalidScheduleError,
    ScheduleExistsError,
    ScheduleNotFoundError,
    Schedules,
)
from adk_temporal.visibility import run_status
from adk_temporal.workflows.fire import FIRE_WORKFLOW, FireInput, firing_session_id
from adk_temporal.workflows.messages import ADK_SESSION

from ..texting_app import calls, open_gate
from .conftest import Runtime

pytestmark = pytest.mark.integration

USER = "u-sched"


@pytest.fixture
async def schedules(texting_rt: Runtime) -> AsyncIterator[Schedules]:
    """The schedules of the worker's task queue; those a test made are deleted after it."""
    made = Schedules(texting_rt.adk)
    yield made
    for view in await made.list():
        if view.schedule.user_id == USER:
            await made.delete(view.schedule.schedule_id)


def _schedule(sid: str, app: str, agent: str, message: str, **more: Any) -> AgentSchedule:
    """A schedule of the test user's."""
    return AgentSchedule(
        schedule_id=sid, app_name=app, user_id=USER, agent=agent, message=message, **more
    )


def _id() -> str:
    return f"sch-{uuid.uuid4().hex[:8]}"


async def _invocations(schedules: Schedules, schedule_id: str) -> list[WorkflowExecution]:
    return (await schedules.invocations(schedule_id, page_size=100)).executions


async def _until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 120.0) -> None:
    """Poll ``check`` until it holds (visibility and schedules lag a little)."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.25)
    assert await check(), what


async def test_a_schedule_fires_invocations_that_complete_pause_stops_trigger_fires_one(
    texting_rt: Runtime, schedules: Schedules
) -> None:
    """Every two seconds a firing runs the message in a session of its own; each invocation
    completes. Paused, it fires no more; a trigger fires exactly one."""
    sid = _id()
    schedule = _schedule(
        sid,
        "weather",
        "weather_agent",
        "What's the weather in Hangzhou?",
        every=timedelta(seconds=2),
    )
    created = await schedules.create(schedule)
    assert created.schedule.every == timedelta(seconds=2) and not created.paused

    async def two_completed() -> bool:
        runs = await _invocations(schedules, sid)
        return sum(run_status(r) == "completed" for r in runs) >= 2

    await _until(two_completed, "two scheduled invocations completed")
    runs = await _invocations(schedules, sid)
    sessions = {r.typed_search_attributes.get(ADK_SESSION) for r in runs}
    assert len(sessions) == len(runs)
    assert all(s and s.startswith(f"{sid}-") for s in sessions)
    await schedules.pause(sid, "quiet please")
    paused = await schedules.describe(sid)
    assert paused.paused and paused.note == "quiet please"
    fired = paused.fired
    # Three periods pass with the schedule paused: a firing would be due in each.
    resume_at = time.monotonic() + 3 * 2.0
    while time.monotonic() < resume_at:
        await asyncio.sleep(0.25)
    assert (await schedules.describe(sid)).fired == fired
    await schedules.trigger(sid)

    async def one_more() -> bool:
        view = await schedules.describe(sid)
        runs = await _invocations(schedules, sid)
        return view.fired == fired + 1 and len(runs) == fired + 1 and not view.running

    await _until(one_more, "the trigger fired one invocation, and only one")
    assert all(run_status(r) == "completed" for r in await _invocations(schedules, sid))


async def test_overlap_skip_never_runs_two_at_once(
    texting_rt: Runtime, schedules: Schedules, gates: Path
) -> None:
    """With overlap ``skip`` a firing due while the previous invocation still runs (in a
    slow tool) is skipped: never two invocations of the schedule at once."""
    sid = _id()
    await schedules.create(
        _schedule(sid, "texting", "tasker", "task slow", every=timedelta(seconds=1))
    )

    async def skipped_twice() -> bool:
        return (await schedules.describe(sid)).skipped_for_overlap >= 2

    await _until(skipped_twice, "firings were skipped while one ran")
    running = [r for r in await _invocations(schedules, sid) if run_status(r) == "running"]
    assert len(running) == 1
    assert calls(gates).count(("slow_step", "slow")) == 1
    await schedules.pause(sid)
    open_gate(gates, "slow")

    async def finished() -> bool:
        view = await schedules.describe(sid)
        runs = await _invocations(schedules, sid)
        return not view.running and all(run_status(r) == "completed" for r in runs)

    await _until(finished, "the running invocation completed")


async def test_a_scheduled_run_waiting_for_approval_is_pending_with_its_schedule(
    texting_rt: Runtime, schedules: Schedules
) -> None:
    """A scheduled invocation that asks for approval waits like any other; the waiting list
    names its schedule; approved, it completes."""
    sid = _id()
    await schedules.create(
        _schedule(
            sid,
            "weather",
            "weather_agent",
            "Buy a weather report for Oslo",
            cron=["0 0 1 1 *"],
            paused=True,
            note="run by hand",
        )
    )
    await schedules.trigger(sid)

    async def waiting() -> bool:
        runs, _ = await texting_rt.adk.waiting_page(task_queue=texting_rt.task_queue)
        return any(p.schedule_id == sid for _, p in runs)

    await _until(waiting, "the scheduled run is listed as waiting")
    runs, _ = await texting_rt.adk.waiting_page(task_queue=texting_rt.task_queue)
    [(workflow_id, published)] = [(w, p) for w, p in runs if p.schedule_id == sid]
    [request] = published.requests
    assert request.kind == "confirmation"
    handle = texting_rt.adk.handle(workflow_id)
    await handle.confirm(request.id, True)
    assert (await handle.result()).status == "completed"
    view = await schedules.describe(sid)
    assert view.schedule.cron == ["0 0 1 1 *"] and view.paused and view.note == "run by hand"


async def test_a_busy_shared_session_takes_the_firing_by_its_double_texting_policy(
    texting_rt: Runtime, schedules: Schedules, gates: Path
) -> None:
    """A schedule with one long session fires while a user's invocation runs there: under
    ``enqueue`` its message waits in the session's queue and runs next, listed under the
    schedule."""
    sid, session = _id(), f"s-{uuid.uuid4().hex[:8]}"
    user = await texting_rt.adk.start("texting", USER, session, "tasker", "task one")
    while ("slow_step", "one") not in calls(gates):
        await asyncio.sleep(0.05)
    await schedules.create(
        _schedule(
            sid,
            "texting",
            "tasker",
            "task nightly",
            cron=["0 0 1 1 *"],
            sessions="shared",
            session_id=session,
            double_texting="enqueue",
        )
    )
    await schedules.trigger(sid)

    async def queued() -> bool:
        return [q.schedule_id for q in await user.queued()] == [sid]

    await _until(queued, "the firing's message waits in the session's queue")
    open_gate(gates, "one")
    open_gate(gates, "nightly")
    assert (await user.result()).final_text == "marked one done one"

    async def ran() -> bool:
        runs = await _invocations(schedules, sid)
        return [run_status(r) for r in runs] == ["completed"]

    await _until(ran, "the scheduled invocation ran in the shared session")
    assert ("slow_step", "nightly") in calls(gates)
    [run] = await _invocations(schedules, sid)
    assert run.typed_search_attributes.get(ADK_SESSION) == session


async def test_a_backfill_fires_once_per_time_due_each_in_the_session_named_for_it(
    texting_rt: Runtime, schedules: Schedules
) -> None:
    """A paused every-minute schedule backfilled over three past minutes fires three times,
    each invocation in the session named after its scheduled minute."""
    sid = _id()
    await schedules.create(
        _schedule(
            sid, "weather", "weather_agent", "What's the weather in Oslo?", cron=["* * * * *"],
            paused=True,
        )
    )  # fmt: skip
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)
    await schedules.backfill(
        sid, start, start + timedelta(minutes=2, seconds=30), overlap="allow_all"
    )

    async def three_completed() -> bool:
        runs = await _invocations(schedules, sid)
        return len(runs) == 3 and all(run_status(r) == "completed" for r in runs)

    await _until(three_completed, "the backfill's three invocations completed")
    sessions = {
        r.typed_search_attributes.get(ADK_SESSION) for r in await _invocations(schedules, sid)
    }
    due = [start + timedelta(minutes=n) for n in range(3)]
    assert sessions == {firing_session_id(sid, at) for at in due}


async def test_what_temporal_cannot_read_is_refused_naming_it(schedules: Schedules) -> None:
    """A cron expression or time zone Temporal cannot parse, a duplicate id, a message over
    its budget: each a typed error, and nothing is created."""
    sid = _id()
    with pytest.raises(InvalidScheduleError, match="Temporal refused"):
        await schedules.create(_schedule(sid, "weather", "weather_agent", "hi", cron=["nope"]))
    with pytest.raises(InvalidScheduleError, match="Temporal refused"):
        await schedules.create(
            _schedule(sid, "weather", "weather_agent", "hi", cron=["0 6 * * *"], time_zone="Mars/X")
        )
    with pytest.raises(BudgetExceededError, match="message_bytes"):
        await schedules.create(
            _schedule(sid, "weather", "weather_agent", "x" * 300_000, every=timedelta(hours=1))
        )
    with pytest.raises(ScheduleNotFoundError):
        await schedules.describe(sid)
    await schedules.create(_schedule(sid, "weather", "weather_agent", "hi", cron=["0 6 * * *"]))
    with pytest.raises(ScheduleExistsError, match=sid):
        await schedules.create(_schedule(sid, "weather", "weather_agent", "hi", cron=["0 6 * * *"]))


async def test_a_firing_schedule_made_by_hand_is_described_from_what_it_holds(
    texting_rt: Runtime, schedules: Schedules
) -> None:
    """A schedule of ``adk_schedule_fire`` made with Temporal's own client (no description
    in its memo) is listed and described from its firing input and Temporal's spec."""
    sid = _id()
    fire = FireInput(
        schedule_id=sid, app_name="weather", user_id=USER, agent_name="weather_agent",
        message=types.Content(role="user", parts=[types.Part(text="by hand")]),
    )  # fmt: skip
    await texting_rt.client.create_schedule(
        sid,
        Schedule(
            action=ScheduleActionStartWorkflow(
                FIRE_WORKFLOW, fire, id=f"adk-schedule/{sid}", task_queue=texting_rt.task_queue
            ),
            spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=3))]),
            state=ScheduleState(paused=True),
        ),
    )
    view = await schedules.describe(sid)
    assert (view.schedule.message, view.schedule.every, view.paused) == (
        "by hand",
        timedelta(hours=3),
        True,
    )
    await schedules.delete(sid)
