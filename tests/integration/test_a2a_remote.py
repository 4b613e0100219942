"""Our remote-agent client (``RemoteA2aAgent``) against an a2a-sdk server that is not ours
and against our own (SPEC §1.14, issue 45): a remote task's question pauses our invocation
with the original call id, reaches the top caller, and the answer goes back on the same
remote task; both tasks complete once, also when our worker restarts in between."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from a2a.types import GetTaskRequest, TaskState

from adk_temporal.a2a.routes import user_of
from adk_temporal.a2a.wire import asked_requests
from adk_temporal.confirmation import call_digest
from adk_temporal.devserver import DevServer
from adk_temporal.errors import ConfirmationMismatchError
from adk_temporal.flow.messages import PendingConfirmation, PendingInput
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.web.auth import TokenBook

from .. import a2a_apps
from ..a2a_sample import booking_server
from .a2a import (
    A2A_TOKEN,
    TOKENS,
    a2a_client,
    app_env,
    approval,
    last_task,
    message,
    payments,
    send,
)
from .conftest import WorkerFactory
from .gateway import gateway_process
from .workers import Deployment, died_by_sigkill, worker_process

FAR = "tests.a2a_apps:far_app"
NEAR = "tests.a2a_apps:near_app"


async def test_a_sample_servers_question_reaches_the_top_caller_and_its_answer_books_once(
    run_worker: WorkerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The near agent asks an a2a-sdk sample agent through an agent tool; the sample task's
    input-required pauses our invocation with an input request carrying its question and
    the agent tool's call id; the worker stops, the answer is left with Temporal, a new
    worker sends it on the same remote task: the table is booked once and both tasks end."""
    monkeypatch.setenv(a2a_apps.FAR_TOKEN_ENV, "unused-by-the-sample")
    async with booking_server() as (card_url, booking):
        monkeypatch.setenv(a2a_apps.FAR_ENV, card_url)
        near = a2a_apps.near_app()
        queue = f"tq-{uuid.uuid4().hex[:12]}"
        sessions = SqliteSessionService(tmp_path / "near.db")
        ids = SessionKey(near.name or "", "u-1", f"s-{uuid.uuid4().hex[:8]}")
        settings = {"models": near.models, "sessions": sessions}
        async with run_worker(near.agents, task_queue=queue, **settings) as rt:
            handle = await rt.adk.start(*ids, "assistant", "desk: book a table")
            await handle.wait_for_status("awaiting_input", timeout=60)
            [asked] = await handle.pending()
            session = await rt.sessions.get(ids)
        desk_call = next(c for e in session.events for c in e.function_calls() if c.name == "desk")
        assert isinstance(asked, PendingInput)
        assert asked.message == "For how many people?"
        assert asked.function_call_id == desk_call.id
        await handle.resume(asked.id, "4", checked=False)
        async with run_worker(near.agents, task_queue=queue, **settings):
            result = await handle.result()
    assert result.status == "completed"
    assert result.final_text == "The desk says: Booked a table for 4."
    [(task_id, first), (same_task, answer)] = booking.runs
    assert (same_task, first, answer) == (task_id, "book a table", "4")
    assert booking.completed == [task_id]


@pytest.fixture
def far(dev_server: DevServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Deployment:
    """The far app's deployment: its own task queue and data."""
    monkeypatch.setenv("ADK_WEB_TOKENS", TOKENS)
    data = tmp_path / "far"
    for name, value in app_env(Deployment("", "", data)).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "far-gateway").mkdir()
    data.mkdir()
    return Deployment(dev_server.address, f"far-{uuid.uuid4().hex[:8]}", data)


async def test_a_far_approval_is_answered_by_whoever_talks_to_the_near_agent(
    far: Deployment, dev_server: DevServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two adk-temporal apps over A2A: the near agent asks the far agent to pay; the far
    confirmation pauses the near task with the same call (name, arguments, original call id
    and digest) for the near task's A2A client; the near worker is killed and restarted; the
    client's approval on the near task reaches the far task: paid once, both tasks done."""
    near = Deployment(dev_server.address, f"near-{uuid.uuid4().hex[:8]}", tmp_path / "near")
    near.data_dir.mkdir()
    (tmp_path / "near-gateway").mkdir()
    with (
        gateway_process(far, tmp_path / "far-gateway", app=FAR, args=["--a2a"]) as far_gateway,
        worker_process(far, app=FAR),
    ):
        monkeypatch.setenv(
            a2a_apps.FAR_ENV, f"{far_gateway.base}/a2a/payments/.well-known/agent-card.json"
        )
        monkeypatch.setenv(a2a_apps.FAR_TOKEN_ENV, A2A_TOKEN)
        with gateway_process(near, tmp_path / "near-gateway", app=NEAR, args=["--a2a"]) as gw:
            with worker_process(near, app=NEAR) as near_worker:
                async with a2a_client(gw.base, "assistant", streaming=False) as client:
                    paused = last_task(await send(client, message(text="desk: pay 5")))
                near_worker.kill()
                assert died_by_sigkill(near_worker)
            with worker_process(near, app=NEAR):
                async with a2a_client(gw.base, "assistant") as client:
                    on_task = {"task_id": paused.id, "context_id": paused.context_id}
                    streamed = await send(client, message(approval(paused), **on_task))
                    done = await client.get_task(GetTaskRequest(id=paused.id))
    assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [request] = asked_requests(paused.status.message.parts)
    assert (request.kind, request.tool, request.args) == ("confirmation", "pay", {"amount": 5})
    assert request.call_digest == call_digest("pay", {"amount": 5})
    assert request.hint == "Please approve or reject the tool call pay()."
    [paid] = payments(far)
    assert paid.split() == [request.function_call_id, "5"]
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in done.artifacts for p in a.parts] == ["The desk says: Paid 5."]
    whole = [r.artifact_update.artifact for r in streamed if r.artifact_update.last_chunk]
    assert [a.parts[0].text for a in whole] == ["The desk says: Paid 5."]
    assert streamed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    far_sessions = SqliteSessionService(far.data_dir / "sessions.db")
    user = user_of(TokenBook().principal(A2A_TOKEN))
    [listed] = await far_sessions.list(a2a_apps.FAR_APP, user)
    far_session = await far_sessions.get(SessionKey(a2a_apps.FAR_APP, user, listed.id))
    replies = [e.text() for e in far_session.events if e.author == "payments" and e.text()]
    assert replies == ["Paid 5."]


async def test_a_relayed_confirmation_is_bound_to_the_far_call_on_both_sides(
    run_worker: WorkerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A far task asking approval the way adk-temporal asks pauses our invocation with a
    confirmation of the far call itself (its name, arguments and original call id); an
    approval of another digest is refused here and reaches nobody; the right one goes back
    with the far digest and the far side pays once."""
    monkeypatch.setenv(a2a_apps.FAR_TOKEN_ENV, "unused-by-the-sample")
    async with booking_server() as (card_url, booking):
        monkeypatch.setenv(a2a_apps.FAR_ENV, card_url)
        near = a2a_apps.near_app()
        ids = SessionKey(near.name or "", "u-1", f"s-{uuid.uuid4().hex[:8]}")
        async with run_worker(near.agents, models=near.models) as rt:
            handle = await rt.adk.start(*ids, "assistant", "desk: pay 5")
            await handle.wait_for_status("awaiting_confirmation", timeout=60)
            [asked] = await handle.pending()
            assert isinstance(asked, PendingConfirmation)
            with pytest.raises(ConfirmationMismatchError):
                await handle.confirm(asked.id, True, call_digest="0" * 64)
            await handle.confirm(asked.id, True, call_digest=asked.call_digest)
            result = await handle.result()
    assert (asked.tool, asked.args, asked.function_call_id) == ("pay", {"amount": 5}, "far-call-1")
    assert asked.hint == "Approve paying 5?"
    assert asked.call_digest == call_digest("pay", {"amount": 5})
    assert result.final_text == "The desk says: Paid 5."
    assert len(booking.completed) == 1
    assert booking.runs[0][1] == "pay 5"
