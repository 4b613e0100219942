"""Running the ``adk-temporal`` command from tests, offline."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

__all__ = ["ExamplesWorker", "adk_command", "new_key_file", "offline_env", "run_adk", "run_cli"]


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


@dataclass
class ExamplesWorker:
    """A `worker --examples` subprocess: where it listens and stores, and every line it logged.

    Subclasses add the commands their tests run against it; :meth:`start` makes any of them.
    """

    address: str
    task_queue: str
    data_dir: Path
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    @classmethod
    @contextlib.contextmanager
    def start(cls, address: str, data_dir: Path, queue_prefix: str) -> Iterator[Self]:
        """A worker against ``address`` storing in ``data_dir``, on a task queue of its own
        named after ``queue_prefix``: ready on entry, killed on exit."""
        task_queue = f"{queue_prefix}-{uuid.uuid4().hex[:8]}"
        process = subprocess.Popen(
            [
                *adk_command(),
                "worker",
                "--examples",
                "--data-dir",
                str(data_dir),
                "--task-queue",
                task_queue,
                "--address",
                address,
                "--sticky-timeout",
                "1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=offline_env(),
        )
        worker = cls(address, task_queue, data_dir, process)

        def drain() -> None:
            # Read until the process ends: a full pipe would block the worker's logging.
            assert process.stdout is not None
            for line in process.stdout:
                worker.lines.append(line)

        threading.Thread(target=drain, daemon=True).start()
        try:
            worker.logged("worker ready", timeout=30)
            yield worker
        finally:
            process.kill()
            process.wait()

    def logged(self, fragment: str, timeout: float = 15) -> str:
        """The worker's log so far once it holds ``fragment`` (bounded wait; fails at once if
        the worker exits first)."""
        deadline = time.monotonic() + timeout
        while not any(fragment in line for line in self.lines):
            log = "".join(self.lines)
            assert self.process.poll() is None, f"worker exited before {fragment!r}:\n{log}"
            assert time.monotonic() < deadline, f"{fragment!r} never logged:\n{log}"
            time.sleep(0.1)
        return "".join(self.lines)
