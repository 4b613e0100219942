"""Counterfactual replay of recorded sessions: tools served from the record, never run, live
stores untouched, planted divergences found (``adk_temporal.evaluation.replay``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adk_temporal.app import Stores
from adk_temporal.artifacts import FileArtifactService
from adk_temporal.evaluation import CandidateChange, ReplayOptions, replay_sessions
from adk_temporal.ids import SessionKey
from adk_temporal.runner import Runner
from adk_temporal.sessions import SqliteSessionService
from tests import eval_app

from ..commands import run_adk

SESSIONS = 50
PLANTED = ("Rome", "Lima")
CITIES = ("Paris", "Rome", "Oslo", "Lima", "Kyoto")


@dataclass
class Recorded:
    """The live stores after recording, and the side-effect log."""

    data: Path
    log: Path
    keys: list[SessionKey]


async def _record(runner: Runner, key: SessionKey, index: int) -> None:
    city = CITIES[index % len(CITIES)]
    await runner.run(*key, "travel_agent", f"What is the weather in {city}?")
    if index % 5 == 0:
        run = await runner.start(*key, "travel_agent", f"book a trip to {city}")
        await run.wait_for_status("awaiting_confirmation")
        [request] = await run.pending()
        await run.confirm(request.id, index % 10 == 0)
        await run.result()
    if index % 7 == 0:
        run = await runner.start(*key, "travel_agent", "which dates suit?")
        await run.wait_for_status("awaiting_input")
        [request] = await run.pending()
        await run.resume(request.id, "May 3 to May 9")
        await run.result()


@pytest.fixture(scope="module")
async def recorded(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Recorded]:
    """50 sessions of the travel app recorded in a SQLite store and a file artifact store."""
    data = tmp_path_factory.mktemp("live")
    log = data / "tools.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(eval_app.LOG_ENV, str(log))
        stores = Stores(SqliteSessionService(data / "sessions.db"), FileArtifactService(data / "a"))
        runner = Runner(eval_app.app, stores=stores)
        keys = [SessionKey("travel", f"u{i % 3}", f"s-{i:02d}") for i in range(SESSIONS)]
        for index, key in enumerate(keys):
            await _record(runner, key, index)
        await stores.sessions.close()
    yield Recorded(data, log, keys)


def _fingerprint(data: Path) -> dict[str, str]:
    """Every file of the live data directory by its bytes' digest."""
    return {
        str(p.relative_to(data)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data.rglob("*"))
        if p.is_file()
    }


async def _replay(recorded: Recorded, change: CandidateChange, log: Path) -> dict[str, Any]:
    store = SqliteSessionService(recorded.data / "sessions.db")
    artifacts = FileArtifactService(recorded.data / "a")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(eval_app.LOG_ENV, str(log))
            report = await replay_sessions(
                store, artifacts, recorded.keys, eval_app.app, change, ReplayOptions(concurrency=8)
            )
    finally:
        await store.close()
    return report.as_json()


async def test_a_changed_instruction_diverges_where_planted_and_runs_no_tool(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Replaying 50 sessions against a changed instruction runs no tool, changes no byte of
    the live stores, and reports exactly the sessions whose weather question the new
    instruction answers from memory, at turn 1, with get_weather dropped."""
    before = _fingerprint(recorded.data)
    log = tmp_path / "replay-tools.log"
    instruction = f"{eval_app.INSTRUCTION}\nAnswer from memory for: {', '.join(PLANTED)}"
    report = await _replay(
        recorded, CandidateChange(instructions={"travel_agent": instruction}), log
    )
    assert eval_app.executions(log) == []
    assert _fingerprint(recorded.data) == before
    sessions = report["sessions"]
    assert isinstance(sessions, list) and len(sessions) == SESSIONS
    diverged = {s["session_id"] for s in sessions if s["first_divergence"] is not None}
    planted = {f"s-{i:02d}" for i in range(SESSIONS) if CITIES[i % len(CITIES)] in PLANTED}
    assert diverged == planted
    for session in sessions:
        if session["session_id"] not in planted:
            continue
        city = CITIES[int(session["session_id"][2:]) % len(CITIES)]
        assert session["first_divergence"] == {
            "turn": 1,
            "kind": "call",
            "recorded": f'get_weather({{"city": "{city}"}})',
            "candidate": "-",
        }
        assert session["calls_dropped"] == [f'get_weather({{"city": "{city}"}})']
        assert session["calls_added"] == []
        assert session["similarity"] < 1.0
    assert report["totals"]["unmatched_calls"] == 0


async def test_the_unchanged_agent_reports_no_divergence(
    recorded: Recorded, tmp_path: Path
) -> None:
    """The same replay with the unchanged agent reports no divergence, the recorded tokens,
    approvals and inputs answered as recorded, and no tool run; twice, the same JSON."""
    log = tmp_path / "replay-tools.log"
    first = await _replay(recorded, CandidateChange(), log)
    again = await _replay(recorded, CandidateChange(), log)
    assert first == again
    totals = first["totals"]
    assert isinstance(totals, dict)
    assert totals["diverged"] == 0 and totals["errors"] == 0
    assert totals["mean_similarity"] == 1.0
    assert totals["tokens_before"] == totals["tokens_after"] > 0
    assert eval_app.executions(log) == []
    statuses = {t["status"] for s in first["sessions"] for t in s["turns"]}
    assert statuses == {"completed"}


async def test_an_unrecorded_call_is_reported_and_answered_without_running(
    recorded: Recorded, tmp_path: Path
) -> None:
    """A candidate call the record never made is listed as unmatched and answered with
    'no recorded result'; with a sandbox app it runs there, never against the live stores."""
    store = SqliteSessionService(recorded.data / "sessions.db")
    log = tmp_path / "replay-tools.log"
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(eval_app.LOG_ENV, str(log))
            # The candidate's model asks for Berlin's weather whatever the city asked.
            change = CandidateChange(model=eval_app.BERLIN_MODEL)
            report = await replay_sessions(
                store,
                None,
                [recorded.keys[0]],
                eval_app.app,
                change,
                ReplayOptions(sandbox=eval_app.app),
            )
    finally:
        await store.close()
    [session] = report.sessions
    assert session.unmatched_calls == ['get_weather({"city": "Berlin"})']
    assert session.sandbox_calls == 1
    assert eval_app.executions(log) == ["get_weather Berlin"]


def test_replay_eval_command_prints_json_and_a_chart(recorded: Recorded, tmp_path: Path) -> None:
    """``replay-eval --json --plot`` reports every chosen session for CI and writes a
    self-contained HTML chart; ``--fail-on-divergence`` exits 4 on a planted divergence."""
    instruction = tmp_path / "new.txt"
    instruction.write_text(f"{eval_app.INSTRUCTION}\nAnswer from memory for: Rome")
    chart = tmp_path / "replay.html"
    result = run_adk(
        "replay-eval",
        "--app",
        "travel",
        "--user",
        "u1",
        "--session",
        "s-01,s-04",
        "--data-dir",
        str(recorded.data),
        "--agent",
        "tests.eval_app:app",
        "--instruction-file",
        str(instruction),
        "--plot",
        str(chart),
        "--json",
        "--fail-on-divergence",
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 4, result.stderr
    report = json.loads(result.stdout)
    assert [s["session_id"] for s in report["sessions"]] == ["s-01", "s-04"]
    assert report["totals"]["diverged"] == 1
    page = chart.read_text()
    assert "s-01" in page and "<svg" in page and "http" not in page
