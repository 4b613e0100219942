"""``adk-temporal eval``: ADK eval sets run in-process, a failing case fails with ADK's metric
value and exit status 4, bad input is a one-line error, and ``eval capture`` output runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..commands import run_adk

APP = "adk_temporal.examples.weather:app"


def _case(eval_id: str, question: str, city: str, answer: str) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "invocation_id": "t1",
                "user_content": {"role": "user", "parts": [{"text": question}]},
                "final_response": {"role": "model", "parts": [{"text": answer}]},
                "intermediate_data": {
                    "tool_uses": [{"name": "get_weather", "args": {"city": city}}]
                },
            }
        ],
    }


def test_a_failing_case_fails_with_adks_metric_value(tmp_path: Path) -> None:
    """One case passes, one expects another city and answer: exit 4, trajectory 0.0 and the
    ROUGE-1 F of the two answers; choosing only the passing case exits 0."""
    right = "The weather in Paris is light rain, high 16°C, low 4°C."
    path = tmp_path / "w.evalset.json"
    path.write_text(
        json.dumps(
            {
                "eval_set_id": "w",
                "eval_cases": [
                    _case("good", "What's the weather in Paris?", "Paris", right),
                    _case("bad", "What's the weather in Rome?", "Paris", "It is sunny in Rome."),
                ],
            }
        )
    )
    failed = run_adk("eval", APP, str(path), "--json")
    assert failed.returncode == 4, failed.stderr
    report = json.loads(failed.stdout)
    bad = next(c for c in report["cases"] if c["eval_id"] == "bad")
    scores = {m["metric_name"]: m["score"] for m in bad["metrics"]}
    assert scores["tool_trajectory_avg_score"] == 0.0
    assert 0.3 < scores["response_match_score"] < 0.4
    assert bad["status"] == "FAILED" and report["passed"] is False
    assert run_adk("eval", APP, f"{path}:good").returncode == 0


def test_bad_input_is_one_line_and_an_unknown_case_is_named(tmp_path: Path) -> None:
    """A malformed eval set and an unknown case id exit 1 with an error naming the problem."""
    bad = tmp_path / "bad.evalset.json"
    bad.write_text('{"eval_set_id": "x"}')
    result = run_adk("eval", APP, str(bad))
    assert result.returncode == 1 and "eval_cases" in result.stderr
    good = tmp_path / "g.evalset.json"
    good.write_text(json.dumps({"eval_set_id": "g", "eval_cases": [_case("a", "hi", "X", "y")]}))
    result = run_adk("eval", APP, f"{good}:nope")
    assert result.returncode == 1 and "'nope'" in result.stderr


def test_captured_sessions_run_as_an_eval_set(tmp_path: Path) -> None:
    """Sessions recorded by ``run --local`` are captured as one case each and pass."""
    data = str(tmp_path / "data")
    for session, city in (("s-1", "Lisbon"), ("s-2", "Kyoto")):
        ran = run_adk(
            "run",
            "--local",
            "--data-dir",
            data,
            "--app",
            "weather",
            "--user",
            "ana",
            "--session",
            session,
            "--agent",
            "weather_agent",
            f"What's the weather in {city}?",
        )
        assert ran.returncode == 0, ran.stderr
    out = tmp_path / "cap.evalset.json"
    captured = run_adk(
        "eval", "capture", "--data-dir", data, "--app", "weather", "--user", "ana", "-o", str(out)
    )
    assert captured.returncode == 0, captured.stderr
    cases = json.loads(out.read_text())["eval_cases"]
    assert [c["eval_id"] for c in cases] == ["s-1", "s-2"]
    assert run_adk("eval", APP, str(out)).returncode == 0
