"""An answer sent once its request can be seen — the node that asks has ended and stored
its request, the workflow task that applies its result has not run — is applied, not
refused: Temporal's Python SDK runs an update's validator before the activity results that
came in the same workflow task (``workflows/under_way.py``)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.errors import UnknownRequestIdError
from adk_temporal.ids import SessionKey
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService
from tests.early_answers_app import (
    ASKING,
    GRAPH,
    RELEASE,
    answered_early,
    steps_worker,
    tasks_worker,
)

pytestmark = pytest.mark.integration


async def test_an_answer_with_the_result_that_asks_is_applied(
    temporal_client: Client, tmp_path: Path
) -> None:
    """The asking node ends while no worker takes the run's workflow tasks; the answer, sent
    once the session shows the request, comes in the task with the node's result."""
    sessions = SqliteSessionService(tmp_path / "sessions.db")
    key = SessionKey("app", "u", f"s-{uuid.uuid4().hex[:8]}")
    handle = await answered_early(temporal_client, sessions, f"early-{uuid.uuid4().hex[:8]}", key)
    result = await handle.result()
    await sessions.close()
    assert result.status == "completed"
    assert result.final_text == "answered True"


async def test_an_unknown_id_sent_while_a_step_runs_is_still_refused(
    temporal_client: Client, tmp_path: Path
) -> None:
    """An id no step opens, sent while the node runs, is refused by the checked update as
    before; the run then waits for its real request."""
    ASKING.clear()
    RELEASE.clear()
    sessions = SqliteSessionService(tmp_path / "sessions.db")
    plugin = AdkPlugin(App([GRAPH]), stores=Stores(sessions))
    queue = f"early-{uuid.uuid4().hex[:8]}"
    adk = AdkClient(temporal_client, task_queue=queue, session_service=sessions)
    async with (
        steps_worker(temporal_client, plugin, queue),
        tasks_worker(temporal_client, plugin, queue),
    ):
        handle = await adk.start("app", "u", f"s-{uuid.uuid4().hex[:8]}", "asking", "go")
        await asyncio.to_thread(ASKING.wait, 60)
        try:
            with pytest.raises(UnknownRequestIdError, match="unknown interrupt id 'q-other'"):
                await handle.resume("q-other", {"result": True})
        finally:
            RELEASE.set()
        await handle.wait_for_status("awaiting_input")
        [request] = await handle.pending()
        assert request.id == "q-early"
        await handle.resume("q-early", {"result": False})
        result = await handle.result()
    await sessions.close()
    assert result.final_text == "answered False"
