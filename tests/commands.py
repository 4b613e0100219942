"""Running the ``adk-temporal`` command from tests, offline."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["adk_command", "new_key_file", "offline_env", "run_adk", "run_cli"]


def adk_command() -> list[str]:
    """The installed console script beside this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "adk-temporal"
    return [str(script)] if script.exists() else [sys.executable, "-m", "adk_temporal.cli"]


def offline_env() -> dict[str, str]:
    """The environment minus anything that would pick Gemini or another server or store."""
    dropped = {
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "TEMPORAL_ADDRESS",
        "TEMPORAL_NAMESPACE",
        "ADK_TASK_QUEUE",
        "ADK_DATA_DIR",
        "ADK_GCS_BUCKET",
        "ADK_APP",
        "ADK_AGENT",
        "ADK_USER",
        "ADK_SESSION",
        "ADK_LOCAL_APP",
    }
    return {k: v for k, v in os.environ.items() if k not in dropped}


def run_adk(
    *args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """Run one offline ``adk-temporal`` command to completion; ``stdin`` is its input."""
    return subprocess.run(
        [*adk_command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=offline_env(),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        cwd=cwd,
    )


async def run_cli(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI against ``address`` in a thread: an in-process worker shares the loop."""
    return await asyncio.to_thread(
        subprocess.run,
        [*adk_command(), *args, "--address", address],
        capture_output=True,
        text=True,
        timeout=90,
        env=offline_env(),
    )


def new_key_file(path: Path) -> Path:
    """A key file with one fresh key at ``path``, made by ``adk-temporal rotate-key``."""
    created = subprocess.run(
        [*adk_command(), "rotate-key", "--encryption-key-file", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )
    assert created.returncode == 0, created.stderr
    return path
