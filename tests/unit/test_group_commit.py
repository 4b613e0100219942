"""Group commit: writes that wait together share one commit, each keeps its own outcome,
and no write acknowledged before a crash is lost."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adk_temporal.errors import SessionNotFoundError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.sessions.group_commit import GroupCommit


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[GroupCommit, ThreadPoolExecutor, sqlite3.Connection]]:
    """A group commit over a file database with one table, on a thread of its own."""
    executor = ThreadPoolExecutor(max_workers=1)
    conn = sqlite3.connect(tmp_path / "g.db", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    try:
        yield GroupCommit(executor, lambda: conn), executor, conn
    finally:
        executor.shutdown(wait=True)
        conn.close()


def _insert(key: str) -> Callable[[sqlite3.Connection], str]:
    def write(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO t (k) VALUES (?)", (key,))
        return key

    return write


async def _queued_behind_a_busy_thread(
    commits: GroupCommit, executor: ThreadPoolExecutor, keys: list[str]
) -> list[object]:
    """Write ``keys`` at once while the store's thread is busy, so they queue together."""
    busy = threading.Event()
    executor.submit(busy.wait)
    tasks = [asyncio.ensure_future(commits.write(_insert(k))) for k in keys]
    await asyncio.sleep(0)  # every write is queued before the thread is free
    busy.set()
    return list(await asyncio.gather(*tasks, return_exceptions=True))


async def test_writes_waiting_together_share_one_commit(
    store: tuple[GroupCommit, ThreadPoolExecutor, sqlite3.Connection],
) -> None:
    """Ten writes queued while the thread is busy commit in one transaction, all stored."""
    commits, executor, conn = store
    keys = [f"k{i}" for i in range(10)]
    results = await _queued_behind_a_busy_thread(commits, executor, keys)
    assert results == keys
    assert commits.batches == 1
    assert commits.writes == 10
    assert sorted(k for (k,) in conn.execute("SELECT k FROM t")) == sorted(keys)


async def test_a_failing_write_is_rolled_back_alone(
    store: tuple[GroupCommit, ThreadPoolExecutor, sqlite3.Connection],
) -> None:
    """A write that raises in a batch reports its error; the others of its batch commit."""
    commits, executor, conn = store
    await commits.write(_insert("taken"))
    results = await _queued_behind_a_busy_thread(commits, executor, ["a", "taken", "b"])
    assert results[0] == "a" and results[2] == "b"
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert sorted(k for (k,) in conn.execute("SELECT k FROM t")) == ["a", "b", "taken"]
    assert not conn.in_transaction


async def test_ungrouped_writes_commit_one_by_one(tmp_path: Path) -> None:
    """With group_commit off every write is a commit of its own."""
    sessions = SqliteSessionService(tmp_path / "s.db", group_commit=False)
    keys = [SessionKey("a", "u", f"s{i}") for i in range(5)]
    try:
        await asyncio.gather(*(sessions.create(k) for k in keys))
        assert sessions.commits.batches == 5
    finally:
        await sessions.close()


async def test_concurrent_appends_of_a_store_each_get_their_outcome(tmp_path: Path) -> None:
    """Appends to twenty sessions at once are all stored in order, fewer commits than
    writes, and an append to a missing session fails alone with its typed error."""
    sessions = SqliteSessionService(tmp_path / "s.db")
    keys = [SessionKey("a", "u", f"s{i}") for i in range(20)]
    try:
        for key in keys:
            await sessions.create(key)
        before = sessions.commits.batches
        for round_ in range(3):
            await asyncio.gather(
                *(
                    sessions.append_events(k, [Event(id=f"{k.session_id}-{round_}", author="a")])
                    for k in keys
                )
            )
        assert sessions.commits.batches - before < 60
        missing = SessionKey("a", "u", "gone")
        results = await asyncio.gather(
            sessions.append_events(missing, [Event(id="x", author="a")]),
            sessions.append_events(keys[0], [Event(id="s0-3", author="a")]),
            return_exceptions=True,
        )
        assert isinstance(results[0], SessionNotFoundError)
        stored = await sessions.get(keys[0])
        assert [e.id for e in stored.events] == ["s0-0", "s0-1", "s0-2", "s0-3"]
    finally:
        await sessions.close()


_CRASHING_WRITER = """
import asyncio, os, signal, sys
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService

async def main(path):
    sessions = SqliteSessionService(path)
    keys = [SessionKey("a", "u", f"s{i}") for i in range(8)]
    for key in keys:
        await sessions.create(key)
    acknowledged = 0

    async def append(key, n):
        nonlocal acknowledged
        event_id = f"{key.session_id}-{n}"
        await sessions.append_events(key, [Event(id=event_id, author="a")])
        print(event_id, flush=True)
        acknowledged += 1
        if acknowledged == 37:  # killed right after an append returned, others in flight
            os.kill(os.getpid(), signal.SIGKILL)

    for n in range(100):
        await asyncio.gather(*(append(key, n) for key in keys))

asyncio.run(main(sys.argv[1]))
"""


async def test_no_acknowledged_append_is_lost_when_the_process_is_killed(tmp_path: Path) -> None:
    """A process SIGKILLed right after an append returned, with grouped appends in flight:
    every append it was told had happened is in the file."""
    path = tmp_path / "s.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CRASHING_WRITER, str(path), stdout=subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == -signal.SIGKILL
    acknowledged = out.decode().split()
    assert len(acknowledged) >= 37
    sessions = SqliteSessionService(path)
    try:
        stored = {
            e.id
            for i in range(8)
            for e in (await sessions.get(SessionKey("a", "u", f"s{i}"))).events
        }
    finally:
        await sessions.close()
    assert set(acknowledged) <= stored
