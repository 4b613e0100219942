"""Long invocations continue as new, carrying ids, counters and open requests only."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from google.genai import types
from temporalio.client import Client

from adk_temporal.artifacts import VersionsRequest
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedModel

from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _run_ids(client: Client, workflow_id: str, at_least: int = 1) -> list[str]:
    """The workflow's runs, polled until visibility lists ``at_least`` of them."""
    query = f"WorkflowId = '{workflow_id}'"
    async with asyncio.timeout(10):
        while True:
            runs = [wf.run_id async for wf in client.list_workflows(query)]
            if len(runs) >= at_least:
                return runs
            await asyncio.sleep(0.1)


async def test_long_invocation_continues_as_new_and_finishes_every_step(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """Six tool steps under a 20-event limit span several runs and lose no step."""
    cities = ["Hangzhou", "Paris", "Oslo", "Lima", "Rome", "Cairo"]
    script = [types.FunctionCall(name="get_weather", args={"city": c}) for c in cities]
    models = ModelRegistry()
    models.register(
        "scripted:long",
        lambda name: ScriptedModel(name=name, script=[*script, "Done with all cities."]),
    )
    session_id = _session()
    async with run_worker([build_weather_agent("scripted:long")], models=models) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "tour", continue_as_new_after_events=20
        )
        result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))
        runs = await _run_ids(temporal_client, handle.workflow_id, at_least=3)
    assert result.status == "completed"
    assert result.final_text == "Done with all cities."
    assert result.steps == 7
    assert len(runs) >= 3
    responses = [r.response for e in session.events for r in e.function_responses()]
    assert [r["city"] for r in responses] == cities  # type: ignore[index]
    assert len({e.id for e in session.events}) == len(session.events)
    assert session.state["last_city"] == "Cairo"
    invocation_ids = {e.invocation_id for e in session.events}
    assert invocation_ids == {result.invocation_id}


async def test_pause_survives_continue_as_new_with_the_same_confirmation_id(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """A run paused for approval continues as new; the same id approves it in the new run."""
    session_id = _session()
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        handle = await rt.adk.start(
            APP_NAME,
            USER,
            session_id,
            "weather_agent",
            "Buy a weather report for Hangzhou",
            continue_as_new_after_events=5,
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        runs = await _run_ids(temporal_client, handle.workflow_id, at_least=2)
        [request] = await handle.pending()
        assert len(runs) == 2
        await handle.confirm(request.id, True)
        result = await handle.result()
        versions = await rt.artifacts.versions(
            VersionsRequest(
                app_name=APP_NAME, user_id=USER, session_id=session_id, file_name="report.txt"
            )
        )
    assert result.status == "completed"
    assert "report.txt" in result.final_text
    assert versions.versions == [1]
