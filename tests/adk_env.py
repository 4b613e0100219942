"""An environment with google-adk 2.13.0, for the tests that compare against ADK or drive
its own client and dev UI (graphs, ``adk-temporal web``).

google-adk pins google-genai below 3, so it never joins the project's environment: it gets
a virtual environment of its own, built once with pip and kept under
``~/.cache/adk-temporal/`` (a marker file says it is complete; a lock keeps two test
processes from building it at once). Tests talk to the gateway from it over HTTP.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

__all__ = ["ADK_VERSION", "AdkEnv", "adk_env"]

ADK_VERSION = "2.13.0"
_HOME = Path.home() / ".cache" / "adk-temporal"


class AdkEnv:
    """The built environment: its Python and ADK's dev UI bundle."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.root / "bin" / "python"

    @property
    def dev_ui(self) -> Path:
        """The ``google/adk/cli/browser`` directory of the installed wheel."""
        found = sorted(self.root.glob("lib/python*/site-packages/google/adk/cli/browser"))
        assert found, f"no dev UI bundle under {self.root}"
        return found[0]

    def run(
        self, script: Path, *args: str, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run ``script`` with the environment's Python; its output captured."""
        return subprocess.run(
            [str(self.python), str(script), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def adk_env() -> AdkEnv:
    """The google-adk environment, built on first use."""
    root = _HOME / f"google-adk-{ADK_VERSION}"
    done = root / ".complete"
    _HOME.mkdir(parents=True, exist_ok=True)
    with (_HOME / f"google-adk-{ADK_VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True)
            built = subprocess.run(
                [str(root / "bin" / "pip"), "install", "-q", f"google-adk=={ADK_VERSION}"],
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert built.returncode == 0, f"cannot install google-adk: {built.stderr[-2000:]}"
            done.write_text(ADK_VERSION)
    return AdkEnv(root)
