"""Workers of named apps and one of an unnamed app (``worker --app module:root_agent``,
the ADK habit) on one task queue: the runs of every app complete."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from adk_temporal.client import AdkClient
from adk_temporal.ids import any_app_task_queue, app_task_queue

from .queue_workers import polled, weather_app, workers

pytestmark = pytest.mark.integration

NAMED = ("expenses", "streamy")
UNNAMED = ("foo", "bar")
"""Apps no named worker serves: the unnamed app's worker serves them."""
USER = "u-1"


async def _step_queues(client: Client, workflow_id: str) -> set[str]:
    """The task queues the run scheduled its steps on."""
    queues: set[str] = set()
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            queues.add(event.activity_task_scheduled_event_attributes.task_queue.name)
    return queues


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "replaying"])
async def test_sixteen_interleaved_runs_of_named_and_unnamed_apps_all_complete(
    temporal_client: Client, tmp_path: Path, cached: bool
) -> None:
    """Two named apps' workers and an unnamed app's worker on one queue: 16 runs, four apps
    interleaved, all complete, and each run's session is in the store of the worker that
    serves its app only (no step ran anywhere else)."""
    queue = f"shared-{uuid.uuid4().hex[:8]}"
    apps = {name: weather_app(name) for name in NAMED} | {"unnamed": weather_app(None)}
    async with workers(
        temporal_client, tmp_path, queue, apps, max_cached_workflows=1000 if cached else 0
    ) as stores:
        await polled(
            temporal_client,
            any_app_task_queue(queue),
            *(app_task_queue(queue, name) for name in NAMED),
        )
        await polled(temporal_client, queue, apps=NAMED)
        adk = AdkClient(temporal_client, task_queue=queue)
        handles = [
            (
                app,
                session,
                await adk.start(app, USER, session, "weather_agent", "weather in Paris?"),
            )
            for i in range(4)
            for app in (*NAMED, *UNNAMED)
            for session in [f"s-{app}-{i}"]
        ]
        async with asyncio.timeout(240):
            results = await asyncio.gather(*(h.result() for _, _, h in handles))
        assert [r.status for r in results] == ["completed"] * 16
        # The unnamed apps' runs left the shared queue for the unnamed apps' one: not
        # every one need (a run whose steps all reached the unnamed app's worker on the
        # shared queue is served right), but the move is what the test is about.
        moved = [
            any_app_task_queue(queue) in await _step_queues(temporal_client, h.workflow_id)
            for app, _, h in handles
            if app in UNNAMED
        ]
        assert any(moved), moved
        for app, session, _ in handles:
            serving = app if app in NAMED else "unnamed"
            for label, store in stores.items():
                held = [s.id for s in await store.list(app, USER)].count(session)
                assert held == (1 if label == serving else 0), (app, session, label)
