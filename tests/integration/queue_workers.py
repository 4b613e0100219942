"""Workers of several apps on one server, each with its own stores and connection (as
separate worker processes would be: one connection cannot poll a queue twice)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig

from adk_temporal.app import App, Stores
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.plugin import AdkPlugin
from adk_temporal.queues import live_identities
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.worker import artifact_store, build_worker

__all__ = ["UncheckedPlugin", "connect_like", "polled", "weather_app", "workers"]


class UncheckedPlugin(AdkPlugin):
    """The plugin as workers were before the queue check: it polls any queue it is given."""

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """The plugin's parts, the queue unchecked."""
        return SimplePlugin.configure_worker(self, config)


def weather_app(name: str | None) -> App:
    """The weather agent on the scripted model, as app ``name`` (``None``: unnamed)."""
    return App(agents=[build_weather_agent("scripted:weather")], name=name)


async def connect_like(client: Client) -> Client:
    """A new connection to ``client``'s server with its data converter."""
    return await Client.connect(
        client.service_client.config.target_host, data_converter=client.data_converter
    )


@asynccontextmanager
async def workers(
    client: Client,
    root: Path,
    task_queue: str,
    apps: dict[str, App],
    *,
    max_cached_workflows: int = 0,
) -> AsyncIterator[dict[str, SqliteSessionService]]:
    """One ``build_worker`` worker per entry of ``apps`` (keyed by a label that also names
    its data directory under ``root``), all on ``task_queue``; yields their session stores."""
    stores: dict[str, SqliteSessionService] = {}
    async with AsyncExitStack() as stack:
        for label, app in apps.items():
            sessions = SqliteSessionService(root / label / "sessions.db")
            stack.push_async_callback(sessions.close)
            stores[label] = sessions
            worker = build_worker(
                await connect_like(client),
                app,
                task_queue=task_queue,
                stores=Stores(sessions, artifact_store(root / label)),
                max_cached_workflows=max_cached_workflows,
                sticky_timeout=timedelta(seconds=1),
            )
            await stack.enter_async_context(worker)
        yield stores


async def polled(client: Client, *queues: str, apps: tuple[str, ...] = ()) -> None:
    """Wait until a live worker polls each of ``queues``, and each of ``apps`` is among the
    apps the pollers of every one of them serve (when given)."""
    async with asyncio.timeout(60):
        for queue in queues:
            while not (found := await live_identities(client, queue)) or not all(
                any(f"adk-apps={app}" in identity for identity in found) for app in apps
            ):
                await asyncio.sleep(0.2)
