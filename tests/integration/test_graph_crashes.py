"""Graph workflows survive their workers: a node whose worker is SIGKILLed runs again once,
finished nodes never; a pause in one branch of a join is answered after a restart."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.run_config import RunConfig
from adk_temporal.sessions import SqliteSessionService
from tests.graphs.crash_app import KILL_ENV, LEDGER_ENV, runs

from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

# A node step whose worker died is retried once its heartbeat is missed; keep it short.
TIMEOUTS = RunConfig(tool_timeout_seconds=30.0, heartbeat_seconds=2.0)


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory on the session's dev server."""
    return Deployment(dev_server.address, f"graph-{uuid.uuid4().hex[:8]}", tmp_path / "data")


def _env(ledger: Path, kill: str | None = None) -> dict[str, str]:
    return {LEDGER_ENV: str(ledger), **({KILL_ENV: kill} if kill else {})}


async def _event_ids(deployment: Deployment, session_id: str, app: str) -> list[str]:
    from adk_temporal.ids import SessionKey

    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    try:
        session = await sessions.get(SessionKey(app, "u", session_id))
        return [e.id for e in session.events]
    finally:
        await sessions.close()


async def test_worker_killed_inside_a_node_reruns_only_that_node(
    temporal_client: Client, deployment: Deployment, tmp_path: Path
) -> None:
    """Worker A dies inside ``risky``; worker B runs ``risky`` again once, and ``first``,
    which had finished, never again; no event is stored twice."""
    ledger = tmp_path / "ledger"
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    app = "tests.graphs.crash_app:three_steps"
    with worker_process(deployment, app=app, env=_env(ledger, kill="risky")) as doomed:
        handle = await adk.start("app", "u", "s-crash", "three_steps", "go", config=TIMEOUTS)
        assert died_by_sigkill(doomed)
    assert runs(ledger) == ["first"]
    with worker_process(deployment, app=app, env=_env(ledger)):
        result = await handle.result()
    assert result.status == "completed"
    assert result.final_text == "abc"
    assert runs(ledger) == ["first", "risky", "last"]
    ids = await _event_ids(deployment, "s-crash", "app")
    assert len(ids) == len(set(ids)) == 4  # the message and one output per node


async def test_pause_in_a_branch_is_answered_after_a_restart(
    temporal_client: Client, deployment: Deployment, tmp_path: Path
) -> None:
    """One branch pauses while the other finishes; the only worker dies during the pause;
    the answer, given to a new worker, completes the join and nothing ran twice."""
    ledger = tmp_path / "ledger"
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    app = "tests.graphs.crash_app:pausing"
    with worker_process(deployment, app=app, env=_env(ledger)) as first:
        handle = await adk.start("app", "u", "s-pause", "pausing", "go", config=TIMEOUTS)
        await handle.wait_for_status("awaiting_input", timeout=60)
        first.send_signal(signal.SIGKILL)
        assert died_by_sigkill(first)
    with worker_process(deployment, app=app, env=_env(ledger)):
        [request] = await handle.pending()
        assert request.id == "q-approve"
        await handle.resume("q-approve", {"result": True})
        result = await handle.result()
    assert result.status == "completed"
    assert result.final_text == "approved=True computed=42"
    assert sorted(runs(ledger)) == ["approve", "compute", "finish", "split"]
