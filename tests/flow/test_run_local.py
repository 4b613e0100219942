"""``adk-temporal run --local``: the flow in the CLI's process, answered on the terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..commands import adk_command, offline_env

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
