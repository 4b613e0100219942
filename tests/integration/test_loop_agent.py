"""LoopAgent on Temporal: limits, escalation, a worker restart and continue-as-new mid-loop."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client

from adk_temporal.client import InvocationHandle
from adk_temporal.ids import SessionKey

from ..multi_agents import multi_agent_app
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

APP = "multi"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _runs(client: Client, workflow_id: str) -> int:
    return len([wf async for wf in client.list_workflows(f"WorkflowId = '{workflow_id}'")])


async def _approve_next(handle: InvocationHandle, answered: set[str]) -> None:
    """Approve the first request not answered yet, once the invocation lists it."""
    async with asyncio.timeout(30):
        while not (fresh := [r for r in await handle.pending() if r.id not in answered]):
            await asyncio.sleep(0.1)
    answered.add(fresh[0].id)
    await handle.confirm(fresh[0].id, True)


async def test_loop_agent_limit_and_escalation_on_temporal(run_worker: WorkerFactory) -> None:
    """ticking stops after three passes; editing's loop stops at the judge's escalation and
    the sequence around it goes on to the summarizer."""
    agents, models = multi_agent_app()
    ticks, edits = _session(), _session()
    async with run_worker(agents, models=models) as rt:
        ticking = await (await rt.adk.start(APP, USER, ticks, "ticking", "tick")).result()
        editing = await (await rt.adk.start(APP, USER, edits, "editing", "polish")).result()
        tick_state = await rt.sessions.get_state(SessionKey(APP, USER, ticks))
        edit_state = await rt.sessions.get_state(SessionKey(APP, USER, edits))
    assert (ticking.status, ticking.final_text, ticking.steps) == ("completed", "tick 3", 6)
    assert tick_state["passes"] == 3
    assert editing.status == "completed"
    assert editing.final_text == "summary: polished twice, judged good"
    assert edit_state["passes"] == 2


async def test_loop_agent_survives_a_worker_restart_and_continues_as_new_mid_loop(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """Each pass of stamping waits for approval. The worker stops during the first pause,
    a new one takes over; the run hands over to fresh runs inside the loop (a 4-event
    limit) and still stamps exactly twice, storing no event twice."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_worker(agents, models=models) as first:
        handle = await first.adk.start(
            APP, USER, session_id, "stamping", "stamp it", continue_as_new_after_events=4
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
    async with run_worker(agents, models=models, task_queue=first.task_queue) as rt:
        answered: set[str] = set()
        await _approve_next(handle, answered)
        await _approve_next(handle, answered)
        result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
        async with asyncio.timeout(10):
            while (runs := await _runs(temporal_client, handle.workflow_id)) < 2:
                await asyncio.sleep(0.1)
    assert result.status == "completed"
    assert result.final_text == "stamped 2"
    assert session.state["stamps"] == 2
    assert runs >= 2
    ids = [e.id for e in session.events]
    assert len(ids) == len(set(ids))
    stamped = [
        r.response for e in session.events for r in e.function_responses() if r.name == "stamp"
    ]
    assert [r for r in stamped if r and "stamps" in r] == [{"stamps": 1}, {"stamps": 2}]
