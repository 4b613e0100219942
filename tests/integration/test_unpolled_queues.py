"""No silent waits: a run whose step waits on a task queue no worker polls says so — in
``show``, ``pending``, the gateway (console and API) and the Temporal UI's current details —
with the queue's name and what to start."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey, app_task_queue
from adk_temporal.queues import QueuePolls, QueueWait, unpolled_waits
from adk_temporal.web.gateway import Gateway

from ..commands import run_cli
from .queue_workers import weather_app, workers

pytestmark = pytest.mark.integration

USER = "u-1"


async def _waits(
    client: Client, handle: InvocationHandle, timeout: float, polls: QueuePolls | None = None
) -> list[QueueWait]:
    """The run's waits on unpolled queues, once there are any (within ``timeout``)."""
    async with asyncio.timeout(timeout):
        while not (found := await unpolled_waits(client, await handle.describe(), polls)):
            await asyncio.sleep(0.5)
    return found


async def _details(client: Client, workflow_id: str) -> str:
    """The run's current details, as the Temporal UI reads them."""
    metadata = await client.get_workflow_handle(workflow_id).query(
        "__temporal_workflow_metadata", result_type=WorkflowMetadata
    )
    details: str = metadata.current_details
    return details


async def test_a_step_sent_to_an_unpolled_queue_is_reported_everywhere_until_served(
    temporal_client: Client, dev_server: DevServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only app ``bar``'s worker runs: a run of ``foo`` has its step sent to ``<q>/apps/foo``,
    which nobody polls; the worker's log, show, pending, the gateway and the current details
    name the queue and the worker to start; once a worker of foo starts, the run completes."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    own = app_task_queue(queue, "foo")
    async with workers(temporal_client, tmp_path / "bar", queue, {"bar": weather_app("bar")}):
        adk = AdkClient(temporal_client, task_queue=queue)
        handle = await adk.start("foo", USER, "s-1", "weather_agent", "weather in Paris?")
        [wait] = await _waits(temporal_client, handle, timeout=60)
        assert (wait.task_queue, wait.step) == (own, "model step")
        assert "App(name='foo')" in wait.start and f"--task-queue {queue}" in wait.start
        wid = handle.workflow_id
        shown = await run_cli(dev_server.address, "show", wid)
        listed = await run_cli(dev_server.address, "pending", "--task-queue", queue)
        one = await run_cli(dev_server.address, "pending", "--workflow-id", wid)
        as_json = await run_cli(dev_server.address, "show", wid, "--json")
        viewed = await Gateway(adk=adk).show(SessionKey("foo", USER, "s-1"))
        details = await _details(temporal_client, wid)
    for printed in (shown.stdout, listed.stdout, one.stdout):
        assert f"model step waits on task queue '{own}'" in printed
        assert "start a worker of app 'foo'" in printed
    assert f"{wid}  stalled: model step" in listed.stdout
    assert [w["task_queue"] for w in json.loads(as_json.stdout)["unpolled_waits"]] == [own]
    assert [w.task_queue for w in viewed.unpolled_waits] == [own]
    assert f"No worker of app `foo` polls task queue `{own}`" in details
    assert any(
        f"{own!r}, which no worker of the app polls" in r.getMessage()
        and "App(name='foo')" in r.getMessage()
        for r in caplog.records
    )
    assert "App(name='foo')" in details
    async with workers(temporal_client, tmp_path / "foo", queue, {"foo": weather_app("foo")}):
        async with asyncio.timeout(120):
            result = await handle.result()
        assert result.status == "completed"
        assert await unpolled_waits(temporal_client, await handle.describe()) == []


async def test_a_step_waiting_after_its_apps_worker_stopped_is_reported(
    temporal_client: Client, tmp_path: Path
) -> None:
    """A run of ``foo`` paused for approval; foo's worker stops and ``bar``'s runs on: the
    approved tool waits on ``<q>/apps/foo``, reported once the stopped worker's polls age
    past the live bound, and the current details name that queue."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    own = app_task_queue(queue, "foo")
    async with workers(temporal_client, tmp_path / "bar", queue, {"bar": weather_app("bar")}):
        adk = AdkClient(temporal_client, task_queue=queue, own_queues=False)
        async with workers(temporal_client, tmp_path / "foo", queue, {"foo": weather_app("foo")}):
            handle = await adk.start(
                "foo", USER, "s-1", "weather_agent", "Buy a weather report for Paris!"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=60)
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        # A stopped worker's polls count as live for up to a minute and a quarter
        # (LIVE_WITHIN, as long as a live worker's long poll may last); here no worker of
        # foo runs any more, so a bound of seconds finds the same wait without waiting it out.
        polls = QueuePolls(temporal_client, trusted_seconds=0, live_within=timedelta(seconds=3))
        waits = await _waits(temporal_client, handle, timeout=240, polls=polls)
        details = await _details(temporal_client, handle.workflow_id)
    assert [(w.task_queue, w.step) for w in waits] == [(own, "tool call")]
    assert f"Steps run on task queue `{own}`" in details
