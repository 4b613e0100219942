"""The crash matrix: SIGKILL a real worker process at each fault point; nothing is lost or doubled.

Each case runs the weather example in ``adk-temporal worker`` subprocesses sharing one data
directory (SQLite sessions, file artifacts) and one payments ledger. Worker A is armed with a
fault point and dies there; worker B (unarmed) takes over. The test then checks what a user
would: the card was charged once, every artifact version exists once, no event is stored
twice, and the answer is the one an uninterrupted run gives.
"""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path

import pytest
from google.genai import types
from temporalio.client import Client

from adk_temporal.artifacts import FileArtifactService, LoadRequest, VersionsRequest
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME
from adk_temporal.ids import SessionKey
from adk_temporal.run_config import RunConfig
from adk_temporal.sessions import SqliteSessionService

from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

USER = "u-1"
# A step whose worker died is retried once its start-to-close timeout passes; keep it short.
TIMEOUTS = RunConfig(model_timeout_seconds=4.0, tool_timeout_seconds=4.0)
BUY = "Buy a weather report for Hangzhou"
ASK = "What's the weather in Hangzhou?"


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory on the session's dev server."""
    return Deployment(dev_server.address, f"crash-{uuid.uuid4().hex[:8]}", tmp_path / "data")


async def _start(
    client: Client, deployment: Deployment, session_id: str, message: str, user: str = USER
) -> InvocationHandle:
    adk = AdkClient(client, task_queue=deployment.task_queue)
    return await adk.start(APP_NAME, user, session_id, "weather_agent", message, config=TIMEOUTS)


async def _approve(handle: InvocationHandle) -> None:
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    await handle.confirm(request.id, True)


async def _check_store(deployment: Deployment, session_id: str, *, bought: bool) -> list[str]:
    """Assert the stores hold each event and artifact version once; return event ids."""
    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    artifacts = FileArtifactService(deployment.data_dir / "artifacts")
    key = SessionKey(APP_NAME, USER, session_id)
    try:
        session = await sessions.get(key)
        ids = [e.id for e in session.events]
        assert len(ids) == len(set(ids)), "an event was stored twice"
        if bought:
            report = await artifacts.versions(VersionsRequest.of(key, file_name="report.txt"))
            assert report.versions == [1]
            ledger = await artifacts.load(LoadRequest.of(key, file_name="user:purchases.json"))
            assert ledger.part.inline_data is not None
            assert len(json.loads(ledger.part.inline_data.data or b"[]")) == 1
            ledger_versions = await artifacts.versions(
                VersionsRequest.of(key, file_name="user:purchases.json")
            )
            assert ledger_versions.versions == [1]
        return ids
    finally:
        await sessions.close()


async def _uninterrupted(client: Client, deployment: Deployment, message: str) -> str:
    """The final answer of the same scenario run without any fault, for another user."""
    handle = await _start(client, deployment, "ref", message, user="u-reference")
    if message == BUY:
        await _approve(handle)
    return (await handle.result()).final_text


@pytest.mark.parametrize(
    ("fault", "charge_attempts"),
    [
        # Dies before charging: the re-run charges, once.
        ("tool.before_side_effect", 1),
        # Dies after charging and saving report.txt: the re-run presents the same
        # idempotency key, so the gateway and the artifact store return what exists.
        ("artifact.after_save", 2),
    ],
)
async def test_worker_killed_inside_the_paid_tool(
    temporal_client: Client, deployment: Deployment, fault: str, charge_attempts: int
) -> None:
    """Killed inside the approved tool: charged once, report v1 once, same final answer."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    with worker_process(deployment, fault) as first:
        handle = await _start(temporal_client, deployment, session_id, BUY)
        await _approve(handle)
        assert died_by_sigkill(first)
    with worker_process(deployment):
        result = await handle.result()
        expected = await _uninterrupted(temporal_client, deployment, BUY)
    assert result.status == "completed"
    assert result.final_text == expected
    charges = deployment.payments.charges()
    keys = {c["key"] for c in charges}
    assert len(keys) == 2  # this session's purchase and the reference run's
    mine = [k for k in deployment.payments.attempts() if session_id in k]
    assert len(mine) == charge_attempts
    assert len({k for k in keys if session_id in k}) == 1
    await _check_store(deployment, session_id, bought=True)


@pytest.mark.parametrize("fault", ["session.after_append", "model.during_call"])
async def test_worker_killed_in_a_model_step(
    temporal_client: Client, deployment: Deployment, fault: str
) -> None:
    """Killed during or after the model call: one model event per step, same answer."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    with worker_process(deployment, fault) as first:
        handle = await _start(temporal_client, deployment, session_id, ASK)
        assert died_by_sigkill(first)
    with worker_process(deployment):
        result = await handle.result()
        expected = await _uninterrupted(temporal_client, deployment, ASK)
    assert result.status == "completed"
    assert result.final_text == expected
    ids = await _check_store(deployment, session_id, bought=False)
    assert len(ids) == 4  # user message, call, response, answer


async def test_worker_killed_while_waiting_for_approval(
    temporal_client: Client, deployment: Deployment
) -> None:
    """The only worker dies during the pause; a new one runs the approved tool once."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    with worker_process(deployment) as first:
        handle = await _start(temporal_client, deployment, session_id, BUY)
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        first.send_signal(signal.SIGKILL)
        assert died_by_sigkill(first)
    with worker_process(deployment):
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
    assert result.status == "completed"
    assert "report.txt" in result.final_text
    assert len([c for c in deployment.payments.charges() if session_id in c["key"]]) == 1
    await _check_store(deployment, session_id, bought=True)


async def test_worker_killed_inside_the_summarizer_leaves_one_compaction(
    temporal_client: Client, deployment: Deployment
) -> None:
    """Worker A dies inside ``adk_compact``'s model call; worker B retries the step and
    stores the compaction once: exactly one compaction event, never a half."""
    sid = f"s-{uuid.uuid4().hex[:8]}"
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    app = "tests.compaction_app:crash_app"
    with worker_process(deployment, "compaction.during_summary", app=app) as first:
        handle = await adk.start("compacting", USER, sid, "echoer", "hi", config=TIMEOUTS)
        assert died_by_sigkill(first, timeout=60)
    with worker_process(deployment, app=app):
        result = await handle.result()
    assert result.status == "completed"
    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    try:
        events = (await sessions.get(SessionKey("compacting", USER, sid))).events
    finally:
        await sessions.close()
    compactions = [e for e in events if e.actions.compaction is not None]
    assert len(compactions) == 1
    assert compactions[0].actions.compaction is not None
    assert compactions[0].actions.compaction.compacted_content.parts == [types.Part(text="SUMMARY")]
