"""Model traffic under load, through real worker processes and the real google-genai client
against a fake Gemini server: Retry-After honoured, a 400 not retried, a rate limit shared by
two workers, priorities ordering steps where the limit binds."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError

from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.converter import adk_data_converter
from adk_temporal.devserver import DevServer
from adk_temporal.testing.fake_gemini import FakeGeminiServer, RecordedRequest

from ..commands import run_cli
from ..traffic_app import GEMINI_ENV
from .conftest import FAST_POLL
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

APP = "traffic"
USER = "u-1"
TRAFFIC_APP = "tests.traffic_app:app"


@pytest.fixture(scope="module")
def traffic_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A dev server whose task queues have one partition: Temporal keeps priority order and
    a queue's rate within a partition, as a production deployment configures its model
    queues (docs/guides/model-traffic.md)."""
    root = tmp_path_factory.mktemp("traffic")
    one_partition = {
        "matching.numTaskqueueReadPartitions": "1",
        "matching.numTaskqueueWritePartitions": "1",
    }
    server = DevServer(
        db_filename=root / "temporal.db",
        headless=True,
        dynamic_config={**FAST_POLL, **one_partition},
        log_path=root / "server.log",
    )
    with server:
        yield server


@pytest.fixture
async def temporal_client(traffic_server: DevServer) -> Client:
    """A client of this module's dev server."""
    return await Client.connect(traffic_server.address, data_converter=adk_data_converter())


@pytest.fixture
def gemini() -> Iterator[FakeGeminiServer]:
    """A fresh fake Gemini server for each test."""
    with FakeGeminiServer() as server:
        yield server


@pytest.fixture
def deployment(traffic_server: DevServer, tmp_path: Path) -> Deployment:
    """A task queue and data directory of this test alone."""
    return Deployment(traffic_server.address, f"traffic-{uuid.uuid4().hex[:8]}", tmp_path / "data")


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _workers(
    deployment: Deployment, gemini: FakeGeminiServer, *args: str
) -> AbstractContextManager[subprocess.Popen[str]]:
    return worker_process(deployment, app=TRAFFIC_APP, env={GEMINI_ENV: gemini.base_url}, args=args)


def _first_user_text(body: dict[str, object]) -> str:
    contents = body.get("contents")
    assert isinstance(contents, list)
    return str(contents[0]["parts"][0]["text"])


def _arrivals(requests: list[RecordedRequest], text: str) -> list[float]:
    return [r.received_at for r in requests if _first_user_text(r.body) == text]


async def test_retry_after_delays_the_next_attempt(
    deployment: Deployment, gemini: FakeGeminiServer, temporal_client: Client
) -> None:
    """429 with Retry-After: 2 (header), then 503 with RetryInfo 1s (body): each next
    attempt arrives no sooner than asked, and the invocation completes."""
    gemini.enqueue_error(429, "quota exhausted", retry_after="2")
    gemini.enqueue_error(503, "overloaded", retry_delay="1s")
    gemini.enqueue_text("hello after waiting")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with _workers(deployment, gemini):
        handle = await adk.start(APP, USER, _session(), "chatty", "hi")
        result = await handle.result()
    assert (result.status, result.final_text) == ("completed", "hello after waiting")
    first, second, third = (r.received_at for r in gemini.requests)
    assert second - first >= 2.0
    assert third - second >= 1.0


async def test_show_says_a_rate_limited_step_waits_and_when_it_retries(
    deployment: Deployment, gemini: FakeGeminiServer, temporal_client: Client
) -> None:
    """429 with Retry-After: 30: Temporal schedules the next attempt 30 s after the failure
    (not its 1 s back-off), and `show` says the model rate-limited the step and when it
    retries."""
    gemini.enqueue_error(429, "quota exhausted", retry_after="30")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with _workers(deployment, gemini):
        handle = await adk.start(APP, USER, _session(), "chatty", "hi")
        async with asyncio.timeout(30):
            while True:
                pending = (await handle.describe()).raw_description.pending_activities
                if pending and pending[0].HasField("next_attempt_schedule_time"):
                    break
                await asyncio.sleep(0.1)
        shown = await run_cli(deployment.address, "show", handle.workflow_id)
        await temporal_client.get_workflow_handle(handle.workflow_id).terminate("test over")
    failed_at = pending[0].last_attempt_complete_time.ToDatetime()
    retry_at = pending[0].next_attempt_schedule_time.ToDatetime()
    assert (retry_at - failed_at).total_seconds() >= 29
    assert shown.returncode == 0, shown.stderr
    assert "rate limited by the model, retrying at" in shown.stdout
    assert "the provider asks to retry after 30 s" in shown.stdout


async def test_a_400_fails_the_step_at_once_with_the_providers_message(
    deployment: Deployment, gemini: FakeGeminiServer, temporal_client: Client
) -> None:
    """A 400 other than 429 is not retried: one request, the failure carries its message."""
    gemini.enqueue_error(400, "Invalid value at 'contents[0]': unknown role")
    gemini.enqueue_text("a retry would have consumed this")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with _workers(deployment, gemini):
        handle = await adk.start(APP, USER, _session(), "chatty", "hi")
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
    assert "unknown role" in str(failed.value.cause)
    assert len(gemini.requests) == 1


async def test_a_rate_limit_holds_across_two_worker_processes(
    deployment: Deployment, gemini: FakeGeminiServer, temporal_client: Client
) -> None:
    """16 invocations at once, a 2/s limit on gemini-2.5-* given to two workers: all
    complete, none is refused by a server allowing 6 in any second, and no second sees
    more than the documented twice the rate (Temporal's full token bucket alone let five
    through in the first second; the start slots the workers share hold them to the rate)."""
    rate = 2
    gemini.answer_by_default("ok")
    gemini.limit_rate(3 * rate, retry_after=1)
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    limit = ("--model-limit", f"gemini-2.5-*={rate}/s,2")
    with _workers(deployment, gemini, *limit), _workers(deployment, gemini, *limit):
        handles = [
            await adk.start(APP, USER, _session(), "chatty", f"limited {n}") for n in range(16)
        ]
        results = await asyncio.gather(*(h.result() for h in handles))
        quick = await (await adk.start(APP, USER, _session(), "quick", "unlimited")).result()
    assert [r.status for r in results] == ["completed"] * 16
    assert quick.status == "completed"
    assert [r.status for r in gemini.requests] == [200] * 17
    arrivals = sorted(r.received_at for r in gemini.requests if r.model.startswith("gemini-2.5"))
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
    assert busiest <= 2 * rate


async def _queued(handles: list[InvocationHandle], count: int) -> None:
    """Wait until ``count`` model steps wait on the model queue (scheduled, not started)."""
    async with asyncio.timeout(60):
        while True:
            waiting = 0
            for handle in handles:
                pending = (await handle.describe()).raw_description.pending_activities
                waiting += sum(1 for a in pending if not a.HasField("last_started_time"))
            if waiting >= count:
                return
            await asyncio.sleep(0.1)


async def test_priority_orders_steps_where_the_limit_binds(
    deployment: Deployment, gemini: FakeGeminiServer, temporal_client: Client
) -> None:
    """Six batch invocations (priority 5) wait behind a 1/s limit; an interactive one
    (priority 1) started after them reaches the model ahead of most of them."""
    gemini.answer_by_default("ok")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with _workers(deployment, gemini, "--model-limit", "gemini-*=1/s,1"):
        batch = [
            await adk.start(APP, USER, _session(), "chatty", f"batch {n}", priority=5)
            for n in range(6)
        ]
        await _queued(batch, 4)
        interactive = await adk.start(APP, USER, _session(), "chatty", "interactive", priority=1)
        await asyncio.gather(interactive.result(), *(h.result() for h in batch))
    order = [_first_user_text(r.body) for r in sorted(gemini.requests, key=lambda r: r.received_at)]
    assert order.index("interactive") <= 3
