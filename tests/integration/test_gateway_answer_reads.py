"""What the gateway reads of a run to send an answer.

With a worker running, the checked update goes first and the worker checks it: the gateway
reads nothing of the run (one call to Temporal, as a bare signal). Without one, the run is
read once the update goes untaken: the answer is left as a signal, and once it is held a
second answer finds the history holding it and is refused. A worker that hangs holding the
run's task keeps the signal out of the history until the task times out: the second answer
waits for that, and is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionDescription

from adk_temporal.answers import AnswerDesk, RunAnswers, read_answers
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey
from adk_temporal.web.errors import ApiError
from adk_temporal.web.gateway import Gateway

from ..commands import run_cli
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration


class HistoryReads:
    """Counts the answer desk's reads of runs' histories (its one reader, ``read_answers``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = read_answers

        async def counted(client: Client, workflow_id: str) -> RunAnswers:
            self.count += 1
            return await real(client, workflow_id)

        monkeypatch.setattr("adk_temporal.answers.desk.read_answers", counted)


class _Describes:
    """Counts the answer desk's descriptions of runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = InvocationHandle.describe

        async def counted(handle: InvocationHandle) -> WorkflowExecutionDescription:
            self.count += 1
            return await real(handle)

        monkeypatch.setattr(InvocationHandle, "describe", counted)


async def _client(deployment: Deployment) -> AdkClient:
    return await AdkClient.connect(deployment.address, task_queue=deployment.task_queue)


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory of the module's workers."""
    return Deployment(dev_server.address, "gateway-reads", tmp_path_factory.mktemp("reads"))


async def _paused(gateway: Gateway, city: str) -> tuple[SessionKey, str]:
    """A new session whose run waits for the approval of a report for ``city``, and the id
    of that open request (a worker must be running)."""
    ids = SessionKey("weather", "u-reads", f"s-{uuid.uuid4().hex[:8]}")
    await gateway.start(*ids, "weather_agent", f"Buy a weather report for {city}")
    async with asyncio.timeout(60):
        while not (shown := await gateway.show(ids)).waiting_for:
            await asyncio.sleep(0.2)
    request_id: str = shown.waiting_for[0]["id"]
    return ids, request_id


async def test_an_answer_a_worker_takes_reads_nothing_of_the_run(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a worker, the approval applies with neither a description of the run nor a read
    of its history; a wrong id is refused by the worker, as the gateway would."""
    reads = HistoryReads(monkeypatch)
    adk = await _client(deployment)
    gateway = Gateway(adk=adk, answer_wait=60)
    # The run is read only when no worker took the update within vet_after: a loaded
    # machine's worker may take longer than the default half second.
    gateway.desk = AnswerDesk(adk, vet_after=30)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Lima")
        described = _Describes(monkeypatch)
        with pytest.raises(ApiError, match="adk-nope") as unknown:
            await gateway.confirm(ids, "adk-nope", True, answered_by="token:test")
        assert (unknown.value.status, unknown.value.type) == (404, "unknown_request")
        unknown_reads = (described.count, reads.count)
        answered = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert answered.outcome == "applied"
    # The worker's refusal of an unknown id is explained from the run (one description,
    # one history read: was it answered before?); the applied answer reads nothing.
    assert unknown_reads == (1, 1)
    assert (described.count, reads.count) == unknown_reads


async def test_once_an_answer_is_held_the_history_is_read_and_another_is_refused(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker: the first answer becomes a signal (the history is read before it); the
    second finds a task pending, reads the history and is refused as an answer on its way."""
    reads = HistoryReads(monkeypatch)
    adk = await _client(deployment)
    gateway = Gateway(adk=adk, answer_wait=1.0)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Quito")
    first = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert first.outcome == "accepted"
    # The check just before the signal, and the vet's when it saw the update's own task
    # pending (Temporal shows the task an untaken update waits in as pending).
    assert reads.count in (1, 2)
    before = reads.count
    with pytest.raises(ApiError, match="on its way") as held:
        await gateway.confirm(ids, request_id, False, answered_by="token:test")
    assert (held.value.status, held.value.type) == (409, "answer_pending")
    refusal = held.value.refusal
    assert refusal is not None and refusal.earlier is not None
    assert (refusal.reason, refusal.earlier.answered_by) == ("held", "token:test")
    assert reads.count == before + 1
    await adk.client.get_workflow_handle(gateway.handle(ids).workflow_id).terminate("test over")


async def test_a_second_answer_waits_out_a_hung_workers_task_and_is_refused(
    deployment: Deployment,
) -> None:
    """The worker stops (SIGSTOP) with the run idle and goes on taking its workflow tasks
    without completing them: Temporal keeps the first answer's signal out of the history
    until the task times out. The second answer waits for that and is refused; once the hung
    worker is gone, a fresh one applies the first answer, charging once."""
    adk = await _client(deployment)
    gateway = Gateway(adk=adk, answer_wait=1.0)
    with worker_process(deployment) as hung:
        ids, request_id = await _paused(gateway, "Oslo")
        os.kill(hung.pid, signal.SIGSTOP)
        first = await gateway.confirm(ids, request_id, True, answered_by="token:test")
        with pytest.raises(ApiError, match="on its way") as held:
            await gateway.confirm(ids, request_id, False, answered_by="token:test")
        assert held.value.type == "answer_pending"
        handle = adk.handle(gateway.handle(ids).workflow_id)
        # The hung worker's tasks time out, so the one pending is a retry.
        shown = await run_cli(deployment.address, "show", handle.workflow_id, "--json")
        told = await run_cli(deployment.address, "show", handle.workflow_id)
    assert first.outcome == "accepted"
    task = json.loads(shown.stdout)["workflow_task"]
    assert task["state"] in ("scheduled", "started") and task["attempt"] >= 2, task
    assert re.search(r"task     attempt \d+, (started|scheduled) ", told.stdout), told.stdout
    timed_out = [
        event
        async for event in adk.client.get_workflow_handle(handle.workflow_id).fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
    ]
    assert timed_out, "the hung worker held no task: the test did not set up its case"
    with worker_process(deployment):
        async with asyncio.timeout(90):
            await handle.result()
    charged = [c for c in deployment.payments.charges() if ids.session_id in c["key"]]
    assert len(charged) == 1


async def test_answers_to_a_closed_run_say_why_and_who_answered_first(
    deployment: Deployment,
) -> None:
    """After a run completed, a second answer to its answered request is 409
    ``already_answered`` naming who answered and when; an answer to a run terminated while
    its request was open is 409 ``run_closed``, naming its state."""
    adk = await _client(deployment)
    gateway = Gateway(adk=adk, answer_wait=5.0)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Accra")
        handle = gateway.handle(ids)
        assert (await gateway.confirm(ids, request_id, True, answered_by="alice")).outcome == (
            "applied"
        )
        async with asyncio.timeout(60):
            await handle.result()
        with pytest.raises(ApiError) as answered:
            await gateway.confirm(ids, request_id, False, answered_by="bob")
        other, other_request = await _paused(gateway, "Dakar")
    await adk.client.get_workflow_handle(gateway.handle(other).workflow_id).terminate("over")
    with pytest.raises(ApiError) as closed:
        await gateway.confirm(other, other_request, True, answered_by="bob")
    assert (answered.value.status, answered.value.type) == (409, "already_answered")
    earlier = answered.value.document().error.earlier
    assert earlier is not None
    assert (earlier["decision"], earlier["answered_by"], earlier["channel"]) == (
        "approved",
        "alice",
        "gateway",
    )
    assert (closed.value.status, closed.value.type) == (409, "run_closed")
    assert "terminated" in str(closed.value)
