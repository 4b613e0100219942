"""The ADK side of the graph differential suite: a scenario run on google-adk 2.13 in its
own environment (:mod:`tests.adk_env`), its events, state and error read back as JSON."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ..adk_env import adk_env

__all__ = ["run_on_adk"]

_SCRIPT = Path(__file__).resolve().parent / "adk_side.py"


@cache
def run_on_adk(scenario: str) -> dict[str, Any]:
    """What google-adk stored for ``scenario`` (events, state, the run's error)."""
    done = adk_env().run(_SCRIPT, scenario)
    if done.returncode != 0:
        raise RuntimeError(f"the ADK side failed on {scenario}:\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))
