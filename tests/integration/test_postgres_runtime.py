"""The runtime on the multi-machine session store: two workers, one PostgreSQL database."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.app import App, Stores
from adk_temporal.artifacts import FileArtifactService, VersionsRequest
from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey
from adk_temporal.plugin import AdkPlugin, adk_data_converter
from adk_temporal.sessions import PostgresSessionService

pytestmark = pytest.mark.integration


def _worker(
    client: Client,
    task_queue: str,
    sessions: PostgresSessionService,
    artifacts: FileArtifactService,
) -> Worker:
    """A worker with its own PostgreSQL connection pool, like a worker on another machine."""
    plugin = AdkPlugin(
        App([build_weather_agent("scripted:weather")]), stores=Stores(sessions, artifacts)
    )
    return Worker(
        client,
        task_queue=task_queue,
        plugins=[plugin],
        max_cached_workflows=0,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )


async def test_two_workers_share_sessions_in_postgres(
    temporal_client: Client, dev_server: DevServer, postgres_dsn: str, tmp_path: object
) -> None:
    """Steps of one invocation spread over two workers; the session stays whole and ordered."""
    task_queue = f"pg-{uuid.uuid4().hex[:8]}"
    artifacts = FileArtifactService(f"{tmp_path}/artifacts")
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    # A second connection, as a worker on another machine would have.
    other = await Client.connect(dev_server.address, data_converter=adk_data_converter())
    pools = [PostgresSessionService(postgres_dsn) for _ in range(3)]
    reader = pools[2]
    first = _worker(temporal_client, task_queue, pools[0], artifacts)
    second = _worker(other, task_queue, pools[1], artifacts)
    async with first, second:
        adk = AdkClient(temporal_client, task_queue=task_queue, session_service=reader)
        weather = await adk.start(
            APP_NAME, "u-1", session_id, "weather_agent", "What's the weather in Oslo?"
        )
        assert (await weather.result()).status == "completed"
        handle = await adk.start(
            APP_NAME, "u-1", session_id, "weather_agent", "Buy a weather report for Oslo"
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        session = await reader.get(SessionKey(APP_NAME, "u-1", session_id))
        versions = await artifacts.versions(
            VersionsRequest(
                app_name=APP_NAME, user_id="u-1", session_id=session_id, file_name="report.txt"
            )
        )
    for pool in pools:
        await pool.close()
    assert result.status == "completed"
    assert versions.versions == [1]
    assert session.state["last_city"] == "Oslo"
    assert session.state["last_report_city"] == "Oslo"
    ids = [e.id for e in session.events]
    assert len(ids) == len(set(ids))
    authors = [e.author for e in session.events]
    assert authors[:4] == ["user", "weather_agent", "weather_agent", "weather_agent"]
    assert [e.invocation_id for e in session.events][-1] == result.invocation_id
