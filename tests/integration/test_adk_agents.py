"""ADK agents as written, on Temporal through a real worker (issues 28 and 32): escalation
in a loop, a parallel branch failure that stops its sibling, transfer targets, and the
conversation staying with the agent transferred to.

Ports of ADK-Go ``loopagent/agent_test.go`` ``TestNewLoopAgent``,
``parallelagent/agent_test.go`` ``TestNewParallelAgent`` ("agent returns error"),
``internal/llminternal/agent_transfer_test.go`` and ADK-Python
``tests/unittests/flows/llm_flows/test_agent_transfer.py`` ``test_auto_to_auto``; the
in-process versions are in ``tests/flow``.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from google.genai import types
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey

from ..adk_models import call, queue_registry
from ..adk_scenarios import (
    OPTIONS,
    QUEUE_MODEL,
    escalating_loop,
    example_function,
    expected_run_config,
    failing_fan,
    run_config_reader,
)
from .conftest import Runtime, WorkerFactory

pytestmark = pytest.mark.integration

APP = "adk"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _events(rt: Runtime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


async def test_an_escalating_agent_sums_up_then_the_loop_stops(run_worker: WorkerFactory) -> None:
    """custom_agent_0 escalates, makes its summarising call, and the loop stops there:
    custom_agent_1 never runs, no second pass."""
    models, model = queue_registry(QUEUE_MODEL, [call("example_function"), "hello 0"])
    loop = escalating_loop(example_function)
    session_id = _session()
    async with run_worker([loop], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "test_agent", "user input")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "hello 0")
    assert {e.author for e in events} == {"user", "custom_agent_0"}
    assert len(model.requests) == 2


async def test_a_failing_branch_stops_its_sibling_on_temporal(run_worker: WorkerFactory) -> None:
    """failing's model answers with an error while busy waits in a tool that only a
    cancellation ends: the tool activity is cancelled, busy calls its model no more, and
    its first tick is stored."""
    fan = failing_fan(raises=False)
    session_id = _session()
    async with run_worker([fan.agent], models=fan.models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "fan", "go", max_steps=25)
        async with asyncio.timeout(60):  # before: busy never ends
            result = await handle.result()
        events = await _events(rt, session_id)
    assert (result.status, result.error) == ("failed", "blocked by the safety filter")
    assert fan.busy_calls == 2
    ticks = [r.response for e in events for r in e.function_responses() if r.name == "tick"]
    assert ticks == [{"ticks": 1}]


async def test_the_next_message_stays_with_the_agent_transferred_to(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """root transfers to sub_agent_1 (offered as the enum's only target); the next message
    started at the root goes to sub_agent_1 at once, and the run says so."""
    sub = Agent("sub_agent_1", QUEUE_MODEL)
    root = Agent("root_agent", QUEUE_MODEL, sub_agents=[sub])
    replies: list[str | types.FunctionCall] = [
        call("transfer_to_agent", agent_name="sub_agent_1"),
        "response1",
        "response2",
    ]
    models, model = queue_registry(QUEUE_MODEL, replies)
    session_id = _session()
    async with run_worker([root], models=models) as rt:
        await (await rt.adk.start(APP, USER, session_id, "root_agent", "test1")).result()
        second = await rt.adk.start(APP, USER, session_id, "root_agent", "test2")
        result = await second.result()
        status = await second.status()
        events = await _events(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "response2")
    assert status.agent == "sub_agent_1"
    assert [e.author for e in events][-2:] == ["user", "sub_agent_1"]
    [declaration] = [d for d in model.requests[0].tools if d.name == "transfer_to_agent"]
    assert declaration.parameters_json_schema["properties"]["agent_name"]["enum"] == [  # type: ignore[index]
        "sub_agent_1"
    ]
    assert "sub_agent_1" in (model.requests[0].system_instruction or "")
    assert len(model.requests) == 3
    # The Temporal UI lists the run under the agent that answered.
    query = f"WorkflowId = '{second.workflow_id}' AND AdkAgent = 'sub_agent_1'"
    async with asyncio.timeout(10):
        while not [w async for w in temporal_client.list_workflows(query)]:
            await asyncio.sleep(0.1)


async def test_steps_on_a_worker_see_the_invocation_options(run_worker: WorkerFactory) -> None:
    """The options travel in the step inputs: the model step's callback and the tool
    activity see max_steps=7, the token budget and the tool timeout."""
    agent, models, seen = run_config_reader()
    async with run_worker([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, _session(), "reader", "go", **OPTIONS)
        assert (await handle.result()).status == "completed"
    assert seen == expected_run_config(OPTIONS)
