"""``adk-temporal session create --state JSON``: a session with initial state in the store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService


def test_session_create_stores_initial_state_and_refuses_a_second_create(tmp_path: Path) -> None:
    """The state lands in the workers' store (user: keys in the user's scope); creating the
    same session again fails (exit 1) and a non-object state is a usage error (exit 2)."""
    cli = [sys.executable, "-m", "adk_temporal.cli", "session", "create", "--data-dir"]
    args = [*cli, str(tmp_path), "--app", "a", "--user", "u"]

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        # A subprocess: the command ends its process with os._exit, as every CLI command.
        return subprocess.run([*args, *more], capture_output=True, text=True, timeout=60)

    made = run("--session", "s1", "--state", '{"k": 1, "user:t": "g"}')
    assert made.returncode == 0, made.stderr

    async def stored() -> dict[str, object]:
        async with SqliteSessionService(tmp_path / "sessions.db") as sessions:
            return (await sessions.get(SessionKey("a", "u", "s1"))).state

    assert asyncio.run(stored()) == {"k": 1, "user:t": "g"}
    again = run("--session", "s1")
    assert again.returncode == 1 and "already exists" in again.stderr
    wrong = run("--state", "[1]")
    assert wrong.returncode == 2 and "JSON object" in wrong.stderr
