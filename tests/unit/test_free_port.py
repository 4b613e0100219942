"""Ports picked for local servers stay clear of the kernel's outgoing-connection ports and of
each other, across processes."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_temporal import ports
from adk_temporal.ports import HELD_FOR_SECONDS, free_port, marks_directory

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
linux_only = pytest.mark.skipif(
    not RANGE_FILE.exists(), reason="the ephemeral range is read from Linux /proc"
)

PICKER = "from adk_temporal.ports import free_port\nprint(*(free_port() for _ in range(300)))\n"


@pytest.fixture(autouse=True)
def own_marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Marks go to this test's directory, so the machine's other pickers are untouched."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    yield tmp_path


def _picks(monkeypatch: pytest.MonkeyPatch, *picks: int) -> None:
    """The random picks come in this order, each one bindable: only the marks decide."""
    queue = list(picks)
    monkeypatch.setattr(random, "randrange", lambda _low, _high: queue.pop(0))
    monkeypatch.setattr(ports, "_bindable", lambda _host, _port: True)


@linux_only
def test_picked_ports_are_free_and_below_the_ephemeral_range() -> None:
    low = int(RANGE_FILE.read_text().split()[0])
    picked = [free_port() for _ in range(50)]
    assert all(1024 <= port < low for port in picked)
    for port in picked[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))


@linux_only
def test_pickers_in_different_processes_never_share_a_port(own_marks: Path) -> None:
    """600 picks from ~17,000 ports would almost surely repeat one if picks were unmarked."""
    env = {**os.environ, "TMPDIR": str(own_marks)}
    pickers = [
        subprocess.Popen([sys.executable, "-c", PICKER], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    picked = [int(port) for picker in pickers for port in picker.communicate()[0].split()]
    assert len(picked) == 600
    assert len(set(picked)) == 600
    assert {int(mark.name) for mark in marks_directory().iterdir()} == set(picked)


@linux_only
def test_a_port_another_picker_marked_recently_is_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marks_directory().mkdir()
    (marks_directory() / "20001").touch()
    _picks(monkeypatch, 20001, 20002)
    assert free_port() == 20002
    assert (marks_directory() / "20001").exists()


@linux_only
def test_a_stale_mark_is_removed_and_its_port_is_picked_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marks_directory().mkdir()
    stale = marks_directory() / "20001"
    stale.touch()
    old = time.time() - HELD_FOR_SECONDS - 1
    os.utime(stale, (old, old))
    _picks(monkeypatch, 20001, 20002, 20001)
    assert free_port() == 20002
    assert not stale.exists()
    assert free_port() == 20001
    assert stale.stat().st_mtime > old


@linux_only
@pytest.mark.parametrize("where", ["inside-a-file", "is-a-file"])
def test_where_no_mark_can_be_written_the_bind_check_decides(
    monkeypatch: pytest.MonkeyPatch, own_marks: Path, where: str
) -> None:
    blocker = own_marks / "a-file"
    blocker.touch()
    marks = blocker / "marks" if where == "inside-a-file" else blocker
    monkeypatch.setattr(ports, "marks_directory", lambda: marks)
    _picks(monkeypatch, 20003, 20003)
    assert free_port() == 20003
    assert free_port() == 20003
