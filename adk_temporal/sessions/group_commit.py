"""``GroupCommit``: the SQLite store's writes that arrive together share one commit.

Every acknowledged write is on disk: a commit syncs the write-ahead log (``synchronous =
FULL``), and that sync, not the statements, is most of what a write costs. Steps running at
once (the parallel tool calls of a step, the invocations of a busy worker) write at once,
so the writes queued while one commit runs are taken together: one ``BEGIN IMMEDIATE``,
each write under a savepoint of its own, one ``COMMIT``. A write that raises is rolled back
to its savepoint and reports its own error; the others commit. No write is acknowledged
before the commit that holds it returned, so a worker killed at any moment loses only
writes nobody was told had happened — the same durability as a commit per write.

Writes run on the store's one thread, in the order they arrived; a lone write commits at
once, without a savepoint, exactly as before (the batching never waits for company).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["GroupCommit", "Write"]

_T = TypeVar("_T")

Write = Callable[[sqlite3.Connection], Any]
"""A write's statements, run inside a transaction the group commit opened."""


@dataclass
class _Queued(Generic[_T]):
    write: Callable[[sqlite3.Connection], _T]
    future: asyncio.Future[_T]
    loop: asyncio.AbstractEventLoop


class GroupCommit:
    """Runs writes on the store's thread, each batch of waiting writes in one transaction.

    Args:
        executor: The store's one thread (every call on its connection runs there).
        connection: Returns the store's connection; called on that thread.
        grouped: ``False`` commits every write on its own (the behaviour before groups).
    """

    def __init__(
        self,
        executor: Executor,
        connection: Callable[[], sqlite3.Connection],
        *,
        grouped: bool = True,
    ) -> None:
        self._executor = executor
        self._connection = connection
        self._grouped = grouped
        self._lock = threading.Lock()
        self._queue: list[_Queued[Any]] = []
        self._scheduled = False
        self.batches = 0
        """Commits made so far (a figure for benchmarks and tests)."""
        self.writes = 0
        """Writes committed or refused so far."""

    async def write(self, write: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``write`` in a write transaction; return once its commit is on disk.

        Raises:
            Exception: What ``write`` raised (nothing of it is stored), or what the commit
                raised (nothing of its batch is stored).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        queued = _Queued(write, future, loop)
        with self._lock:
            self._queue.append(queued)
            start = not self._scheduled
            self._scheduled = True
        if start:
            self._executor.submit(self._flush)
        return await future

    def _flush(self) -> None:
        """On the store's thread: commit every write queued so far."""
        with self._lock:
            batch, self._queue = self._queue, []
            # Writes queued from now on start the next batch, behind this one.
            self._scheduled = False
        if not batch:
            return
        try:
            outcomes = _commit(self._connection(), [q.write for q in batch], self._grouped)
        except BaseException as err:  # opening the connection failed: every write fails
            outcomes = [_Failed(err)] * len(batch)
        self.batches += 1 if self._grouped else len(batch)
        self.writes += len(batch)
        for queued, outcome in zip(batch, outcomes, strict=True):
            queued.loop.call_soon_threadsafe(_settle, queued.future, outcome)


class _Failed:
    """A write's error, told apart from a result that happens to be an exception."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    if future.done():  # the caller was cancelled; the write's fate is the commit's
        return
    if isinstance(outcome, _Failed):
        future.set_exception(outcome.error)
    else:
        future.set_result(outcome)


def _commit(conn: sqlite3.Connection, writes: list[Write], grouped: bool) -> list[Any]:
    """Each write's result (or :class:`_Failed`): in one transaction when ``grouped`` and
    more than one waits, else one transaction each."""
    if len(writes) == 1 or not grouped:
        return [_alone(conn, write) for write in writes]
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as err:
        return [_Failed(err)] * len(writes)
    outcomes: list[Any] = []
    for write in writes:
        conn.execute("SAVEPOINT adk_write")
        try:
            outcomes.append(write(conn))
        except Exception as err:
            if not conn.in_transaction:
                # SQLite gave the whole transaction up (a full disk, an I/O error): the
                # writes before this one are gone too.
                return [_Failed(err)] * len(writes)
            conn.execute("ROLLBACK TO adk_write")
            outcomes.append(_Failed(err))
        conn.execute("RELEASE adk_write")
    try:
        conn.execute("COMMIT")
    except BaseException as err:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return [_Failed(err)] * len(writes)
    return outcomes


def _alone(conn: sqlite3.Connection, write: Write) -> Any:
    """One write in a transaction of its own."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = write(conn)
            conn.execute("COMMIT")
        except BaseException:
            # Also after a failed COMMIT: a transaction left open would make every later
            # BEGIN on this connection fail.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except Exception as err:
        return _Failed(err)
    return result
