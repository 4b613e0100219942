"""An answer sent once its request can be seen — the node that asks has ended and stored
its request, the workflow task that applies its result has not run — is applied, not
refused: Temporal's Python SDK runs an update's validator before the activity results that
came in the same workflow task (``workflows/under_way.py``)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

import adk_temporal.workflow as w
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.errors import UnknownRequestIdError
from adk_temporal.ids import SessionKey
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService

pytestmark = pytest.mark.integration

ASKING = threading.Event()
"""Set once the asking node runs."""
RELEASE = threading.Event()
"""Lets the asking node return its request."""


def ask(node_input: Any) -> Any:
    """Ask, once the test lets it."""
    ASKING.set()
    RELEASE.wait(60)
    return w.RequestInput(interrupt_id="q-early", message="Go on?")


def done(node_input: Any) -> str:
    """The answer the run was given."""
    return f"answered {node_input}"


GRAPH = w.Workflow(name="asking", edges=[(w.START, ask, done)])


def _tasks_worker(client: Client, plugin: AdkPlugin, queue: str) -> Worker:
    """A worker of the run's workflow tasks only, every task replayed from history."""
    return Worker(
        client, task_queue=queue, plugins=[plugin], max_cached_workflows=0,
        no_remote_activities=True,
    )  # fmt: skip


def _steps_worker(client: Client, plugin: AdkPlugin, queue: str) -> Worker:
    """A worker of the run's steps only: they go on while no workflow task is taken."""
    activities = plugin.activities
    assert isinstance(activities, Sequence)  # the plugin lists them, it does not compute
    return Worker(client, task_queue=queue, activities=activities)


async def _stored_request(sessions: SqliteSessionService, key: SessionKey) -> None:
    """Until the session holds the request's event (what a UI reading it would show)."""
    while True:
        events = (await sessions.get(key)).events
        if any(call.id == "q-early" for e in events for call in e.function_calls()):
            return
        await asyncio.sleep(0.05)


async def test_an_answer_with_the_result_that_asks_is_applied(
    temporal_client: Client, tmp_path: Path
) -> None:
    """The asking node ends while no worker takes the run's workflow tasks; the answer, sent
    once the session shows the request, comes in the task with the node's result."""
    ASKING.clear()
    RELEASE.clear()
    sessions = SqliteSessionService(tmp_path / "sessions.db")
    plugin = AdkPlugin(App([GRAPH]), stores=Stores(sessions))
    queue = f"early-{uuid.uuid4().hex[:8]}"
    key = SessionKey("app", "u", f"s-{uuid.uuid4().hex[:8]}")
    adk = AdkClient(temporal_client, task_queue=queue, session_service=sessions)
    async with _steps_worker(temporal_client, plugin, queue):
        async with _tasks_worker(temporal_client, plugin, queue):
            handle = await adk.start(key.app_name, key.user_id, key.session_id, "asking", "go")
            await asyncio.to_thread(ASKING.wait, 60)
        RELEASE.set()  # the node ends with no worker to take the task that applies it
        await asyncio.wait_for(_stored_request(sessions, key), 60)
        answering = asyncio.create_task(handle.resume("q-early", {"result": True}))
        await asyncio.sleep(0.5)  # the update waits for the task, beside the node's result
        async with _tasks_worker(temporal_client, plugin, queue):
            await asyncio.wait_for(answering, 60)
            result = await handle.result()
    await sessions.close()
    assert result.status == "completed"
    assert result.final_text == "answered True"


async def test_an_unknown_id_sent_while_a_step_runs_is_still_refused(
    temporal_client: Client, tmp_path: Path
) -> None:
    """An id no step opens, sent while the node runs and with its result, is refused by the
    checked update as before; the run then waits for its real request."""
    ASKING.clear()
    RELEASE.clear()
    sessions = SqliteSessionService(tmp_path / "sessions.db")
    plugin = AdkPlugin(App([GRAPH]), stores=Stores(sessions))
    queue = f"early-{uuid.uuid4().hex[:8]}"
    adk = AdkClient(temporal_client, task_queue=queue, session_service=sessions)
    async with (
        _steps_worker(temporal_client, plugin, queue),
        _tasks_worker(temporal_client, plugin, queue),
    ):
        handle = await adk.start("app", "u", f"s-{uuid.uuid4().hex[:8]}", "asking", "go")
        await asyncio.to_thread(ASKING.wait, 60)
        with pytest.raises(UnknownRequestIdError, match="unknown interrupt id 'q-other'"):
            await handle.resume("q-other", {"result": True})
        RELEASE.set()
        await handle.wait_for_status("awaiting_input")
        [request] = await handle.pending()
        assert request.id == "q-early"
        await handle.resume("q-early", {"result": False})
        result = await handle.result()
    await sessions.close()
    assert result.final_text == "answered False"
