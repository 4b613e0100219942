"""Streamed model output on Temporal: Gemini over SSE, pieces through the session store.

The worker's GeminiModel streams from the fake Gemini server; followers read the pieces
through their own connection to the worker's SQLite store (as another process would), the
CLI prints them as they come, and Temporal's history holds no piece.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from adk_temporal.agents import Agent
from adk_temporal.devserver import DevServer
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.testing.fake_gemini import FakeGeminiServer

from ..commands import adk_command, offline_env
from .conftest import WorkerFactory, gemini_models

APP = "streaming"
USER = "u-1"
MODEL = "gemini-2.5-flash"
REPLY = "Oslo will be clear and cold tomorrow, with a high of three degrees."


def _agent() -> Agent:
    return Agent("forecaster", MODEL, "Answer briefly.")


async def test_pieces_reach_another_connection_while_gemini_still_streams(
    run_worker: WorkerFactory, gemini: FakeGeminiServer, tmp_path: Path
) -> None:
    """The first pieces arrive while the last SSE event is held back; the model event then
    supersedes them, and neither the session nor Temporal's history holds a piece."""
    held = threading.Event()
    gemini.enqueue_text_stream(REPLY, chunk_chars=10, hold_last=held)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with (
        run_worker([_agent()], models=gemini_models(gemini)) as rt,
        SqliteSessionService(tmp_path / "sessions.db") as reader,
    ):
        handle = await rt.adk.start(APP, USER, session_id, "forecaster", "Oslo?", stream=True)
        follower = rt.adk.handle(handle.workflow_id)
        follower._sessions = reader  # a client of its own, as in another process
        seen: list[Event] = []
        async with asyncio.timeout(60):
            async for event in follower.stream():
                seen.append(event)
                if event.partial:
                    # Every piece before the hold is released came while Gemini was writing.
                    held.set()
        result = await handle.result()
        history = await handle._handle.fetch_history()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    assert result.final_text == REPLY
    pieces = [e for e in seen if e.partial]
    # Pieces that queue up while one is being published go out merged into one.
    assert pieces and REPLY.startswith(pieces[0].text()) and len(pieces[0].text()) < len(REPLY)
    model_event = seen[-1]
    assert model_event.partial is None and model_event.text() == REPLY
    assert REPLY.startswith("".join(p.text() for p in pieces))
    assert {(p.id, p.attempt, p.author) for p in pieces} == {(model_event.id, 1, "forecaster")}
    assert all(e.partial is None for e in session.events)
    # Temporal saw one model step: the piece texts never crossed history on their own.
    payloads = history.to_json()
    assert payloads.count(REPLY[10:20]) <= 1
    scheduled = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert len(scheduled) == 1


async def test_run_prints_the_reply_as_gemini_writes_it(
    run_worker: WorkerFactory, gemini: FakeGeminiServer, dev_server: DevServer, tmp_path: Path
) -> None:
    """``adk-temporal run`` shows the first piece before the model has finished, and the
    whole reply exactly once; ``events --follow`` in another process shows it too."""
    held = threading.Event()
    gemini.enqueue_text_stream(REPLY, chunk_chars=10, hold_last=held)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([_agent()], models=gemini_models(gemini)) as rt:
        common = ["--data-dir", str(tmp_path), "--app", APP, "--user", USER]
        common += ["--session", session_id]
        await rt.sessions.create(SessionKey(APP, USER, session_id))
        follow = await asyncio.create_subprocess_exec(
            *adk_command(),
            "events",
            "--follow",
            "--json",
            *common,
            stdout=asyncio.subprocess.PIPE,
            env=offline_env(),
        )
        run = await asyncio.create_subprocess_exec(
            *adk_command(),
            "run",
            *common,
            "--agent",
            "forecaster",
            "--address",
            dev_server.address,
            "--task-queue",
            rt.task_queue,
            "Oslo?",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=offline_env(),
        )
        assert run.stdout is not None and follow.stdout is not None
        printed = b""
        # The model holds its last piece back until ``held`` is set: what is printed before
        # then was printed mid-stream.
        async with asyncio.timeout(60):
            while REPLY[:10].encode() not in printed:
                chunk = await run.stdout.read(256)
                assert chunk, printed.decode()
                printed += chunk
        followed: list[dict[str, object]] = []

        async def follow_until(done: Callable[[dict[str, object]], bool]) -> None:
            async with asyncio.timeout(60):
                while not followed or not done(followed[-1]):
                    line = await follow.stdout.readline()  # type: ignore[union-attr]
                    assert line
                    followed.append(json.loads(line))

        # The other process sees a piece too, however late it started following: the pieces
        # stay in the store while the model still holds its last piece back.
        await follow_until(lambda event: bool(event.get("partial")))
        held.set()
        out, err = await asyncio.wait_for(run.communicate(), 60)
        printed += out
        await follow_until(lambda event: not event.get("partial") and event["author"] != "user")
        follow.terminate()
        await follow.wait()
    assert run.returncode == 0, err.decode()
    text = printed.decode()
    assert text.count(REPLY) == 1, text
    assert text.index("Oslo?") < text.index(REPLY), text
    assert "completed after 1 step(s)" in text
    assert followed[-1]["content"]["parts"][0]["text"] == REPLY  # type: ignore[index]
