"""Worker subprocesses for tests that kill workers or restart the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from adk_temporal.examples.payments import PAYMENTS_ENV, FilePaymentGateway
from adk_temporal.faults import FAULT_ENV

REPO = Path(__file__).resolve().parents[2]
"""The repository root: worker processes run there so ``tests.…`` apps import."""


@dataclass
class Deployment:
    """One task queue, data directory and payments ledger shared by the worker processes."""

    address: str
    task_queue: str
    data_dir: Path

    def command(self, name: str, *args: str) -> list[str]:
        """``adk-temporal NAME ARGS`` against this deployment's server, queue and data."""
        return [
            sys.executable,
            "-m",
            "adk_temporal.cli",
            name,
            *args,
            "--address",
            self.address,
            "--task-queue",
            self.task_queue,
            "--data-dir",
            str(self.data_dir),
        ]

    @property
    def payments(self) -> FilePaymentGateway:
        """The ledger the example's payment tool charges through."""
        return FilePaymentGateway(self.data_dir / "payments.jsonl")


def wait_ready(process: subprocess.Popen[str], timeout: float = 30.0) -> None:
    """Block until the worker prints its ready line (or fail with its output)."""
    ready = threading.Event()
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "worker ready" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout):
        process.kill()
        raise AssertionError(f"worker did not start: {''.join(lines)}")


@contextmanager
def worker_process(
    deployment: Deployment,
    fault: str | None = None,
    *,
    app: str | None = None,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[subprocess.Popen[str]]:
    """An ``adk-temporal worker`` subprocess serving ``app`` (``module:attribute``, run from
    the repository root) or the examples, armed with ``fault`` if given; ``args`` are more
    worker options."""
    env = {
        **os.environ,
        PAYMENTS_ENV: str(deployment.data_dir / "payments.jsonl"),
        **(env or {}),
    }
    env.pop(FAULT_ENV, None)
    if fault:
        env[FAULT_ENV] = fault
    process = subprocess.Popen(
        deployment.command(
            "worker",
            *(["--app", app] if app else ["--examples"]),
            "--sticky-timeout",
            "1",
            *args,
        ),
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_ready(process)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def died_by_sigkill(process: subprocess.Popen[str], timeout: float = 30.0) -> bool:
    return process.wait(timeout) == -signal.SIGKILL
