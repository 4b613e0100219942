"""Two apps' workers on one server: no run is failed by a worker of the other app.

Each test runs twice: with runs started on the apps' own queues (what a client does once it
sees them polled) and on the shared queue (runs started before that, or by a client told
not to), whose first model step moves the steps to the app's queue.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.app import App, Stores
from adk_temporal.artifacts import VersionsRequest
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.errors import ArtifactNotFoundError
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.ids import app_task_queue
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.worker import artifact_store, build_worker

APPS = ("expenses", "streamy")
USER = "u-1"


@asynccontextmanager
async def _two_apps(
    client: Client, root: Path, task_queue: str
) -> AsyncIterator[dict[str, SqliteSessionService]]:
    """A worker per app, both on ``task_queue``, each with its own stores and connection
    (as two worker processes would be: one process cannot poll a queue twice)."""
    stores: dict[str, SqliteSessionService] = {}
    async with AsyncExitStack() as stack:
        for name in APPS:
            own = await Client.connect(
                client.service_client.config.target_host, data_converter=client.data_converter
            )
            sessions = SqliteSessionService(root / name / "sessions.db")
            stack.push_async_callback(sessions.close)
            stores[name] = sessions
            worker = build_worker(
                own,
                App(agents=[build_weather_agent("scripted:weather")], name=name),
                task_queue=task_queue,
                stores=Stores(sessions, artifact_store(root / name)),
                max_cached_workflows=0,
                sticky_timeout=timedelta(seconds=1),
            )
            await stack.enter_async_context(worker)
        yield stores


async def _client(temporal_client: Client, queue: str, own_queues: bool) -> AdkClient:
    """A client of ``queue`` that starts runs on the apps' own queues (once it sees both
    polled) or, with ``own_queues`` false, on ``queue``."""
    adk = AdkClient(temporal_client, task_queue=queue, own_queues=own_queues)
    expected = {app: app_task_queue(queue, app) if own_queues else queue for app in APPS}
    async with asyncio.timeout(60):
        while {app: await adk.start_queue(app) for app in APPS} != expected:
            await asyncio.sleep(0.5)
    return adk


async def _started_on(handle: InvocationHandle) -> str:
    """The task queue of the run ``handle`` started."""
    description = await handle.describe()
    return description.task_queue


@pytest.mark.parametrize("own_queues", [True, False], ids=["own-queues", "shared-queue"])
async def test_forty_runs_of_two_apps_on_one_queue_all_complete(
    temporal_client: Client, tmp_path: Path, own_queues: bool
) -> None:
    """Two apps' workers polling one task queue: 20 runs of each, interleaved, all complete,
    and each app's sessions are only in its own store (its steps ran on its workers)."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    async with _two_apps(temporal_client, tmp_path, queue) as stores:
        adk = await _client(temporal_client, queue, own_queues)
        handles: list[tuple[str, str, InvocationHandle]] = []
        for i in range(20):
            for app in APPS:
                session = f"s-{app}-{i}"
                handle = await adk.start(app, USER, session, "weather_agent", "weather in Paris?")
                handles.append((app, session, handle))
        results = await asyncio.gather(*(h.result() for _, _, h in handles))
        assert [r.status for r in results] == ["completed"] * 40
        for app, _, handle in handles:
            assert await _started_on(handle) == (
                app_task_queue(queue, app) if own_queues else queue
            )
        for app, session, _ in handles:
            other = next(a for a in APPS if a != app)
            mine = [s.id for s in await stores[app].list(app, USER)]
            assert mine.count(session) == 1
            assert await stores[other].list(app, USER) == []


@pytest.mark.parametrize("own_queues", [True, False], ids=["own-queues", "shared-queue"])
async def test_an_approval_on_a_shared_queue_runs_its_tool_on_the_apps_worker(
    temporal_client: Client, tmp_path: Path, own_queues: bool
) -> None:
    """On a shared queue, a paid report paused for approval and handed over to a new run
    (continue-as-new) runs its tool, once approved, on its own app's worker."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    async with _two_apps(temporal_client, tmp_path, queue):
        adk = await _client(temporal_client, queue, own_queues)
        handles = [
            await adk.start(
                app,
                USER,
                f"paid-{app}-{i}",
                "weather_agent",
                "Buy a weather report for Paris!",
                continue_as_new_after_events=5,
            )
            for i in range(3)
            for app in APPS
        ]
        for handle in handles:
            await handle.wait_for_status("awaiting_confirmation", timeout=60)
        # Listed by the shared queue's name wherever they started. The status query can be
        # answered by a run about to hand over (its requests open, its status not yet
        # published), so visibility shows the pause only once the new run's first task is
        # done: on a loaded machine that can take a while.
        wanted = {h.workflow_id for h in handles}
        listed: set[str] = set()
        with suppress(TimeoutError):
            async with asyncio.timeout(90):
                while (listed := set(await adk.waiting(task_queue=queue))) != wanted:
                    await asyncio.sleep(0.2)
        assert listed == wanted, f"missing {wanted - listed}, extra {listed - wanted}"
        for handle in handles:
            [request] = await handle.pending()
            await handle.confirm(request.id, True)
        results = await asyncio.gather(*(h.result() for h in handles))
        assert [r.status for r in results] == ["completed"] * 6
        for i in range(3):
            for app in APPS:
                other = next(a for a in APPS if a != app)
                session = f"paid-{app}-{i}"
                assert await _report_versions(tmp_path / app, app, session) == [1]
                assert await _report_versions(tmp_path / other, app, session) == []


async def _report_versions(data_dir: Path, app: str, session: str) -> list[int]:
    """The versions of ``report.txt`` the session has in the artifact store under ``data_dir``."""
    store = artifact_store(data_dir)
    request = VersionsRequest(
        app_name=app, user_id=USER, session_id=session, file_name="report.txt"
    )
    try:
        return (await store.versions(request)).versions
    except ArtifactNotFoundError:
        return []
