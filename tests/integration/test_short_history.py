"""A run this release starts records no patch markers and sends its steps short ids; the
session store still holds every id whole, and a run of an earlier client is unchanged."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ids import SessionKey, workflow_id_for
from adk_temporal.workflows.messages import InvocationInput

from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-short"


def _scheduled_inputs(history: WorkflowHistory) -> list[dict[str, Any]]:
    """Every activity input of the run, as JSON."""
    return [
        json.loads(e.activity_task_scheduled_event_attributes.input.payloads[0].data)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def _markers(history: WorkflowHistory) -> list[int]:
    """The patch markers and the search-attribute upserts Temporal pairs with them."""
    return [
        e.event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        or "TemporalChangeVersion"
        in e.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    ]


async def test_a_baseline_run_records_no_markers_and_stores_whole_ids(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """An approval across continue-as-new: short inputs in history, whole ids in the session."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        handle = await rt.adk.start(
            APP_NAME,
            USER,
            session_id,
            "weather_agent",
            "Buy a weather report for Lima",
            continue_as_new_after_events=5,
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))
        runs = [
            wf.run_id
            async for wf in temporal_client.list_workflows(f"WorkflowId = '{handle.workflow_id}'")
        ]
        histories = [
            await temporal_client.get_workflow_handle(handle.workflow_id, run_id=r).fetch_history()
            for r in runs
        ]
    assert result.status == "completed"
    assert len(histories) >= 2
    assert [_markers(h) for h in histories] == [[] for _ in histories]
    first = histories[-1]  # visibility lists the latest run first
    inputs = _scheduled_inputs(first)
    assert inputs and all("invocation_id" not in i["ref"] for i in inputs)
    # A continued run draws from a seed its steps cannot rebuild: its ids travel whole.
    later = [i for h in histories[:-1] for i in _scheduled_inputs(h)]
    assert later and all(i["ref"]["invocation_id"] == result.invocation_id for i in later)
    assert {e.invocation_id for e in session.events} == {result.invocation_id}
    for event in session.events:
        assert uuid.UUID(event.id)  # whole ids, as ADK draws them
    assert len({e.id for e in session.events}) == len(session.events)
    assert any(e.actions.requested_tool_confirmations for e in session.events)


async def test_a_run_of_an_earlier_client_asks_for_its_patches_and_sends_whole_ids(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """No baseline in the input: the run takes every change through ``workflow.patched``."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    key = SessionKey(APP_NAME, USER, session_id)
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        handle = await temporal_client.start_workflow(
            "InvocationWorkflow",
            InvocationInput(
                app_name=APP_NAME,
                user_id=USER,
                session_id=session_id,
                agent_name="weather_agent",
                message=types.Content(
                    role="user", parts=[types.Part(text="What's the weather in Hangzhou?")]
                ),
            ),
            id=workflow_id_for(key),
            task_queue=rt.task_queue,
            result_type=InvocationResult,
        )
        result = await handle.result()
        history = await handle.fetch_history()
        session = await rt.sessions.get(key)
    assert result.status == "completed"
    assert _markers(history), "an earlier client's run records the patches it takes"
    inputs = _scheduled_inputs(history)
    assert all(i["ref"]["invocation_id"] == result.invocation_id for i in inputs)
    assert {e.invocation_id for e in session.events} == {result.invocation_id}
