"""Clean errors from the `adk-temporal` command: one line and a hint, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from adk_temporal.devserver import DevServer
from adk_temporal.ports import free_port

from ..commands import adk_command, offline_env, run_adk

pytestmark = pytest.mark.integration


def _run(
    *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_adk(*args, cwd=cwd, timeout=timeout)


def _clean(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    return result.stderr


def test_an_app_module_that_raises_on_import_is_named(tmp_path: Path) -> None:
    """`worker --app broken:app` says what the module raised, not a traceback."""
    (tmp_path / "broken.py").write_text("raise RuntimeError('no config file')\n")
    result = _run("worker", "--app", "broken:app", "--address", "127.0.0.1:1", cwd=tmp_path)
    assert result.returncode == 2
    assert "importing 'broken' for --app 'broken:app' raised RuntimeError: no config file" in (
        _clean(result)
    )


def test_an_empty_user_is_refused_before_anything_starts(dev_server: DevServer) -> None:
    """`run --user ''` names the missing field."""
    result = _run(
        "run",
        "--no-wait",
        "--address",
        dev_server.address,
        "--app",
        "weather",
        "--user",
        "",
        "--session",
        "s",
        "--agent",
        "weather_agent",
        "hi",
    )
    assert result.returncode == 1
    assert "missing required fields: user_id" in _clean(result)


def test_a_missing_namespace_gets_a_namespace_hint(dev_server: DevServer) -> None:
    """An unknown namespace is named as such, with no workflow-id hint."""
    result = _run("pending", "--address", dev_server.address, "--namespace", "nope")
    assert result.returncode == 1
    stderr = _clean(result)
    assert "nope" in stderr and "--namespace" in stderr
    assert "workflow id" not in stderr


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc: no procps needed)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_server_creates_its_data_dir_and_exits_with_its_childs_status(tmp_path: Path) -> None:
    """`server --db-file F --data-dir NEW` starts (the log's directory is created), prints
    the worker command that comes next, and exits non-zero when the Temporal process dies."""
    data_dir = tmp_path / "not" / "there"
    process = subprocess.Popen(
        [
            *adk_command(),
            "server",
            "--db-file",
            str(tmp_path / "t.db"),
            "--data-dir",
            str(data_dir),
            "--port",
            str(free_port()),
            "--ui-port",
            str(free_port()),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=offline_env(),
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("Temporal dev server on"), (
            process.stderr.read() if process.stderr else ""
        )
        assert "adk-temporal worker --app" in process.stdout.readline()
        assert (data_dir / "temporal.log").exists()
        [child] = _children(process.pid)
        os.kill(child, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.returncode not in (None, 0)
        assert process.stderr is not None
        assert "the Temporal server exited with status" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
