"""What the gateway reads of a run before it sends an answer.

A run at rest has no workflow task pending, so Temporal holds no answer a worker has not
seen: the gateway's description of the run shows it, and the run's history is not read
(one round trip before the update, not two). Once an answer is held as a signal, a task is
pending again, the history is read and a second answer is refused.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from adk_temporal.client import AdkClient, AnswerPendingError
from adk_temporal.devserver import DevServer
from adk_temporal.flow.messages import ConfirmInput, ResumeInput
from adk_temporal.ids import SessionKey
from adk_temporal.web.gateway import Gateway

from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration


class CountingClient(AdkClient):
    """An ``AdkClient`` that counts its reads of runs' histories for held answers."""

    history_reads = 0

    async def held_answers(self, workflow_id: str) -> list[ConfirmInput | ResumeInput]:
        """Count the read, then make it."""
        self.history_reads += 1
        return await super().held_answers(workflow_id)


async def _counting(deployment: Deployment) -> CountingClient:
    connected = await AdkClient.connect(deployment.address, task_queue=deployment.task_queue)
    return CountingClient(connected.client, task_queue=deployment.task_queue)


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory of the module's workers."""
    return Deployment(dev_server.address, "gateway-reads", tmp_path_factory.mktemp("reads"))


async def _awaiting(gateway: Gateway, ids: SessionKey) -> str:
    """The id of the run's open confirmation request, once it has one."""
    async with asyncio.timeout(60):
        while not (shown := await gateway.show(ids)).waiting_for:
            await asyncio.sleep(0.2)
    request_id: str = shown.waiting_for[0]["id"]
    return request_id


async def test_an_answer_to_a_run_at_rest_does_not_read_its_history(
    deployment: Deployment,
) -> None:
    """With a worker, the approval applies and no history was read for held answers."""
    adk = await _counting(deployment)
    gateway = Gateway(adk=adk)
    ids = SessionKey("weather", "u-reads", f"s-{uuid.uuid4().hex[:8]}")
    with worker_process(deployment):
        await gateway.start(*ids, "weather_agent", "Buy a weather report for Lima")
        request_id = await _awaiting(gateway, ids)
        answered = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert answered.outcome == "applied"
    assert adk.history_reads == 0


async def test_once_an_answer_is_held_the_history_is_read_and_another_is_refused(
    deployment: Deployment,
) -> None:
    """No worker: the first answer becomes a signal (the history is read before it); the
    second finds a task pending, reads the history and is refused as an answer on its way."""
    adk = await _counting(deployment)
    gateway = Gateway(adk=adk, answer_wait=0.5)
    ids = SessionKey("weather", "u-reads", f"s-{uuid.uuid4().hex[:8]}")
    with worker_process(deployment):
        await gateway.start(*ids, "weather_agent", "Buy a weather report for Quito")
        request_id = await _awaiting(gateway, ids)
    first = await gateway.confirm(ids, request_id, True, answered_by="token:test")
    assert first.outcome == "accepted"
    assert adk.history_reads == 1  # only the check before the signal: the run was at rest
    with pytest.raises(AnswerPendingError, match="on its way"):
        await gateway.confirm(ids, request_id, False, answered_by="token:test")
    assert adk.history_reads == 2
    await adk.client.get_workflow_handle(gateway.handle(ids).workflow_id).terminate("test over")
