"""A worker of another app on an app's own queue: refused at start, and a step that still
reaches one (a worker from before the check, or built by hand around it) is handed back,
never failed."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.app import Stores
from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.errors import WorkerQueueError
from adk_temporal.ids import app_task_queue
from adk_temporal.sessions import InMemorySessionService, SqliteSessionService
from adk_temporal.worker import build_worker, worker_identity

from ..commands import run_cli
from .queue_workers import UncheckedPlugin, connect_like, weather_app, workers

pytestmark = pytest.mark.integration

USER = "u-1"


@pytest.mark.parametrize(
    ("app", "queue"),
    [("evil", "q/apps/alpha"), (None, "q/apps/alpha"), ("evil", "q/any-app")],
    ids=["named-on-an-apps-queue", "unnamed-on-an-apps-queue", "named-on-the-unnamed-queue"],
)
def test_a_worker_on_a_queue_of_others_is_refused_when_built(
    temporal_client: Client, app: str | None, queue: str
) -> None:
    """build_worker refuses another app's own queue (and a named app the unnamed apps'
    queue) with a typed error naming the queue and the one to use."""
    with pytest.raises(WorkerQueueError) as refused:
        build_worker(
            temporal_client,
            weather_app(app),
            task_queue=queue,
            stores=Stores(InMemorySessionService()),
        )
    assert repr(queue) in str(refused.value)
    assert "--task-queue q" in str(refused.value)


def test_a_worker_of_the_app_itself_may_start_on_its_own_queue(temporal_client: Client) -> None:
    """A worker of ``alpha`` given ``q/apps/alpha`` is not refused (it is alpha's queue)."""
    build_worker(
        temporal_client,
        weather_app("alpha"),
        task_queue="q/apps/alpha",
        stores=Stores(InMemorySessionService()),
    )


async def test_the_worker_command_exits_with_the_reason(dev_server: DevServer) -> None:
    """`worker --task-queue <q>/apps/alpha` of app `weather` exits 1 with the reason."""
    result = await run_cli(
        dev_server.address,
        "worker",
        "--app",
        "adk_temporal.examples.weather:app",
        "--task-queue",
        "shared/apps/alpha",
    )
    assert result.returncode == 1
    assert "own queue of app 'alpha'" in result.stderr
    assert "--task-queue shared" in result.stderr


async def _handed_back(client: Client, workflow_id: str) -> bool:
    """Whether the run paused to hand a step back (its timer's summary says so)."""
    handle = client.get_workflow_handle(workflow_id)
    summaries = [
        event.user_metadata.summary.data
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    return any(b"hand back a step" in summary for summary in summaries)


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "replaying"])
async def test_runs_complete_beside_a_worker_of_another_app_on_their_queue(
    temporal_client: Client, tmp_path: Path, cached: bool
) -> None:
    """A worker of ``evil`` polling ``<q>/apps/alpha`` (built around the check) takes half
    of alpha's steps: every one is handed back, 10 of 10 runs complete, evil stores none."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    own = app_task_queue(queue, "alpha")
    cache = 1000 if cached else 0
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(
            workers(
                temporal_client,
                tmp_path,
                queue,
                {"alpha": weather_app("alpha")},
                max_cached_workflows=cache,
            )
        )
        evil_store = SqliteSessionService(tmp_path / "evil.db")
        stack.push_async_callback(evil_store.close)
        evil = UncheckedPlugin(weather_app("evil"), stores=Stores(evil_store))
        await stack.enter_async_context(
            Worker(
                await connect_like(temporal_client),
                task_queue=own,
                plugins=[evil],
                identity=worker_identity(weather_app("evil")),
                max_cached_workflows=cache,
                sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
            )
        )
        adk = AdkClient(temporal_client, task_queue=queue)
        async with asyncio.timeout(60):
            while await adk.start_queue("alpha") != own:
                await asyncio.sleep(0.5)
        handles = [
            await adk.start("alpha", USER, f"s-{i}", "weather_agent", "weather in Paris?")
            for i in range(10)
        ]
        async with asyncio.timeout(240):
            results = await asyncio.gather(*(h.result() for h in handles))
        assert [r.status for r in results] == ["completed"] * 10
        handed = [await _handed_back(temporal_client, h.workflow_id) for h in handles]
        assert any(handed), "no step reached the worker of evil: the test proved nothing"
        assert await evil_store.list("alpha", USER) == []
