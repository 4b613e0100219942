"""Approval policies across a worker SIGKILLed at the worst moments: between two votes of a
quorum, and between a standing grant's recording and the next call it covers."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.answers import Accepted, AnswerDesk, Refused
from adk_temporal.audit import audit_entries
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey
from adk_temporal.run_config import RunConfig
from adk_temporal.sessions import SqliteSessionService

from ..approvals_app import AGENT, APP, EFFECTS_ENV, USER, effects
from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

WORKER_APP = "tests.approvals_app:app"
# A step whose worker died is retried once its start-to-close timeout passes; keep it short.
TIMEOUTS = RunConfig(model_timeout_seconds=4.0, tool_timeout_seconds=4.0)


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory on the session's dev server."""
    return Deployment(dev_server.address, f"approval-crash-{uuid.uuid4().hex[:8]}", tmp_path)


def _env(deployment: Deployment) -> dict[str, str]:
    return {EFFECTS_ENV: str(deployment.data_dir / "effects.jsonl")}


async def _start(
    client: Client, deployment: Deployment, message: str, session: str
) -> InvocationHandle:
    adk = AdkClient(client, task_queue=deployment.task_queue)
    return await adk.start(APP, USER, session, AGENT, message, config=TIMEOUTS, started_by="carol")


async def test_a_worker_killed_between_two_votes_loses_neither(
    temporal_client: Client, deployment: Deployment
) -> None:
    """alice votes; the only worker is SIGKILLed. With no worker, the desk refuses alice's
    second vote from what the run published and leaves bob's with Temporal; a new worker
    applies bob's: the refund runs exactly once and both votes are in the audit."""
    session = f"s-{uuid.uuid4().hex[:8]}"
    with worker_process(deployment, app=WORKER_APP, env=_env(deployment)) as first:
        handle = await _start(temporal_client, deployment, "refund 44", session)
        await handle.wait_for_status("awaiting_confirmation", timeout=60)
        [request] = await handle.pending()
        await handle.confirm(request.id, True, answered_by="alice", groups=["finance"])
        first.send_signal(signal.SIGKILL)
        assert died_by_sigkill(first)
    desk = AnswerDesk(AdkClient(temporal_client, task_queue=deployment.task_queue))
    again = await desk.confirm(
        handle.workflow_id, request.id, True, answered_by="alice", groups=["finance"], wait=1
    )
    assert isinstance(again, Refused) and again.reason == "duplicate_vote"
    bob = await desk.confirm(
        handle.workflow_id, request.id, True, answered_by="bob", groups=["finance"], wait=1
    )
    assert isinstance(bob, Accepted)
    with worker_process(deployment, app=WORKER_APP, env=_env(deployment)):
        assert (await handle.result()).status == "completed"
    refunds = [e for e in effects(deployment.data_dir / "effects.jsonl") if e["tool"] == "refund"]
    assert [e["amount"] for e in refunds] == [44]
    async with SqliteSessionService(deployment.data_dir / "sessions.db") as sessions:
        stored = await sessions.get(SessionKey(APP, USER, session))
    votes = [(e.answered_by, e.decision) for e in audit_entries(stored.events) if e.vote]
    assert votes == [("alice", "approved"), ("bob", "approved")]
    assert isinstance(request, PendingConfirmation) and request.policy is not None


async def test_a_worker_killed_after_recording_a_grant_lets_the_next_call_through_once(
    temporal_client: Client, deployment: Deployment
) -> None:
    """The worker dies right after the approved credit's step recorded its grant, before the
    credit ran: the retried step records nothing twice and credits once; the next credit
    of the session, on another worker, runs unasked under the grant, once."""
    session = f"s-{uuid.uuid4().hex[:8]}"
    env = _env(deployment)
    with worker_process(deployment, "grant.after_record", app=WORKER_APP, env=env) as first:
        handle = await _start(temporal_client, deployment, "credit 20", session)
        await handle.wait_for_status("awaiting_confirmation", timeout=60)
        [request] = await handle.pending()
        terms = {"max_calls": 2, "where": "amount <= 50", "ttl": "PT2H"}
        raw = {
            "confirmation_id": request.id,
            "confirmed": True,
            "answered_by": "bob",
            "grant": terms,
        }
        await temporal_client.get_workflow_handle(handle.workflow_id).signal("adk_confirm", raw)
        assert died_by_sigkill(first)
    with worker_process(deployment, app=WORKER_APP, env=env):
        assert (await handle.result()).status == "completed"
        later = await _start(temporal_client, deployment, "credit 30", session)
        assert (await later.result()).status == "completed"
    credits = [e for e in effects(deployment.data_dir / "effects.jsonl") if e["tool"] == "credit"]
    assert [e["amount"] for e in credits] == [20, 30]
    async with SqliteSessionService(deployment.data_dir / "sessions.db") as sessions:
        [grant] = await sessions.list_grants(APP, USER, session)
        stored = await sessions.get(SessionKey(APP, USER, session))
    assert (grant.uses, grant.granted_by) == (1, "bob")
    granted = [e for e in audit_entries(stored.events) if e.decision == "granted"]
    assert [e.grant_id for e in granted] == [grant.id]
