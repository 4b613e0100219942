"""Local steps: short steps run inside the workflow task, with the same events stored, an
approved call re-entered as an activity, and nothing lost or doubled when the worker dies
between a local step's append and the end of its task."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from adk_temporal.agents import Agent
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.dispatch import LocalSteps
from adk_temporal.events import Event
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey, app_task_queue
from adk_temporal.models import ModelRegistry, ScriptedModel
from adk_temporal.run_config import RunConfig
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.start_queues import StartQueues

from ..local_steps_app import LOCAL
from .conftest import Runtime, WorkerFactory
from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

USER = "u-local"
TWO_CITIES = "What's the weather in Hangzhou and Oslo?"
LOCAL_MARKER = "core_local_activity"


def _scheduled(history: WorkflowHistory) -> list[str]:
    """The activity types the run scheduled through the server, in order."""
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def _local(history: WorkflowHistory) -> int:
    """How many local activities the run recorded."""
    return sum(
        1
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == LOCAL_MARKER
    )


def _tasks(history: WorkflowHistory) -> int:
    """How many workflow tasks the run completed."""
    return sum(
        1 for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    )


async def _starts_on_own_queue(client: Client, task_queue: str) -> None:
    """Wait until a client of ``task_queue`` starts the app's runs on its own queue (its
    worker polls workflow tasks there; an activity poller seen first is not enough)."""
    own = app_task_queue(task_queue, APP_NAME)
    async with asyncio.timeout(60):
        while await StartQueues(client, task_queue).of(APP_NAME) != own:
            await asyncio.sleep(0.2)


async def _stored(rt: Runtime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))).events


def _shape(events: list[Event]) -> list[tuple[str, str, object]]:
    """What a user reads of stored events: who wrote what, ids and times left out."""
    return [
        (e.author, e.text(), [(c.name, c.args) for c in e.function_calls()]) for e in events
    ] + [(e.author, "", [r.response for r in e.function_responses()]) for e in events]


async def _history(client: Client, handle: InvocationHandle) -> WorkflowHistory:
    """The history of the run the handle followed to its end."""
    return await client.get_workflow_handle(
        handle.workflow_id, run_id=handle.run_id
    ).fetch_history()


async def _turn(rt: Runtime, session_id: str, message: str) -> tuple[str, WorkflowHistory]:
    handle = await rt.adk.start(APP_NAME, USER, session_id, "weather_agent", message)
    result = await handle.result()
    assert result.status == "completed", result.error
    return result.final_text, await _history(rt.client, handle)


async def test_short_steps_run_in_the_workflow_task_and_store_the_same_events(
    run_worker: WorkerFactory,
) -> None:
    """Two parallel get_weather calls and the answering model step run as local activities
    in one workflow task after the first model step; the session holds what a run without
    local steps stores, and the final answer is the same."""
    agent = build_weather_agent("scripted:weather")
    async with run_worker([agent], local_steps=LOCAL) as rt:
        local_text, history = await _turn(rt, "local", TWO_CITIES)
        local_events = await _stored(rt, "local")
    async with run_worker([agent]) as rt:
        plain_text, plain = await _turn(rt, "plain", TWO_CITIES)
        plain_events = await _stored(rt, "plain")
    assert local_text == plain_text
    assert _shape(local_events) == _shape(plain_events)
    assert _scheduled(history) == ["adk_model_step"]  # the step that describes the tree
    assert _local(history) == 3
    assert _tasks(history) == 2
    assert _scheduled(plain) == [
        "adk_model_step",
        "adk_tool_call",
        "adk_tool_call",
        "adk_model_step",
    ]
    assert _local(plain) == 0


async def test_tools_not_named_stay_activities(run_worker: WorkerFactory) -> None:
    """Without tools named, the calls are activities; the model steps after the first are
    local."""
    async with run_worker(
        [build_weather_agent("scripted:weather")], local_steps=LocalSteps()
    ) as rt:
        _, history = await _turn(rt, "models-only", "What's the weather in Lima?")
    assert _scheduled(history) == ["adk_model_step", "adk_tool_call"]
    assert _local(history) == 1


async def test_an_approved_call_re_enters_as_an_activity(run_worker: WorkerFactory) -> None:
    """A call of a tool named local asks for its approval locally; approved, it re-enters
    as an activity (a local re-entry would run again if its worker died), once."""
    local = LocalSteps(tools={"buy_weather_report"})
    async with run_worker([build_weather_agent("scripted:weather")], local_steps=local) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, "buy", "weather_agent", "Buy a weather report for Oslo"
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        history = await _history(rt.client, handle)
        events = await _stored(rt, "buy")
    assert result.status == "completed"
    assert "report.txt" in result.final_text
    # The first model step, the pause's request event, the approved call's re-entry.
    assert _scheduled(history) == ["adk_model_step", "adk_append_events", "adk_tool_call"]
    assert _local(history) == 2  # the call asking for approval, the answering model step
    purchased = [
        r.response for e in events for r in e.function_responses() if r.name == "buy_weather_report"
    ]
    assert [p.get("status") if p else None for p in purchased] == [
        "waiting for approval",
        "purchased",
    ]


async def test_worker_killed_after_a_local_steps_append_loses_and_doubles_nothing(
    temporal_client: Client, dev_server: DevServer, tmp_path: Path
) -> None:
    """Worker A dies right after the second model step (a local one) stored its reply,
    before its task ended; worker B runs the task again: the reply is found stored, so
    every event is stored once and the answer is the one an uninterrupted run gives."""
    deployment = Deployment(dev_server.address, f"local-{uuid.uuid4().hex[:8]}", tmp_path / "d")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    config = RunConfig(model_timeout_seconds=4.0, tool_timeout_seconds=4.0)
    app = "tests.local_steps_app:app"
    with worker_process(deployment, "session.after_append#2", app=app) as first:
        # Started on the app's own queue, where the worker holding the run takes its steps.
        await _starts_on_own_queue(temporal_client, deployment.task_queue)
        handle = await adk.start(
            APP_NAME, USER, "crash", "weather_agent", TWO_CITIES, config=config
        )
        assert died_by_sigkill(first, timeout=60)
    with worker_process(deployment, app=app):
        result = await handle.result()
        reference = await adk.start(
            APP_NAME, USER, "ref", "weather_agent", TWO_CITIES, config=config
        )
        expected = await reference.result()
        history = await _history(temporal_client, handle)
    assert result.status == "completed"
    assert result.final_text == expected.final_text
    assert _local(history) == 3
    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    try:
        events = (await sessions.get(SessionKey(APP_NAME, USER, "crash"))).events
    finally:
        await sessions.close()
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids))
    assert len(events) == 4  # the question, the calls, their responses, the answer


def lookup(topic: str) -> dict[str, str]:
    """Look a topic up."""
    return {"topic": topic}


async def test_a_long_chain_ends_its_workflow_task_every_twenty_local_steps(
    run_worker: WorkerFactory,
) -> None:
    """Thirty parallel calls of a local tool: no workflow task holds more than twenty local
    steps (answers sent meanwhile wait for the task's end); the calls past them are
    activities, and every call is answered."""
    calls = [types.FunctionCall(name="lookup", args={"topic": f"t{i}"}) for i in range(30)]
    models = ModelRegistry()
    models.register("scripted:fan", lambda n: ScriptedModel(name=n, script=[calls, "done"]))
    agent = Agent("fan", "scripted:fan", tools=[lookup])
    local = LocalSteps(tools={"lookup"})
    async with run_worker([agent], models=models, local_steps=local) as rt:
        handle = await rt.adk.start(APP_NAME, USER, "fan", "fan", "go")
        result = await handle.result()
        history = await _history(rt.client, handle)
        events = await _stored(rt, "fan")
    assert result.status == "completed"
    per_task: list[int] = [0]
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            per_task.append(0)
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            per_task[-1] += 1
    assert max(per_task) <= 20
    assert _scheduled(history).count("adk_tool_call") >= 10
    assert sum(len(e.function_responses()) for e in events) == 30
