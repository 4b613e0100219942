"""The ADK side of the graph differential suite: the scenarios run on google-adk 2.13 in its
own environment (:mod:`tests.adk_env`), its events, state and error read back as JSON."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ..adk_env import adk_env
from .scenarios import SCENARIOS

__all__ = ["run_on_adk"]

_SCRIPT = Path(__file__).resolve().parent / "adk_side.py"


def run_on_adk(scenario: str) -> dict[str, Any]:
    """What google-adk stored for ``scenario`` (events, state, the run's error)."""
    found = _every_run()[scenario]
    if "harness_error" in found:
        raise RuntimeError(f"the ADK side failed on {scenario}:\n{found['harness_error']}")
    return dict(found)


@cache
def _every_run() -> dict[str, dict[str, Any]]:
    """Every scenario run on google-adk, in one process: starting google-adk costs more
    than most scenarios, and a test session compares them all."""
    done = adk_env().run(_SCRIPT, *SCENARIOS)
    if done.returncode != 0:
        raise RuntimeError(f"the ADK side failed:\n{done.stderr[-4000:]}")
    runs: dict[str, dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return runs
