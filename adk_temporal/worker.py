"""Running a worker: the embedded stores, the GCS store, and the worker loop itself.

The embedded default keeps everything in one data directory — ``sessions.db`` (SQLite, safe
for several worker processes on the machine) and ``artifacts/`` (files) — so a worker can be
killed and restarted, or joined by a second one, without losing anything. Workers on several
machines share a PostgreSQL session store and a GCS bucket instead.
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from .app import App, Stores
from .artifacts import ArtifactService, FileArtifactService, GcsArtifactService
from .ids import any_app_task_queue, app_task_queue
from .keys import DataKeys, SealedArtifactService, StoreSealer
from .model_limits import ModelLimit, model_queue
from .plugin import AdkPlugin
from .queues.pollers import APPS_MARK, STARTS_HERE_MARK, served_apps
from .sessions import SessionService, SqliteSessionService

__all__ = [
    "APPS_MARK",
    "MAX_CACHED_WORKFLOWS",
    "AdkWorker",
    "artifact_store",
    "build_worker",
    "freeze_heap",
    "serve",
    "served_apps",
    "session_store",
    "worker_identity",
]


def worker_identity(app: App, *, starts_here: bool = False) -> str:
    """``pid@host`` as Temporal's default, plus the served app's name when it has one;
    ``starts_here`` marks the worker of the app's own queue as taking runs started there."""
    base = f"{os.getpid()}@{socket.gethostname()}"
    if starts_here:
        base += STARTS_HERE_MARK
    return f"{base}{APPS_MARK}{app.name}" if app.name else base


def session_store(
    data_dir: str | Path, postgres_dsn: str | None = None, *, keys: DataKeys | None = None
) -> SessionService:
    """``PostgresSessionService(postgres_dsn)`` when a DSN is given (workers on several
    machines), else the embedded store ``<data_dir>/sessions.db`` (one machine); with
    ``keys``, each session's rows sealed with its data key."""
    sealer = StoreSealer(keys) if keys is not None else None
    if postgres_dsn:
        from .sessions import PostgresSessionService

        return PostgresSessionService(postgres_dsn, sealer=sealer)
    root = Path(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    return SqliteSessionService(root / "sessions.db", sealer=sealer)


def artifact_store(
    data_dir: str | Path, gcs_bucket: str | None = None, *, keys: DataKeys | None = None
) -> ArtifactService:
    """``GcsArtifactService(gcs_bucket)`` when a bucket is given, else ``<data_dir>/artifacts``;
    with ``keys``, contents sealed with each session's data key."""
    store: ArtifactService = (
        GcsArtifactService(gcs_bucket)
        if gcs_bucket
        else FileArtifactService(Path(data_dir) / "artifacts")
    )
    return SealedArtifactService(store, keys) if keys is not None else store


MAX_CACHED_WORKFLOWS = 1000
"""How many runs a workflow worker keeps in its cache unless told: a waiting run answered in
the cache skips replaying its history (docs/guides/scale.md, "Sizing the worker's cache")."""


def build_worker(
    client: Client,
    app: App,
    *,
    task_queue: str,
    stores: Stores,
    max_cached_workflows: int = MAX_CACHED_WORKFLOWS,
    sticky_timeout: timedelta = timedelta(seconds=10),
) -> AdkWorker:
    """The Temporal workers serving ``app`` with the given stores: one on ``task_queue``,
    one on the named app's own queue beside it (``ids.app_task_queue``: where the client
    starts the app's runs once it sees the queue polled, and where runs started on
    ``task_queue`` move their steps) or, for an unnamed app, on the queue of the workers
    that serve every app (``ids.any_app_task_queue``: where runs move their steps when
    named apps' workers share ``task_queue``), and one on the task queue of each of the
    app's model limits (:mod:`.model_limits`).

    Args:
        client: A connected client.
        app: The agents and models to serve.
        task_queue: The queue to poll.
        stores: Where sessions and artifacts live, shared by every worker of the
            deployment.
        max_cached_workflows: Workflow cache size of each of the two workflow workers;
            ``0`` replays every task from history.
        sticky_timeout: How long a cached workflow's next task waits for this worker
            before any worker may take it (lower it where workers are killed often).

    Raises:
        WorkerQueueError: ``task_queue`` is another app's own queue (or the unnamed apps'
            queue, for a named app): the worker would take steps it must not.
    """
    plugin = AdkPlugin(app, stores=stores)

    def polling(queue: str, own: bool = False) -> Worker:
        return Worker(
            client,
            task_queue=queue,
            plugins=[plugin],
            identity=worker_identity(app, starts_here=own),
            max_cached_workflows=max_cached_workflows,
            sticky_queue_schedule_to_start_timeout=sticky_timeout,
        )

    # The own queue's worker is whole: the client starts the app's runs there once it sees
    # the queue polled, and the app's notification children run there too.
    own = (
        polling(app_task_queue(task_queue, app.name), own=True)
        if app.name
        else polling(any_app_task_queue(task_queue))
    )
    limited: dict[str, ModelLimit] = {}
    for limit in app.model_limits:
        limited.setdefault(limit.group, limit)
    model_workers = [
        Worker(
            client,
            task_queue=model_queue(task_queue, group),
            plugins=[plugin.model_step_plugin()],
            identity=worker_identity(app),
            # Enforced by the server across every worker polling the queue.
            max_task_queue_activities_per_second=limit.requests_per_second,
            max_concurrent_activities=limit.concurrency or 100,
        )
        for group, limit in limited.items()
    ]
    return AdkWorker(polling(task_queue), [own, *model_workers])


class AdkWorker:
    """An app's workers, run together: the main one, the one of the app's own queue, and
    those of its model limits' queues.

    Use as an async context manager, as a temporalio ``Worker``.
    """

    def __init__(self, main: Worker, side_workers: Sequence[Worker] = ()) -> None:
        self.main = main
        self.side_workers = list(side_workers)
        self._stack: AsyncExitStack | None = None

    @property
    def client(self) -> Client:
        """The client the workers poll with (the app's data converter configured)."""
        return self.main.client

    async def __aenter__(self) -> AdkWorker:
        """Start every worker."""
        stack = AsyncExitStack()
        try:
            for worker in [self.main, *self.side_workers]:
                await stack.enter_async_context(worker)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Shut every worker down gracefully."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()


def freeze_heap() -> None:
    """Move every object the process holds now into the collector's permanent generation.

    ``adk-temporal worker`` calls it once it built its app and workers, before they poll
    (the collection it starts with holds the process a moment): a full collection holds the
    interpreter while it walks every tracked object, and start-up leaves most of them
    (modules, classes, the app, the SDKs), which never die. Frozen, they are walked no
    more, so the pauses that delay every step of the process shrink to what the running
    invocations hold (docs/performance.md, "Approvals under load: the worker's collector").
    """
    gc.collect()
    gc.freeze()


async def serve(worker: AdkWorker, stop: asyncio.Event) -> None:
    """Run ``worker`` until ``stop`` is set, then shut it down gracefully, MCP connections
    included."""
    try:
        async with worker:
            await stop.wait()
    finally:
        # Only a worker whose agents use MCP toolsets has imported the module (and its SDK).
        mcp = sys.modules.get("adk_temporal.mcp")
        if mcp is not None:
            await mcp.close_connections()
