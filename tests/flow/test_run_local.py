"""``adk-temporal run --local``: the flow in the CLI's process, answered on the terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..commands import adk_command, offline_env, run_adk

EXIT_PAUSED = 3


def _run_local(
    data_dir: Path, session: str, message: str, answers: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *adk_command(),
            "run",
            "--local",
            "--data-dir",
            str(data_dir),
            "--app",
            "weather",
            "--user",
            "u-1",
            "--session",
            session,
            "--agent",
            "weather_agent",
            message,
        ],
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )


def test_an_approval_given_on_the_terminal_completes_the_purchase(tmp_path: Path) -> None:
    """The request is asked on stderr; "y" re-enters the tool, which saves report.txt v1."""
    result = _run_local(tmp_path, "s-buy", "Buy a weather report for Oslo", "y\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "approval needed for buy_weather_report(city='Oslo')" in result.stderr
    assert '"status": "purchased"' in result.stdout
    assert "completed after 2 step(s)" in result.stdout
    assert (tmp_path / "sessions.db").exists()
    saved = [p for p in (tmp_path / "artifacts").rglob("*") if "report.txt" in p.parts]
    assert saved, "report.txt was not saved in the data directory"


def test_an_input_is_asked_again_until_it_fits_the_schema(tmp_path: Path) -> None:
    """A schema violation and a non-JSON line are refused on the terminal; a valid value fits."""
    dates = {"start": "2026-12-01", "end": "2026-12-03"}
    answers = f'{{"start": "2026-12-01"}}\nnot json\n{json.dumps(dates)}\n'
    result = _run_local(tmp_path, "s-trip", "Help me plan a trip", answers)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "'end' is a required property; try again" in result.stderr
    assert "not JSON" in result.stderr
    assert '"status": "dates received"' in result.stdout


def test_end_of_input_while_waiting_exits_paused(tmp_path: Path) -> None:
    """No answer (stdin closed) ends the local run with the paused status, 3."""
    result = _run_local(tmp_path, "s-eof", "Help me plan a trip", "")
    assert result.returncode == EXIT_PAUSED, result.stdout + result.stderr
    assert "no answer" in result.stderr
    assert "Traceback" not in result.stderr


BUDGETED_APP = """
from datetime import timedelta

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.models import LlmResponse, ModelRegistry
from adk_temporal.usage import TokenBudgets


class Priced:
    name = "scripted:priced"

    async def generate(self, request):
        usage = types.GenerateContentResponseUsageMetadata(total_token_count=100)
        part = types.Part(text="answer")
        return LlmResponse(content=types.Content(role="model", parts=[part]), usage=usage)


models = ModelRegistry()
models.register("scripted:priced", lambda _name: Priced())
app = App(
    agents=[Agent("assistant", "scripted:priced")],
    name="budgeted",
    models=models,
    token_budgets=TokenBudgets(session=50),
    request_timeout=timedelta(minutes=1),
)
"""


def test_run_local_applies_the_apps_token_budget(tmp_path: Path) -> None:
    """`run --local --local-app` takes the App whole: its session budget (50 tokens, 100 a
    reply) pauses the session's second turn on the terminal, and a refusal ends it (the
    budget was dropped on this path before)."""
    (tmp_path / "budgeted_app.py").write_text(BUDGETED_APP)

    def turn(message: str, answers: str) -> subprocess.CompletedProcess[str]:
        return run_adk(
            "run",
            "--local",
            "--local-app",
            "budgeted_app:app",
            "--data-dir",
            str(tmp_path / "data"),
            "--app",
            "budgeted",
            "--user",
            "u-1",
            "--session",
            "s-1",
            "--agent",
            "assistant",
            message,
            cwd=tmp_path,
            stdin=answers,
        )

    first = turn("one", "")
    assert first.returncode == 0, first.stdout + first.stderr
    second = turn("two", '{"allow": 0}\n')
    assert "token budget of the session (50 tokens) is reached" in second.stderr, (
        second.stdout + second.stderr
    )
    assert second.returncode != 0
