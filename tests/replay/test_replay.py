"""Recorded histories of real runs replay against today's workflow code.

The JSON files in ``histories/`` were recorded from real runs on the dev server. Replaying
them with ``temporalio.worker.Replayer`` fails if a code change makes the workflow take a
different path for the same history, which would break every invocation in flight when the
new code is deployed. ``ADK_REGENERATE_HISTORIES=1 pytest tests/replay`` re-records them.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import InMemorySessionService

from ..integration.conftest import WorkerFactory
from ..integration.workers import Deployment, died_by_sigkill, worker_process
from ..multi_agents import multi_agent_app

HISTORIES = Path(__file__).parent / "histories"
REGENERATE = os.environ.get("ADK_REGENERATE_HISTORIES") == "1"
USER = "u-replay"


def _replayer() -> Replayer:
    # The plugin configures the replayer exactly as it configures workers: workflows,
    # data converter and sandbox pass-through.
    return Replayer(workflows=[], plugins=[AdkPlugin([], session_service=InMemorySessionService())])


def _committed() -> list[Path]:
    return sorted(HISTORIES.glob("*.json"))


@pytest.mark.skipif(REGENERATE, reason="histories are being regenerated")
@pytest.mark.parametrize("path", _committed(), ids=lambda p: p.stem)
async def test_committed_history_replays(path: Path) -> None:
    """Each committed history replays without a nondeterminism error."""
    data = json.loads(path.read_text())
    history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, f"{path.name}: {result.replay_failure}"


@pytest.mark.skipif(REGENERATE, reason="histories are being regenerated")
def test_every_scenario_has_a_committed_history() -> None:
    """The committed fixtures cover every recorded scenario."""
    names = {p.stem.split(".")[0] for p in _committed()}
    assert names == ALL_SCENARIOS


Scenario = Callable[[AdkClient, str], Awaitable[InvocationHandle]]


async def _ask(adk: AdkClient, session_id: str, message: str) -> InvocationHandle:
    return await adk.start(APP_NAME, USER, session_id, "weather_agent", message)


async def _answer_confirmation(handle: InvocationHandle, approve: bool) -> InvocationHandle:
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    await handle.confirm(request.id, approve)
    return handle


async def _weather(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _ask(adk, sid, "What's the weather in Hangzhou?")


async def _approve(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _answer_confirmation(await _ask(adk, sid, "Buy a weather report for Oslo"), True)


async def _reject(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _answer_confirmation(await _ask(adk, sid, "Buy a weather report for Rome"), False)


async def _resume_input(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await _ask(adk, sid, "Help me plan a trip")
    await handle.wait_for_status("awaiting_input", timeout=30)
    [request] = await handle.pending()
    await handle.resume(request.id, {"start": "2026-12-01", "end": "2026-12-04"})
    return handle


async def _parallel(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _ask(adk, sid, "What's the weather in Hangzhou and Beijing?")


async def _continue_as_new(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await adk.start(
        APP_NAME,
        USER,
        sid,
        "weather_agent",
        "Buy a weather report for Lima",
        continue_as_new_after_events=5,
    )
    return await _answer_confirmation(handle, True)


async def _parallel_pause(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await adk.start(MULTI_APP, USER, sid, "mixed", "go")
    return await _answer_confirmation(handle, True)


MULTI_APP = "multi"
MULTI_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    "transfer": ("coordinator", "weather please"),
    "parallel_agents": ("fanout", "write notes"),
    "parallel_pause": _parallel_pause,
    "sequential": ("pipeline", "draft"),
    "agent_tool": ("caller", "which city is rainiest?"),
}

SCENARIOS: dict[str, Scenario] = {
    "weather": _weather,
    "approve": _approve,
    "reject": _reject,
    "resume_input": _resume_input,
    "parallel": _parallel,
    "continue_as_new": _continue_as_new,
    "crash_recovered": _approve,  # recorded with a worker killed after the artifact save
}
ALL_SCENARIOS = {*SCENARIOS, *MULTI_SCENARIOS}


async def _save_runs(client: Client, name: str, workflow_id: str) -> None:
    runs = [wf.run_id async for wf in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    for index, run_id in enumerate(reversed(runs)):
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        suffix = f".run{index + 1}" if len(runs) > 1 else ""
        body = {"workflow_id": workflow_id, "history": history.to_json_dict()}
        (HISTORIES / f"{name}{suffix}.json").write_text(json.dumps(body, indent=1) + "\n")


@pytest.mark.skipif(not REGENERATE, reason="set ADK_REGENERATE_HISTORIES=1 to re-record")
async def test_regenerate_histories(
    run_worker: WorkerFactory, temporal_client: Client, dev_server: DevServer, tmp_path: Path
) -> None:
    """Re-record every scenario from real runs, then check the new files replay."""
    for old in _committed():
        old.unlink()
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        for name, scenario in SCENARIOS.items():
            if name == "crash_recovered":
                continue
            handle = await scenario(rt.adk, f"replay-{name}-{uuid.uuid4().hex[:6]}")
            await handle.result()
            await _save_runs(temporal_client, name, handle.workflow_id)
    agents, models = multi_agent_app()
    async with run_worker(agents, models=models) as rt:
        for name, spec in MULTI_SCENARIOS.items():
            sid = f"replay-{name}-{uuid.uuid4().hex[:6]}"
            if isinstance(spec, tuple):
                handle = await rt.adk.start(MULTI_APP, USER, sid, spec[0], spec[1])
            else:
                handle = await spec(rt.adk, sid)
            await handle.result()
            await _save_runs(temporal_client, name, handle.workflow_id)
    deployment = Deployment(dev_server.address, "replay-crash", tmp_path / "data")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with worker_process(deployment, "artifact.after_save") as first:
        handle = await adk.start(
            APP_NAME,
            USER,
            f"replay-crash-{uuid.uuid4().hex[:6]}",
            "weather_agent",
            "Buy a weather report for Oslo",
            tool_timeout_seconds=3,
        )
        await _answer_confirmation(handle, True)
        assert died_by_sigkill(first)
    with worker_process(deployment):
        await handle.result()
    await _save_runs(temporal_client, "crash_recovered", handle.workflow_id)
    for path in _committed():
        data = json.loads(path.read_text())
        history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
        await _replayer().replay_workflow(history)
