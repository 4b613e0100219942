"""A graph whose asking node ends while no worker takes the run's workflow task, and an
answer that arrives beside its result (``tests/integration/test_early_answers.py``, and
the ``early_answer`` replay history)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

import adk_temporal.workflow as w
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.ids import SessionKey
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SessionService

__all__ = ["ASKING", "GRAPH", "RELEASE", "answered_early", "steps_worker", "tasks_worker"]

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


def tasks_worker(client: Client, plugin: AdkPlugin, queue: str) -> Worker:
    """A worker of the run's workflow tasks only, every task replayed from history."""
    return Worker(
        client, task_queue=queue, plugins=[plugin], max_cached_workflows=0,
        no_remote_activities=True,
    )  # fmt: skip


def steps_worker(client: Client, plugin: AdkPlugin, queue: str) -> Worker:
    """A worker of the run's steps only: they go on while no workflow task is taken."""
    activities = plugin.activities
    assert isinstance(activities, Sequence)  # the plugin lists them, it does not compute
    return Worker(client, task_queue=queue, activities=activities)


async def _stored_request(sessions: SessionService, key: SessionKey) -> None:
    """Until the session holds the request's event (what a UI reading it would show)."""
    while True:
        events = (await sessions.get(key)).events
        if any(call.id == "q-early" for e in events for call in e.function_calls()):
            return
        await asyncio.sleep(0.05)


async def answered_early(
    client: Client, sessions: SessionService, queue: str, key: SessionKey
) -> InvocationHandle:
    """Run the graph in ``key``: its node ends while no worker takes the run's tasks, and
    the answer, sent once the session shows the request, waits beside the node's result
    for a new worker; the run's handle, once it ended."""
    ASKING.clear()
    RELEASE.clear()
    plugin = AdkPlugin(App([GRAPH]), stores=Stores(sessions))
    adk = AdkClient(client, task_queue=queue, session_service=sessions)
    async with steps_worker(client, plugin, queue):
        async with tasks_worker(client, plugin, queue):
            handle = await adk.start(key.app_name, key.user_id, key.session_id, "asking", "go")
            await asyncio.to_thread(ASKING.wait, 60)
        RELEASE.set()  # the node ends with no worker to take the task that applies it
        await asyncio.wait_for(_stored_request(sessions, key), 60)
        answering = asyncio.create_task(handle.resume("q-early", {"result": True}))
        await asyncio.sleep(0.5)  # the update waits for the task, beside the node's result
        async with tasks_worker(client, plugin, queue):
            await asyncio.wait_for(answering, 60)
            await handle.result()
    return handle
