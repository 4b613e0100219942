"""Fixtures for the flow tier: the invocation flow in-process, on the in-process runner.

The same flow Temporal runs, without a server: these tests exercise agent orchestration,
confirmation, input and merging in milliseconds. What Temporal itself does (signals,
updates, replay, crashes, continue-as-new, visibility) stays in ``tests/integration``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from adk_temporal.agents import BaseAgent
from adk_temporal.app import App, Stores
from adk_temporal.artifacts import InMemoryArtifactService
from adk_temporal.budgets import Budgets
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService


class LocalRuntime:
    """A runner and the stores it writes to (the shape of the integration ``Runtime``)."""

    def __init__(
        self, runner: Runner, sessions: InMemorySessionService, artifacts: InMemoryArtifactService
    ) -> None:
        self.adk = runner
        self.sessions = sessions
        self.artifacts = artifacts


LocalFactory = Callable[..., AbstractAsyncContextManager[LocalRuntime]]


@pytest.fixture
def run_local() -> LocalFactory:
    """A runner for ``agents`` (and the other ``App`` settings given) with in-memory
    sessions and artifacts."""

    @asynccontextmanager
    async def factory(
        agents: Sequence[BaseAgent], *, budgets: Budgets | None = None, **app_settings: Any
    ) -> AsyncIterator[LocalRuntime]:
        sessions = InMemorySessionService()
        artifacts = InMemoryArtifactService()
        app = App(agents, **app_settings)
        runner = Runner(app, stores=Stores(sessions, artifacts), budgets=budgets)
        yield LocalRuntime(runner, sessions, artifacts)

    return factory
