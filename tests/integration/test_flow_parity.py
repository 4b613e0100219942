"""The same flow on two engines: Temporal and the in-process runner store the same events.

Each scenario runs once on the real dev server and once in-process, each against its own
SQLite session store and file artifact store, with fresh scripted models. The sessions must
match event by event — author, branch, scope, content, every delta — once generated ids
(UUIDs) are numbered by first appearance and timestamps are left out (parallel branches are
compared branch by branch: how they interleave is timing); so must the final state and every
artifact version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest
from google.genai import types

from adk_temporal.agents import BaseAgent
from adk_temporal.app import App, Stores
from adk_temporal.artifacts import (
    ArtifactService,
    FileArtifactService,
    ListRequest,
    LoadRequest,
    VersionsRequest,
)
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.flow.messages import AdkStatus, InvocationResult, InvocationStatus
from adk_temporal.flow.messages import PendingRequest as Pending
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, default_registry
from adk_temporal.runner import Runner
from adk_temporal.sessions import SessionService, SqliteSessionService

from ..multi_agents import multi_agent_app
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-parity"
SESSION = "s-parity"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Handle(Protocol):
    async def wait_for_status(self, *statuses: AdkStatus, timeout: float = ...) -> InvocationStatus:
        """Wait for a status."""

    async def pending(self) -> list[Pending]:
        """Open requests."""

    async def confirm(self, confirmation_id: str, confirmed: bool) -> None:
        """Answer one."""

    async def result(self) -> InvocationResult:
        """The end."""


Start = Callable[[str, str, str], Awaitable[_Handle]]
Scenario = tuple[Callable[[], tuple[list[BaseAgent], ModelRegistry]], str, list[tuple[str, str]]]


def _weather() -> tuple[list[BaseAgent], ModelRegistry]:
    return [build_weather_agent("scripted:weather")], default_registry()


SCENARIOS: dict[str, Scenario] = {
    "weather_then_paid_report": (
        _weather,
        APP_NAME,
        [
            ("weather_agent", "What's the weather in Hangzhou?"),
            ("weather_agent", "Buy a weather report for Hangzhou"),
        ],
    ),
    # One branch pauses for approval while the other finishes.
    "parallel_agent": (multi_agent_app, "multi", [("mixed", "go")]),
    "transfer_with_escalation": (multi_agent_app, "multi", [("escalator", "check it")]),
    "agent_tool": (multi_agent_app, "multi", [("caller", "which city is rainiest?")]),
}


def _without_waits(value: Any) -> Any:
    """``value`` without the replies' ``waitedSeconds`` and ``answered``: how long a human
    took and when, and the channel (an update here, the runner's own call there)."""
    if isinstance(value, dict):
        return {
            k: _without_waits(v) for k, v in value.items() if k not in ("waitedSeconds", "answered")
        }
    if isinstance(value, list):
        return [_without_waits(v) for v in value]
    return value


async def _drive(start: Start, app: str, turns: Sequence[tuple[str, str]]) -> list[str]:
    """Run the turns in one session, approving every request; return the final statuses."""
    statuses: list[str] = []
    for agent, message in turns:
        handle = await start(app, agent, message)
        while True:
            now = await handle.wait_for_status(
                "awaiting_confirmation", "completed", "failed", timeout=30
            )
            if now.status != "awaiting_confirmation":
                break
            for request in await handle.pending():
                await handle.confirm(request.id, True)
        statuses.append((await handle.result()).status)
    return statuses


def _numbered(value: Any, names: dict[str, str]) -> Any:
    """``value`` as JSON with every UUID replaced by its order of first appearance."""
    text = json.dumps(value, sort_keys=True, default=str)
    return json.loads(_UUID.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names)}>"), text))


def _readable(part: types.Part) -> str:
    """A part's content as text, so the ids inside a JSON file can be numbered too."""
    if part.inline_data is not None:
        data = (part.inline_data.data or b"").decode()
        return f"{part.inline_data.mime_type}: {data}"
    return f"text: {part.text}"


async def _stored(app: str, sessions: SessionService, artifacts: ArtifactService) -> Any:
    """Everything the run left behind, with generated ids numbered."""
    session = await sessions.get(SessionKey(app, USER, SESSION))
    names = await artifacts.list(ListRequest(app_name=app, user_id=USER, session_id=SESSION))
    files: dict[str, list[str]] = {}
    for name in names.file_names:
        ids = {"app_name": app, "user_id": USER, "session_id": SESSION, "file_name": name}
        versions = (await artifacts.versions(VersionsRequest(**ids))).versions
        files[name] = [
            _readable((await artifacts.load(LoadRequest(**ids, version=v))).part) for v in versions
        ]
    numbering: dict[str, str] = {}
    return _numbered(
        {
            # Parallel branches interleave as their steps happen to finish; each branch's
            # own order is the flow's.
            "events": [
                _without_waits(e.model_dump(mode="json", exclude={"timestamp"}))
                for e in sorted(session.events, key=lambda e: e.branch)
            ],
            "state": session.state,
            "artifacts": files,
        },
        numbering,
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_temporal_and_in_process_store_the_same_session(
    name: str, run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """Event by event, state and artifacts: the Temporal run equals the in-process run."""
    build, app, turns = SCENARIOS[name]

    agents, models = build()
    async with run_worker(agents, models=models) as rt:

        async def on_temporal(app: str, agent: str, message: str) -> _Handle:
            return await rt.adk.start(app, USER, SESSION, agent, message)

        temporal_statuses = await _drive(on_temporal, app, turns)
        on_server = await _stored(app, rt.sessions, rt.artifacts)

    agents, models = build()
    sessions = SqliteSessionService(tmp_path / "local" / "sessions.db")
    artifacts = FileArtifactService(tmp_path / "local" / "artifacts")
    runner = Runner(App(agents, models=models), stores=Stores(sessions, artifacts))

    async def in_process(app: str, agent: str, message: str) -> _Handle:
        return await runner.start(app, USER, SESSION, agent, message)

    local_statuses = await _drive(in_process, app, turns)
    local = await _stored(app, sessions, artifacts)
    await sessions.close()

    assert temporal_statuses == local_statuses == ["completed"] * len(turns)
    assert len(on_server["events"]) >= 4
    assert on_server == local
