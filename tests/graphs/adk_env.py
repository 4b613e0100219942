"""google-adk 2.13 in an environment of its own, built once and cached.

google-adk pins google-genai below 3, so it never joins our environment: a venv under
``~/.cache/adk-temporal/`` is made the first time a test needs it (from the wheel in
``/work/ref`` when there, else the package index) and reused afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["ADK_VERSION", "adk_python", "run_on_adk"]

ADK_VERSION = "2.13.0"
_HOME = Path.home() / ".cache" / "adk-temporal" / f"graphs-google-adk-{ADK_VERSION}"
"""This suite's own environment: other suites may build theirs beside it."""
_WHEELS = Path("/work/ref")
_SCRIPT = Path(__file__).resolve().parent / "adk_side.py"


@cache
def adk_python() -> Path:
    """The Python of an environment holding google-adk 2.13.0 (built on first use)."""
    python = _HOME / "bin" / "python"
    ready = _HOME / ".ready"
    if ready.exists():
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(_HOME)
    wheel = _WHEELS / f"google_adk-{ADK_VERSION}-py3-none-any.whl"
    target = str(wheel) if wheel.exists() else f"google-adk=={ADK_VERSION}"
    subprocess.run([str(python), "-m", "pip", "install", "-q", target], check=True, timeout=900)
    ready.write_text(ADK_VERSION)
    return python


@cache
def run_on_adk(scenario: str) -> dict[str, Any]:
    """What google-adk stored for ``scenario`` (events, state, the run's error)."""
    done = subprocess.run(
        [str(adk_python()), str(_SCRIPT), scenario],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the ADK side failed on {scenario}:\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    print(adk_python(), file=sys.stderr)
