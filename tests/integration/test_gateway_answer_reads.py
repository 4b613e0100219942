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
from temporalio.client import WorkflowExecutionDescription

from adk_temporal.client import AdkClient, AnswerPendingError, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.errors import UnknownRequestIdError
from adk_temporal.flow.messages import ConfirmInput, ResumeInput
from adk_temporal.ids import SessionKey
from adk_temporal.web.errors import ApiError
from adk_temporal.web.gateway import Gateway
from adk_temporal.workflows.messages import Published

from ..commands import run_cli
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration


class CountingClient(AdkClient):
    """An ``AdkClient`` that counts its reads of runs' histories for held answers."""

    history_reads = 0

    async def held_answers(self, workflow_id: str) -> list[ConfirmInput | ResumeInput]:
        """Count the read, then make it."""
        self.history_reads += 1
        return await super().held_answers(workflow_id)


class CountingGateway(Gateway):
    """A gateway that counts its descriptions of runs."""

    descriptions = 0

    async def described(
        self, handle: InvocationHandle
    ) -> tuple[WorkflowExecutionDescription, Published]:
        """Count the description, then read it."""
        self.descriptions += 1
        return await super().described(handle)


async def _counting(deployment: Deployment) -> CountingClient:
    connected = await AdkClient.connect(deployment.address, task_queue=deployment.task_queue)
    return CountingClient(connected.client, task_queue=deployment.task_queue)


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
    deployment: Deployment,
) -> None:
    """With a worker, the approval applies with neither a description of the run nor a read
    of its history; a wrong id is refused by the worker, as the gateway would."""
    adk = await _counting(deployment)
    gateway = CountingGateway(adk=adk, answer_wait=60)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Lima")
        seen = gateway.descriptions
        with pytest.raises(UnknownRequestIdError, match="adk-nope"):
            await gateway.confirm(ids, "adk-nope", True, answered_by="token:test")
        answered = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert answered.outcome == "applied"
    assert (gateway.descriptions - seen, adk.history_reads) == (0, 0)


async def test_once_an_answer_is_held_the_history_is_read_and_another_is_refused(
    deployment: Deployment,
) -> None:
    """No worker: the first answer becomes a signal (the history is read before it); the
    second finds a task pending, reads the history and is refused as an answer on its way."""
    adk = await _counting(deployment)
    gateway = Gateway(adk=adk, answer_wait=1.0)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Quito")
    first = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert first.outcome == "accepted"
    # The check just before the signal, and the vet's when it saw the update's own task
    # pending (Temporal shows the task an untaken update waits in as pending).
    assert adk.history_reads in (1, 2)
    reads = adk.history_reads
    with pytest.raises(AnswerPendingError, match="on its way"):
        await gateway.confirm(ids, request_id, False, answered_by="token:test")
    assert adk.history_reads == reads + 1
    await adk.client.get_workflow_handle(gateway.handle(ids).workflow_id).terminate("test over")


async def test_a_second_answer_waits_out_a_hung_workers_task_and_is_refused(
    deployment: Deployment,
) -> None:
    """The worker stops (SIGSTOP) with the run idle and goes on taking its workflow tasks
    without completing them: Temporal keeps the first answer's signal out of the history
    until the task times out. The second answer waits for that and is refused; once the hung
    worker is gone, a fresh one applies the first answer, charging once."""
    adk = await _counting(deployment)
    gateway = Gateway(adk=adk, answer_wait=1.0)
    with worker_process(deployment) as hung:
        ids, request_id = await _paused(gateway, "Oslo")
        os.kill(hung.pid, signal.SIGSTOP)
        first = await gateway.confirm(ids, request_id, True, answered_by="token:test")
        with pytest.raises(AnswerPendingError, match="on its way"):
            await gateway.confirm(ids, request_id, False, answered_by="token:test")
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


async def test_an_answer_the_run_closed_under_is_refused_as_run_closed(
    deployment: Deployment,
) -> None:
    """An answer checked against what the run published just before it closed (its memo
    lists the request until the task after the answer): Temporal refuses the update as the
    run completed, and the gateway says 409 ``run_closed``, not 404."""
    adk = await _counting(deployment)
    gateway = Gateway(adk=adk, answer_wait=5.0)
    with worker_process(deployment):
        ids, request_id = await _paused(gateway, "Accra")
        handle = gateway.handle(ids)
        _, published = await gateway.described(handle)
        assert (await gateway.confirm(ids, request_id, True)).outcome == "applied"
        async with asyncio.timeout(60):
            await handle.result()
        with pytest.raises(ApiError) as refused:
            await gateway._answer(
                handle,
                request_id,
                "confirmation",
                lambda checked: handle.confirm(request_id, False, checked=checked),
                published,
            )
    assert (refused.value.status, refused.value.type) == (409, "run_closed")
    assert "completed" in str(refused.value)
