"""ADK's own eval code agrees with ours: its ``EvalSet`` parses the eval sets we write and
read, and its evaluators give the metric values we compute, on the same inputs
(google-adk 2.13 in its own environment, ``tests/adk_env.py``)."""

from __future__ import annotations

import fcntl
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from adk_temporal.app import Stores
from adk_temporal.evaluation import (
    Criterion,
    MatchType,
    SessionSelection,
    capture_eval_set,
    load_eval_set,
    rouge1_fmeasure,
    select_sessions,
)
from adk_temporal.evaluation.metrics import trajectory_matches
from adk_temporal.examples.weather import app
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService

from ..adk_env import ADK_VERSION, AdkEnv, adk_env
from ..docs.blocks import page_blocks

SIDE = Path(__file__).with_name("adk_eval_side.py")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "evaluating.md"

TEXTS = [
    ("The weather in Paris is light rain.", "It rains in Paris today."),
    ("I rolled the dice twice: 13 and 4.", "I have rolled a 17 sided die twice."),
    ("", "anything at all"),
    ("東京は晴れです", "東京は雨です"),
    ("กินข้าวแล้ว", "กินข้าว"),
    ("Café ﬁne, naïve résumé!", "cafe fine naive resume"),
    ("running runners ran", "run runner running"),
]

A = {"name": "get_weather", "args": {"city": "Paris"}}
B = {"name": "get_weather", "args": {"city": "Rome"}}
C = {"name": "buy_weather_report", "args": {"city": "Oslo"}}
TRAJECTORIES: list[dict[str, Any]] = [
    {"match_type": "EXACT", "ignore_args": False, "actual": [A, B], "expected": [A, B]},
    {"match_type": "EXACT", "ignore_args": False, "actual": [B, A], "expected": [A, B]},
    {"match_type": "EXACT", "ignore_args": True, "actual": [B], "expected": [A]},
    {"match_type": "IN_ORDER", "ignore_args": False, "actual": [A, C, B], "expected": [A, B]},
    {"match_type": "IN_ORDER", "ignore_args": False, "actual": [B, A], "expected": [A, B]},
    {"match_type": "ANY_ORDER", "ignore_args": False, "actual": [B, C, A], "expected": [A, B]},
    {"match_type": "ANY_ORDER", "ignore_args": False, "actual": [A], "expected": [A, A]},
]


@pytest.fixture(scope="module")
def adk() -> AdkEnv:
    """The google-adk environment."""
    return adk_env()


@pytest.fixture(scope="module")
def eval_deps(adk: AdkEnv) -> Path:
    """ADK's eval extra's rouge-score, installed once beside the environment (not into it:
    the environment stays as the other suites built it)."""
    target = adk.root.parent / f"google-adk-{ADK_VERSION}-eval-deps"
    with (adk.root.parent / f"google-adk-{ADK_VERSION}-eval-deps.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            built = subprocess.run(
                [
                    str(adk.root / "bin" / "pip"),
                    "install",
                    "-q",
                    "--target",
                    str(target),
                    "rouge-score==0.1.2",
                ],
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert built.returncode == 0, built.stderr[-2000:]
            (target / ".complete").write_text("rouge-score")
    return target


def _docs_eval_set(path: Path) -> Path:
    """The eval set the guide writes "as ADK's docs show", taken from its first block."""
    block = next(b for b in page_blocks(GUIDE) if "cat > weather.evalset.json" in b.code)
    body = block.code.split("<<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]
    path.write_text(body)
    return path


async def _captured(path: Path) -> Path:
    """Two recorded sessions of the weather app captured as an eval set file."""
    sessions = InMemorySessionService()
    runner = Runner(app, stores=Stores(sessions))
    await runner.run("weather", "u", "s-1", "weather_agent", "What's the weather in Paris?")
    await runner.run("weather", "u", "s-1", "weather_agent", "And the weather in Rome?")
    await runner.run("weather", "u", "s-2", "weather_agent", "Hello")
    chosen = await select_sessions(sessions, SessionSelection("weather", ["u"]))
    eval_set = await capture_eval_set(sessions, chosen, eval_set_id="captured")
    path.write_text(eval_set.model_dump_json(indent=2, exclude_none=True))
    return path


def _adk_side(adk: AdkEnv, deps: Path, given: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps(given))
    result = subprocess.run(
        [str(adk.python), str(SIDE), str(deps), str(inputs)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return found


def _ours(case: dict[str, Any]) -> float:
    def calls(items: list[dict[str, Any]]) -> list[types.FunctionCall]:
        return [types.FunctionCall(name=c["name"], args=c["args"]) for c in items]

    criterion = Criterion(
        threshold=1.0, match_type=MatchType[case["match_type"]], ignore_args=case["ignore_args"]
    )
    matched = trajectory_matches(calls(case["actual"]), calls(case["expected"]), criterion)
    return 1.0 if matched else 0.0


async def test_adk_parses_our_eval_sets_and_scores_as_we_do(
    adk: AdkEnv, eval_deps: Path, tmp_path: Path
) -> None:
    """ADK's EvalSet reads a captured eval set and the docs' hand-written one with the same
    cases and turns as ours; ADK's RougeEvaluator and TrajectoryEvaluator give exactly our
    values on the same texts and calls (Unicode, stemming and every match type)."""
    captured = await _captured(tmp_path / "captured.evalset.json")
    files = [str(captured), str(_docs_eval_set(tmp_path / "weather.evalset.json"))]
    theirs = _adk_side(
        adk,
        eval_deps,
        {"eval_sets": files, "texts": TEXTS, "trajectories": TRAJECTORIES},
        tmp_path,
    )
    for path in files:
        mine = load_eval_set(Path(path))
        assert theirs["parsed"][path] == {
            c.eval_id: len(c.conversation or []) for c in mine.eval_cases
        }
    assert theirs["parsed"][str(captured)] == {"s-1": 2, "s-2": 1}
    assert theirs["rouge"] == [rouge1_fmeasure(c, r) for c, r in TEXTS]
    assert theirs["trajectory"] == [_ours(case) for case in TRAJECTORIES]
    assert len(set(theirs["rouge"])) > 3 and set(theirs["trajectory"]) == {0.0, 1.0}
