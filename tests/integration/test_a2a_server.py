"""a2a-sdk's own client against ``adk-temporal web --a2a`` and real worker processes
(SPEC §1.14, issue 45): each A2A task is one durable invocation, read from Temporal and the
session store by whichever gateway process is asked."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from a2a.client import Client
from a2a.types import CancelTaskRequest, GetTaskRequest, SubscribeToTaskRequest, Task, TaskState
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from adk_temporal.a2a.routes import user_of
from adk_temporal.a2a.wire import ANSWER_KEY, AnswerPart, asked_requests, data_part
from adk_temporal.audit import audit_entries
from adk_temporal.confirmation import call_digest
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.web.auth import TokenBook

from .. import a2a_apps
from .a2a import (
    A2A_TOKEN,
    SECOND_TOKEN,
    TOKENS,
    a2a_client,
    app_env,
    approval,
    last_task,
    message,
    open_gate,
    payments,
    send,
)
from .gateway import TOKEN, Gateway, gateway_process
from .workers import Deployment, died_by_sigkill, worker_process

FAR = "tests.a2a_apps:far_app"


@pytest.fixture
def deployment(
    dev_server: DevServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Deployment:
    """A fresh task queue and data directory; the gateways take the A2A token."""
    monkeypatch.setenv("ADK_WEB_TOKENS", TOKENS)
    for name, value in app_env(Deployment("", "", tmp_path / "data")).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "data").mkdir()
    return Deployment(dev_server.address, f"a2a-{uuid.uuid4().hex[:8]}", tmp_path / "data")


@contextmanager
def far_gateway(deployment: Deployment, where: Path) -> Iterator[Gateway]:
    """A gateway process serving the far app over A2A, its files under ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    with gateway_process(deployment, where, app=FAR, args=["--a2a"]) as served:
        yield served


@pytest.fixture
def gateway(deployment: Deployment, tmp_path: Path) -> Iterator[Gateway]:
    """The gateway serving the far app over A2A."""
    with far_gateway(deployment, tmp_path / "gateway") as served:
        yield served


async def test_send_completes_a_task_that_get_reads_back(
    deployment: Deployment, gateway: Gateway
) -> None:
    """A message without a task starts one invocation and, sent without streaming, returns
    the completed task with the reply as its artifact; GetTask reads the same task back,
    its context the session."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            task = last_task(await send(client, message(text="weather in Oslo")))
            got = await client.get_task(GetTaskRequest(id=task.id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["It is sunny in Oslo."]
    assert got.id == task.id and got.context_id == task.context_id
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert next(m.parts[0].text for m in got.history if m.parts[0].text) == "weather in Oslo"
    assert asked_requests(got.status.message.parts) == []


async def test_stream_sends_the_reply_in_pieces_then_the_completed_status(
    deployment: Deployment, gateway: Gateway
) -> None:
    """message/stream answers with the task, the reply's text as it streams (artifact
    updates appended piece by piece, then the reply whole), and the completed status."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments") as client:
            responses = await send(client, message(text="weather in Rome"))
    assert responses[0].HasField("task")
    updates = [r.artifact_update for r in responses if r.HasField("artifact_update")]
    pieces = "".join(u.artifact.parts[0].text for u in updates if u.append)
    whole = [u.artifact.parts[0].text for u in updates if u.last_chunk]
    assert whole == ["It is sunny in Rome."]
    assert pieces and whole[0].startswith(pieces)
    last = responses[-1]
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_an_approval_answered_after_worker_and_gateway_died_pays_once(
    deployment: Deployment, tmp_path: Path
) -> None:
    """A confirmation makes the task input-required, its request a data part (the call, the
    hint, the digest, the schema of the answer); the worker and the gateway are SIGKILLed;
    a new gateway takes the approval on the same task id while no worker runs, and once a
    worker starts the task completes: the tool ran exactly once."""
    with far_gateway(deployment, tmp_path / "one") as first:
        with worker_process(deployment, app=FAR) as worker:
            async with a2a_client(first.base, "payments", streaming=False) as client:
                paused = last_task(await send(client, message(text="pay 5")))
            worker.kill()
            assert died_by_sigkill(worker)
        first.process.kill()
        assert died_by_sigkill(first.process)
    assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [request] = asked_requests(paused.status.message.parts)
    assert (request.kind, request.tool, request.args) == ("confirmation", "pay", {"amount": 5})
    assert request.call_digest == call_digest("pay", {"amount": 5})
    assert request.answer_schema["required"] == [ANSWER_KEY]
    with far_gateway(deployment, tmp_path / "two") as second:
        async with a2a_client(second.base, "payments", streaming=False) as client:
            answer = message(approval(paused), task_id=paused.id, context_id=paused.context_id)
            answering = asyncio.create_task(send(client, answer))
            await asyncio.sleep(0)
            assert not answering.done()
            with ExitStack() as worker:
                # Started off the event loop: a loop blocked while a worker starts lets the
                # gateway close the pooled connection the answer's request was about to use.
                await asyncio.to_thread(worker.enter_context, worker_process(deployment, app=FAR))
                done = last_task(await answering)
    assert done.id == paused.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in done.artifacts for p in a.parts] == ["Paid 5."]
    assert [line.split()[1] for line in payments(deployment)] == ["5"]


async def test_a_bad_answer_is_refused_with_a2a_errors_and_changes_nothing(
    deployment: Deployment, gateway: Gateway
) -> None:
    """Answers of the wrong digest, without a digest, to an unknown request, as text, or
    malformed are refused with A2A's invalid-params error naming why; the task still asks
    the same request and nothing ran; the right answer then pays once, recorded in the audit
    as the A2A caller's on channel a2a, and a message to the completed task is refused as
    unsupported."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            paused = last_task(await send(client, message(text="pay 5")))
            on_task = {"task_id": paused.id, "context_id": paused.context_id}
            bad = [
                message(approval(paused, call_digest="0" * 64), **on_task),
                message(approval(paused, call_digest=None), **on_task),
                message(approval(paused, request_id="adk-nope"), **on_task),
                message(text="yes please", **on_task),
                message(data_part({ANSWER_KEY: {"confirmed": "maybe"}}), **on_task),
            ]
            refusals = []
            for request in bad:
                with pytest.raises(InvalidParamsError) as refused:
                    await send(client, request)
                refusals.append(refused.value.message)
            still = await client.get_task(GetTaskRequest(id=paused.id))
            done = last_task(await send(client, message(approval(paused), **on_task)))
            with pytest.raises(UnsupportedOperationError):
                await send(client, message(approval(paused), **on_task))
    assert "does not match" in refusals[0] or "digest" in refusals[0]
    assert "call_digest" in refusals[1]
    assert "adk-nope" in refusals[2]
    assert "adk_answer" in refusals[3]
    assert "confirmed" in refusals[4]
    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert asked_requests(still.status.message.parts) == asked_requests(paused.status.message.parts)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(payments(deployment)) == 1
    user = user_of(TokenBook().principal(A2A_TOKEN))
    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    stored = await sessions.get(SessionKey(a2a_apps.FAR_APP, user, paused.context_id))
    [entry] = audit_entries(stored.events)
    assert (entry.decision, entry.tool, entry.channel) == ("approved", "pay", "a2a")
    assert entry.answered_by == TokenBook().principal(A2A_TOKEN)


async def _state_of(client: Client, task_id: str, *wanted: TaskState) -> Task:
    """The task, read until it is in one of ``wanted`` states."""
    async with asyncio.timeout(60):
        while True:
            task = await client.get_task(GetTaskRequest(id=task_id))
            if task.status.state in wanted:
                return task
            await asyncio.sleep(0.1)


async def test_cancel_is_the_invocations_cancellation(
    deployment: Deployment, gateway: Gateway
) -> None:
    """A working task (sent to return at once) is cancelled: its invocation is cancelled on
    Temporal and the task reads canceled; cancelling it again is refused as not cancelable,
    and a message to it as unsupported."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            request = message(text="slow")
            request.configuration.return_immediately = True
            started = last_task(await send(client, request))
            assert started.status.state == TaskState.TASK_STATE_WORKING
            await client.cancel_task(CancelTaskRequest(id=started.id))
            cancelled = await _state_of(client, started.id, TaskState.TASK_STATE_CANCELED)
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=started.id))
            with pytest.raises(UnsupportedOperationError):
                await send(client, message(text="more", task_id=started.id))
    assert cancelled.id == started.id


async def test_subscribe_follows_a_task_from_a_restarted_gateway(
    deployment: Deployment, tmp_path: Path
) -> None:
    """A stream is cut by the gateway's death; a new gateway process reads the task (still
    working) and a subscription follows it to its completion and its reply."""
    with worker_process(deployment, app=FAR):
        with far_gateway(deployment, tmp_path / "one") as first:
            async with a2a_client(first.base, "payments") as client:
                stream = client.send_message(message(text="slow"))
                opened = await anext(aiter(stream))
            first.process.kill()
        with far_gateway(deployment, tmp_path / "two") as second:
            async with a2a_client(second.base, "payments") as client:
                task_id = opened.task.id
                working = await client.get_task(GetTaskRequest(id=task_id))
                open_gate(deployment)
                followed = [r async for r in client.subscribe(SubscribeToTaskRequest(id=task_id))]
    assert working.status.state == TaskState.TASK_STATE_WORKING
    assert followed[0].task.id == task_id
    assert followed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    replies = [r.artifact_update.artifact for r in followed if r.artifact_update.last_chunk]
    assert [a.parts[0].text for a in replies] == ["Slow work done."]


async def test_credentials_are_auth_required_and_checked_against_their_schema(
    deployment: Deployment, gateway: Gateway
) -> None:
    """A tool asking for credentials makes the task auth-required, its request marked as a
    credential; an answer breaking the request's schema is refused and the task still asks;
    a good one completes it."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            asking = last_task(await send(client, message(text="login")))
            [request] = asked_requests(asking.status.message.parts)
            on_task = {"task_id": asking.id, "context_id": asking.context_id}
            wrong = AnswerPart(request_id=request.request_id, input={"user": "ada"}).part()
            with pytest.raises(InvalidParamsError) as refused:
                await send(client, message(wrong, **on_task))
            still = await client.get_task(GetTaskRequest(id=asking.id))
            good = AnswerPart(request_id=request.request_id, input={"key": "k-123456789"})
            done = last_task(await send(client, message(good.part(), **on_task)))
    assert asking.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert request.credential and request.message == "The bank's API key, please."
    assert "key" in refused.value.message
    assert still.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in done.artifacts for p in a.parts] == ["Logged in (11 characters)."]


async def test_callers_are_authenticated_and_see_only_their_own_tasks(
    deployment: Deployment, gateway: Gateway
) -> None:
    """No token is 401, a token of another app 403; another caller of the app does not find
    the first one's task; a context id breaking the id grammar and a body over the limit
    are refused before anything starts."""
    endpoint = f"{gateway.base}/a2a/payments"
    call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    async with httpx.AsyncClient(timeout=60) as http:
        anonymous = await http.post(endpoint, json=call)
        foreign = await http.post(endpoint, json=call, headers={"Authorization": f"Bearer {TOKEN}"})
        big = await http.post(
            endpoint, content=b" " * (2 << 20), headers={"Authorization": f"Bearer {A2A_TOKEN}"}
        )
    assert (anonymous.status_code, foreign.status_code, big.status_code) == (401, 403, 413)
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            task = last_task(await send(client, message(text="weather in Oslo")))
            with pytest.raises(InvalidParamsError, match="session_id"):
                await send(client, message(text="weather in Oslo", context_id="a/b"))
        async with a2a_client(gateway.base, "payments", token=SECOND_TOKEN) as other:
            with pytest.raises(TaskNotFoundError):
                await other.get_task(GetTaskRequest(id=task.id))
            with pytest.raises(TaskNotFoundError):
                await send(other, message(text="hi", task_id=task.id, context_id=task.context_id))


async def test_a_client_of_protocol_0_3_is_answered_too(
    deployment: Deployment, gateway: Gateway
) -> None:
    """The 0.3 method names (what ADK's own remote agent speaks with a2a-sdk 0.3) reach the
    same handler: message/send completes a task that tasks/get reads back."""
    send_03 = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": uuid.uuid4().hex,
                "parts": [{"kind": "text", "text": "weather in Lima"}],
            }
        },
    }
    headers = {"Authorization": f"Bearer {A2A_TOKEN}"}
    with worker_process(deployment, app=FAR):
        async with httpx.AsyncClient(timeout=120, headers=headers) as http:
            sent = (await http.post(f"{gateway.base}/a2a/payments", json=send_03)).json()
            get = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tasks/get",
                "params": {"id": sent["result"]["id"]},
            }
            got = (await http.post(f"{gateway.base}/a2a/payments", json=get)).json()
    assert sent["result"]["status"]["state"] == "completed", sent
    assert got["result"]["artifacts"][0]["parts"][0]["text"] == "It is sunny in Lima."
