"""An accepted answer's status and memo are published after the steps it resumes: the
workflow task the answer arrives in schedules the tool and a timer, never an upsert; the next
task (or the timer, when the tool runs long) publishes them."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any
from unittest import mock

import pytest
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowHandle

from adk_temporal import client as client_module
from adk_temporal.agents import Agent
from adk_temporal.client import InvocationHandle
from adk_temporal.context import ToolContext
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.models import ModelRegistry, ScriptedModel, ScriptedReply
from adk_temporal.workflows.messages import ADK_STATUS, Published

from .conftest import Runtime, WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-held"
APP = "held"
UPSERTS = {
    EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
    EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
}
ANSWERS = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
}
PATCH = "publish-after-resuming"
TIMER_ENDS = {EventType.EVENT_TYPE_TIMER_CANCELED, EventType.EVENT_TYPE_TIMER_FIRED}


def _tasks_after_answer(events: list[HistoryEvent]) -> list[list[HistoryEvent]]:
    """The events each workflow task wrote, from the one that took the answer on (an
    update's acceptance follows its task's completion; a signal precedes its task)."""
    answer = next(i for i, e in enumerate(events) if e.event_type in ANSWERS)
    completed = [
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    if events[answer].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        first = next(i for i in completed if i > answer)
    else:
        first = max(i for i in completed if i < answer)
    scheduled = [
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
    ]
    return [
        events[i + 1 : next((j for j in scheduled if j > i), len(events))]
        for i in completed
        if i >= first
    ]


def _types(task: list[HistoryEvent]) -> set[EventType.ValueType]:
    return {e.event_type for e in task}


async def _published_status(
    raw: WorkflowHandle[Any, Any], status: str
) -> WorkflowExecutionDescription:
    """The run's description once its ``AdkStatus`` is ``status``."""
    async with asyncio.timeout(30):
        while (described := await raw.describe()).typed_search_attributes.get(ADK_STATUS) != status:
            await asyncio.sleep(0.1)
    return described


async def _paused(rt: Runtime) -> tuple[InvocationHandle, str]:
    handle = await rt.adk.start(
        APP_NAME, USER, f"s-{uuid.uuid4().hex[:8]}", "weather_agent", "Buy a report for Oslo"
    )
    # Temporal's status, not the worker's query: the worker answers the query before Temporal
    # has recorded the pause's task, and a run answered that early under load recorded no
    # pause at all (the tool's task then had no new status or memo to publish).
    await _published_status(
        rt.adk.client.get_workflow_handle(handle.workflow_id), "awaiting_confirmation"
    )
    [request] = await handle.pending()
    return handle, request.id


@pytest.mark.parametrize("checked", [True, False], ids=["update", "signal"])
async def test_the_answers_task_resumes_the_tool_and_the_next_publishes(
    run_worker: WorkerFactory, temporal_client: Client, checked: bool
) -> None:
    """The task that takes the answer schedules the approved tool and the hold's timer and
    upserts nothing; the tool's completion task publishes ``running`` and the emptied memo,
    and cancels the timer; the run ends published ``completed`` with no request left."""
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        handle, request_id = await _paused(rt)
        await handle.confirm(request_id, True, checked=checked)
        assert (await handle.result()).status == "completed"
        raw = temporal_client.get_workflow_handle(handle.workflow_id)
        events = list((await raw.fetch_history()).events)
        described = await raw.describe()
    answered, after, *_ = _tasks_after_answer(events)
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED in _types(answered)
    assert EventType.EVENT_TYPE_TIMER_STARTED in _types(answered)
    assert not _types(answered) & UPSERTS
    assert _types(after) >= UPSERTS
    # Cancelled there, unless a loaded machine's tool outlasted it and it fired first.
    ended = [e.event_type for e in events if e.event_type in TIMER_ENDS]
    assert ended in ([EventType.EVENT_TYPE_TIMER_CANCELED], [EventType.EVENT_TYPE_TIMER_FIRED])
    assert EventType.EVENT_TYPE_MARKER_RECORDED not in {e.event_type for e in events}
    assert described.typed_search_attributes.get(ADK_STATUS) == "completed"
    assert Published.from_memo(await described.memo()).requests == []


RELEASE = asyncio.Event()
"""Set by the test once it has seen the answer published while the tool still runs."""


async def deliver(item: str, ctx: ToolContext) -> dict[str, Any]:
    """Deliver an item once approved, which takes as long as the test says.

    Args:
        item: What to deliver.
    """
    if ctx.tool_confirmation is None:
        ctx.request_confirmation(hint=f"Deliver {item}?")
        return {"status": "waiting for approval"}
    await RELEASE.wait()
    return {"status": "delivered"}


def _long_tool_agent() -> tuple[Agent, ModelRegistry]:
    models = ModelRegistry()
    script: list[ScriptedReply] = [
        types.FunctionCall(name="deliver", args={"item": "piano"}),
        "Delivered.",
    ]
    models.register("scripted:deliver", lambda name: ScriptedModel(name=name, script=script))
    return Agent("mover", "scripted:deliver", tools=[deliver]), models


async def test_a_long_tool_finds_the_answer_published_by_the_timer(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """While the approved tool still runs, the hold's timer fires and its task publishes
    ``running`` and a memo without the request: an answer is visible in listings without
    waiting for the tool (the tool waits until the test has seen it)."""
    RELEASE.clear()
    agent, models = _long_tool_agent()
    async with run_worker([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, f"s-{uuid.uuid4().hex[:8]}", "mover", "move it")
        raw = temporal_client.get_workflow_handle(handle.workflow_id)
        # Temporal's status, not the worker's query (see _paused), or the start's "running"
        # would pass for the answer's.
        await _published_status(raw, "awaiting_confirmation")
        [request] = await handle.pending()
        await handle.confirm(request.id, True, checked=False)
        described = await _published_status(raw, "running")
        memo = Published.from_memo(await described.memo())
        assert memo.requests == []
        RELEASE.set()
        assert (await handle.result()).status == "completed"
        events = list((await raw.fetch_history()).events)
    answered, *later = _tasks_after_answer(events)
    assert not _types(answered) & UPSERTS
    fired = next(
        i for i, e in enumerate(events) if e.event_type == EventType.EVENT_TYPE_TIMER_FIRED
    )
    tool_done = next(
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED and i > fired
    )
    assert fired < tool_done
    assert _types(later[0]) >= UPSERTS


async def test_a_baseline_1_run_answered_on_this_release_takes_the_hold_through_a_patch(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """A run an earlier client started (baseline 1) and answered after the upgrade asks
    ``workflow.patched``: the marker is in the answer's task, and the upserts wait."""
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        with mock.patch.object(client_module, "BASELINE", 1):
            handle, request_id = await _paused(rt)
        await handle.confirm(request_id, True)
        assert (await handle.result()).status == "completed"
        events = list(
            (await temporal_client.get_workflow_handle(handle.workflow_id).fetch_history()).events
        )
    answered, after, *_ = _tasks_after_answer(events)
    [marker] = [e for e in answered if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED]
    assert PATCH.encode() in marker.marker_recorded_event_attributes.SerializeToString()
    assert EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED not in _types(answered)
    assert EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED in _types(after)
