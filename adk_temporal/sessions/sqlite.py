"""The embedded default SessionService: one SQLite file shared by a machine's workers.

Several worker processes may open the same file. The journal is WAL (readers never block
the writer), every write runs in a ``BEGIN IMMEDIATE`` transaction (it takes the write lock
up front, so two appends can never both read the same "next sequence" and deadlock on the
upgrade), and a busy timeout makes a process wait for the lock instead of failing.
``UNIQUE (session_pk, event_id)`` backs the idempotency check: even a bug that skipped the
check could not store an event twice.

All sqlite3 calls run on one dedicated thread per service, never on the event loop. Writes
that arrive while another commits share the next commit (:mod:`.group_commit`), each under a
savepoint of its own and acknowledged only once that commit is on disk.

Schema (version 1, recorded in ``schema_version`` so later versions can migrate):

* ``app_states(app_name, state)`` and ``user_states(app_name, user_id, state)``: the shared
  scopes, ``state`` as a JSON object with prefixed keys.
* ``sessions(pk, app_name, user_id, session_id, state, create_time, update_time)``.
* ``events(session_pk, sequence, event_id, author, invocation_id, timestamp, event_json)``:
  ``event_json`` is ``Event.model_dump_json()``; the other columns are for queries.
* ``staged_events(session_pk, event_id, event_json)``: events staged by tool steps until
  the append that takes them (created on open in older files too: nothing else changes).
* ``initial_states(session_pk, state)``: a session's own state as ``create`` set it, when it
  set any (created on open in older files too; their sessions read as ``{}``).
* ``partial_events(sequence, app_name, user_id, session_id, event_id, event_json,
  published)``: streamed pieces of model replies (:mod:`.partials`), deleted when their
  final event is appended; followers in any process on the machine poll it. Written without
  syncing to disk: a piece lost in a power cut is superseded by its final event anyway.

Given a ``sealer`` (:mod:`.sealing`), a session's event, state and initial-state columns
hold its values sealed with the session's data key.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import sqlite3
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ..events import Event
from ..ids import SessionKey
from .call_slots import CALL_SLOT_COLUMNS, SqlCallSlots
from .grants import SqlGrants, grant_tables
from .group_commit import GroupCommit
from .ledger_sql import (
    LEDGER_COLUMNS,
    RESERVATION_COLUMNS,
    SqlLedger,
    Steps,
    ledger_sql,
    run_steps,
)
from .partials import FOLLOW_POLL_SECONDS, PARTIAL_TTL_SECONDS, follow_log, prepare_partial
from .receipts import RECEIPT_COLUMNS, SqlEffectReceipts
from .rules import (
    apply_state_delta,
    check_after_sequence,
    check_identity,
    check_user,
    merged_state,
    prepare_events,
    session_exists_error,
    session_not_found_error,
    to_json_state,
)
from .sealing import RowSealer, SealedRows, read_rows, rows_for
from .service import SessionService
from .session import Session
from .staging import prepare_stage

__all__ = ["SCHEMA_VERSION", "SqliteSessionService"]

SCHEMA_VERSION = 1
"""The schema version this module creates and reads."""

_T = TypeVar("_T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS app_states (
        app_name TEXT PRIMARY KEY,
        state TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS user_states (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id)
    )""",
    """CREATE TABLE IF NOT EXISTS sessions (
        pk INTEGER PRIMARY KEY,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        state TEXT NOT NULL,
        create_time REAL NOT NULL,
        update_time REAL NOT NULL,
        UNIQUE (app_name, user_id, session_id)
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        session_pk INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        author TEXT NOT NULL,
        invocation_id TEXT NOT NULL,
        timestamp REAL NOT NULL,
        event_json TEXT NOT NULL,
        PRIMARY KEY (session_pk, sequence),
        UNIQUE (session_pk, event_id)
    )""",
    """CREATE TABLE IF NOT EXISTS staged_events (
        session_pk INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
        event_id TEXT NOT NULL,
        event_json TEXT NOT NULL,
        PRIMARY KEY (session_pk, event_id)
    )""",
    """CREATE TABLE IF NOT EXISTS initial_states (
        session_pk INTEGER PRIMARY KEY REFERENCES sessions (pk) ON DELETE CASCADE,
        state TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS partial_events (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_json TEXT NOT NULL,
        published REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS partial_events_session "
    "ON partial_events (app_name, user_id, session_id, sequence)",
    f"CREATE TABLE IF NOT EXISTS token_ledger ({LEDGER_COLUMNS})",
    f"CREATE TABLE IF NOT EXISTS token_reservations ({RESERVATION_COLUMNS})",
    f"CREATE TABLE IF NOT EXISTS call_slots ({CALL_SLOT_COLUMNS})",
    *grant_tables("", "REAL"),
    f"CREATE TABLE IF NOT EXISTS effect_receipts ({RECEIPT_COLUMNS})",
)

_PARTIALS_OF_SESSION = "app_name = ? AND user_id = ? AND session_id = ?"

_SESSION_ROW = (
    "SELECT pk, state, update_time FROM sessions "
    "WHERE app_name = ? AND user_id = ? AND session_id = ?"
)


class SqliteSessionService(SqlLedger, SqlCallSlots, SqlGrants, SqlEffectReceipts, SessionService):
    """Stores sessions in one SQLite file; safe for several processes on one machine.

    The file and its schema are created on first use. Use ``async with`` or call
    :meth:`close` when done; a closed service refuses further calls.

    Args:
        path: The database file (its parent directories are created), or ``":memory:"``
            for a private in-memory database.
        busy_timeout: Seconds a call waits for another process's write lock before
            failing with ``sqlite3.OperationalError``.
        clock: Returns the current time in seconds; stamps a new session's update time and
            events appended without a timestamp.
        sealer: Seals each session's rows with its data key
            (:class:`~adk_temporal.keys.StoreSealer`); ``None`` stores them as JSON.
        group_commit: Writes that arrive while another commits share the next commit
            (:mod:`.group_commit`: one sync of the log for all of them, each acknowledged
            only once it is on disk); ``False`` commits each write on its own.
    """

    _sql = ledger_sql("sqlite")
    _dialect = "sqlite"
    _grant_sql = SqlGrants.grant_statements("?", "", "")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
        sealer: RowSealer | None = None,
        group_commit: bool = True,
    ) -> None:
        self._path = os.fspath(path)
        self._busy_timeout = busy_timeout
        self._clock = clock
        self._sealer = sealer
        # One thread owns the connection: sqlite3 connections must not be used from two
        # threads at once, and a single writer per process keeps transactions simple.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="adk-sessions")
        self._connection: sqlite3.Connection | None = None
        self._closed = False
        self.commits = GroupCommit(self._executor, self._opened, grouped=group_commit)
        """The writes' group commit; its counters say how many commits the writes took."""

    @property
    def path(self) -> str:
        """The database file this service uses."""
        return self._path

    async def close(self) -> None:
        """Close the database connection and stop the service's thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        # Queued behind any call still running, so those finish first.
        await loop.run_in_executor(self._executor, self._close_connection)
        self._executor.shutdown(wait=False)

    async def create(self, key: SessionKey, *, state: Mapping[str, Any] | None = None) -> Session:
        """Create an empty session (see :meth:`ConversationStore.create`)."""
        check_identity(key)
        initial = to_json_state(state or {}, where="initial state")
        rows = await rows_for(self._sealer, key)

        def create(conn: sqlite3.Connection) -> Session:
            if conn.execute(_SESSION_ROW, key).fetchone() is not None:
                raise session_exists_error(key)
            scopes = _SharedScopes.load(conn, key.app_name, key.user_id)
            session_state: dict[str, Any] = {}
            apply_state_delta(initial, app=scopes.app, user=scopes.user, session=session_state)
            scopes.save(conn)
            now = self._clock()
            inserted = conn.execute(
                "INSERT INTO sessions "
                "(app_name, user_id, session_id, state, create_time, update_time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (*key, rows.state_text(session_state), now, now),
            )
            if session_state:
                conn.execute(
                    "INSERT INTO initial_states (session_pk, state) VALUES (?, ?)",
                    (inserted.lastrowid, rows.state_text(session_state)),
                )
            return _read_session(conn, key, rows, after_sequence=0)

        return await self._write(create)

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        """Read a session with its events (see :meth:`ConversationStore.get`)."""
        check_identity(key)
        check_after_sequence(after_sequence, limit)
        rows = read_rows(self._sealer)

        def get(conn: sqlite3.Connection) -> Session:
            with _transaction(conn, write=False):
                return _read_session(conn, key, rows, after_sequence=after_sequence, limit=limit)

        return await self._run(get)

    async def get_state(self, key: SessionKey) -> dict[str, Any]:
        """Read a session's merged state (see :meth:`ConversationStore.get_state`)."""
        check_identity(key)
        rows = read_rows(self._sealer)

        def get_state(conn: sqlite3.Connection) -> dict[str, Any]:
            with _transaction(conn, write=False):
                row = conn.execute(_SESSION_ROW, key).fetchone()
                if row is None:
                    raise session_not_found_error(key)
                scopes = _SharedScopes.load(conn, key.app_name, key.user_id)
                return merged_state(scopes.app, scopes.user, rows.state(row[1]))

        return await self._run(get_state)

    async def get_initial_state(self, key: SessionKey) -> dict[str, Any]:
        """Read the state ``create`` set (see :meth:`ConversationStore.get_initial_state`)."""
        check_identity(key)
        rows = read_rows(self._sealer)

        def get_initial_state(conn: sqlite3.Connection) -> dict[str, Any]:
            with _transaction(conn, write=False):
                row = conn.execute(_SESSION_ROW, key).fetchone()
                if row is None:
                    raise session_not_found_error(key)
                initial = conn.execute(
                    "SELECT state FROM initial_states WHERE session_pk = ?", (row[0],)
                ).fetchone()
            return rows.state(initial[0]) if initial else {}

        return await self._run(get_initial_state)

    async def list(self, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions without events (see :meth:`ConversationStore.list`)."""
        check_user(app_name, user_id)
        sealed = read_rows(self._sealer)

        def list_sessions(conn: sqlite3.Connection) -> builtins.list[Session]:
            with _transaction(conn, write=False):
                rows = conn.execute(
                    "SELECT session_id, state, update_time FROM sessions "
                    "WHERE app_name = ? AND user_id = ? ORDER BY session_id",
                    (app_name, user_id),
                ).fetchall()
                scopes = _SharedScopes.load(conn, app_name, user_id)
            # Parse the shared scopes once per session so no two results share a value.
            return [
                Session(
                    id=session_id,
                    app_name=app_name,
                    user_id=user_id,
                    state=merged_state(
                        json.loads(scopes.app_json),
                        json.loads(scopes.user_json),
                        sealed.state(state),
                    ),
                    last_update_time=update_time,
                )
                for session_id, state, update_time in rows
            ]

        return await self._run(list_sessions)

    async def delete(self, key: SessionKey) -> None:
        """Delete a session if it exists (see :meth:`ConversationStore.delete`)."""
        check_identity(key)

        def delete(conn: sqlite3.Connection) -> None:
            with _transaction(conn, write=True):
                # Events go with it through ON DELETE CASCADE.
                conn.execute(
                    "DELETE FROM sessions WHERE app_name = ? AND user_id = ? AND session_id = ?",
                    key,
                )
                conn.execute(f"DELETE FROM partial_events WHERE {_PARTIALS_OF_SESSION}", key)

        await self._run(delete)

    async def user_ids(self, app_name: str) -> builtins.list[str]:
        """Every user of the app (see :meth:`ErasableStore.user_ids`)."""

        def read(conn: sqlite3.Connection) -> builtins.list[str]:
            with _transaction(conn, write=False):
                rows = conn.execute(
                    "SELECT user_id FROM sessions WHERE app_name = ? UNION "
                    "SELECT user_id FROM user_states WHERE app_name = ? ORDER BY user_id",
                    (app_name, app_name),
                ).fetchall()
            return [user_id for (user_id,) in rows]

        return await self._run(read)

    async def idle_sessions(
        self, app_name: str, before: float, limit: int
    ) -> builtins.list[tuple[SessionKey, float]]:
        """Sessions idle since before ``before`` (see :meth:`ErasableStore.idle_sessions`)."""

        def read(conn: sqlite3.Connection) -> builtins.list[tuple[SessionKey, float]]:
            with _transaction(conn, write=False):
                rows = conn.execute(
                    "SELECT user_id, session_id, update_time FROM sessions WHERE app_name = ? "
                    "AND update_time < ? ORDER BY update_time, user_id, session_id LIMIT ?",
                    (app_name, before, limit),
                ).fetchall()
            return [(SessionKey(app_name, user, session), at) for user, session, at in rows]

        return await self._run(read)

    async def delete_scope_state(self, app_name: str, user_id: str | None) -> None:
        """Delete a user's or an app's state (see :meth:`ErasableStore.delete_scope_state`)."""

        def delete(conn: sqlite3.Connection) -> None:
            with _transaction(conn, write=True):
                if user_id is not None:
                    conn.execute(
                        "DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                        (app_name, user_id),
                    )
                    return
                conn.execute("DELETE FROM user_states WHERE app_name = ?", (app_name,))
                conn.execute("DELETE FROM app_states WHERE app_name = ?", (app_name,))

        await self._run(delete)

    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        def run(conn: sqlite3.Connection) -> _T:
            with _transaction(conn, write=write):
                return run_steps(steps, lambda sql, params: conn.execute(sql, params).fetchall())

        return await self._run(run)

    async def stage_events(self, key: SessionKey, events: Sequence[Event]) -> None:
        """Keep events aside (see :meth:`StagingArea.stage_events`)."""
        prepared = prepare_stage(key, events)
        rows = await rows_for(self._sealer, key)

        def stage(conn: sqlite3.Connection) -> None:
            row = conn.execute(_SESSION_ROW, key).fetchone()
            if row is None:
                raise session_not_found_error(key)
            conn.executemany(
                "INSERT OR REPLACE INTO staged_events (session_pk, event_id, event_json) "
                "VALUES (?, ?, ?)",
                [(row[0], event_id, rows.seal(text)) for event_id, text in prepared],
            )

        await self._write(stage)

    async def staged_events(self, key: SessionKey, ids: Sequence[str]) -> dict[str, Event]:
        """Read staged events (see :meth:`StagingArea.staged_events`)."""
        check_identity(key)
        wanted = list(ids)
        rows = read_rows(self._sealer)

        def read(conn: sqlite3.Connection) -> dict[str, Event]:
            with _transaction(conn, write=False):
                row = conn.execute(_SESSION_ROW, key).fetchone()
                if row is None:
                    raise session_not_found_error(key)
                found = conn.execute(
                    "SELECT event_id, event_json FROM staged_events WHERE session_pk = ? "
                    f"AND event_id IN ({', '.join('?' * len(wanted))})",
                    (row[0], *wanted),
                ).fetchall()
            return {event_id: rows.event(data) for event_id, data in found}

        return await self._run(read) if wanted else {}

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> builtins.list[Event]:
        """Append events idempotently (see :meth:`ConversationStore.append_events`)."""
        check_identity(key)
        prepared = prepare_events(events, now=self._clock())
        rows = await rows_for(self._sealer, key)

        return await self._write(lambda conn: _append(conn, key, prepared, unstage, rows))

    async def publish_partial(self, key: SessionKey, event: Event) -> None:
        """Keep a piece for the machine's followers (``PartialChannel.publish_partial``)."""
        rows = await rows_for(self._sealer, key)
        data = rows.seal(prepare_partial(key, event))
        now = self._clock()

        def publish(conn: sqlite3.Connection) -> None:
            # Pieces are transient and superseded by their final event: their commits skip
            # the fsync that every session write pays (FULL is restored for those).
            conn.execute("PRAGMA synchronous = OFF")
            try:
                with _transaction(conn, write=True):
                    conn.execute(
                        "DELETE FROM partial_events WHERE published < ?",
                        (now - PARTIAL_TTL_SECONDS,),
                    )
                    conn.execute(
                        "INSERT INTO partial_events (app_name, user_id, session_id, event_id, "
                        "event_json, published) VALUES (?, ?, ?, ?, ?, ?)",
                        (*key, event.id, data, now),
                    )
            finally:
                conn.execute("PRAGMA synchronous = FULL")

        await self._run(publish)

    def follow_partials(self, key: SessionKey) -> AsyncGenerator[Event, None]:
        """Poll the file for pieces (``PartialChannel.follow_partials``)."""
        check_identity(key)
        sealed = read_rows(self._sealer)

        def read(conn: sqlite3.Connection, sequence: int) -> builtins.list[tuple[int, Event]]:
            rows = conn.execute(
                f"SELECT sequence, event_json FROM partial_events WHERE {_PARTIALS_OF_SESSION} "
                "AND sequence > ? ORDER BY sequence",
                (*key, sequence),
            ).fetchall()
            return [(number, sealed.event(data)) for number, data in rows]

        async def read_after(sequence: int) -> builtins.list[tuple[int, Event]]:
            return await self._run(lambda conn: read(conn, sequence))

        return follow_log(read_after, lambda: asyncio.sleep(FOLLOW_POLL_SECONDS))

    async def _run(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_open()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: operation(self._opened()))

    async def _write(self, write: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``write`` in a write transaction, with the writes waiting beside it."""
        self._check_open()
        return await self.commits.write(write)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"SqliteSessionService({self._path!r}) is closed")

    def _opened(self) -> sqlite3.Connection:
        """The connection, opened on first use (on the store's thread)."""
        if self._connection is None:
            self._connection = self._open()
        return self._connection

    def _open(self) -> sqlite3.Connection:
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: the module issues no implicit BEGIN/COMMIT; every
        # transaction below is explicit, so BEGIN IMMEDIATE means what it says.
        conn = sqlite3.connect(
            self._path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            # Every commit syncs the WAL to disk, so a step the store acknowledged survives a
            # power cut. Said explicitly: builds may default WAL databases to NORMAL, which
            # keeps the file consistent but may lose the last commits.
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            with _transaction(conn, write=True):
                for statement in _SCHEMA:
                    conn.execute(statement)
                row = conn.execute("SELECT version FROM schema_version").fetchone()
                if row is None:
                    conn.execute(
                        "INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,)
                    )
                elif row[0] != SCHEMA_VERSION:
                    raise RuntimeError(
                        f"session database {self._path!r} has schema version {row[0]}, but "
                        f"this adk-temporal reads version {SCHEMA_VERSION}; use a matching "
                        "adk-temporal release or a new database file"
                    )
        except BaseException:
            conn.close()
            raise
        return conn

    def _close_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class _SharedScopes:
    """The app and user state rows of one (app, user), loaded for a transaction."""

    def __init__(self, app_name: str, user_id: str, app_json: str, user_json: str) -> None:
        self.app_name = app_name
        self.user_id = user_id
        self.app_json = app_json
        self.user_json = user_json
        self.app: dict[str, Any] = json.loads(app_json)
        self.user: dict[str, Any] = json.loads(user_json)

    @classmethod
    def load(cls, conn: sqlite3.Connection, app_name: str, user_id: str) -> _SharedScopes:
        """Read both scopes; a missing row is an empty state."""
        app_row = conn.execute(
            "SELECT state FROM app_states WHERE app_name = ?", (app_name,)
        ).fetchone()
        user_row = conn.execute(
            "SELECT state FROM user_states WHERE app_name = ? AND user_id = ?",
            (app_name, user_id),
        ).fetchone()
        return cls(
            app_name,
            user_id,
            app_row[0] if app_row else "{}",
            user_row[0] if user_row else "{}",
        )

    def save(self, conn: sqlite3.Connection) -> None:
        """Write back the scopes that changed since :meth:`load`."""
        app_json = json.dumps(self.app)
        if app_json != self.app_json:
            conn.execute(
                "INSERT INTO app_states (app_name, state) VALUES (?, ?) "
                "ON CONFLICT (app_name) DO UPDATE SET state = excluded.state",
                (self.app_name, app_json),
            )
        user_json = json.dumps(self.user)
        if user_json != self.user_json:
            conn.execute(
                "INSERT INTO user_states (app_name, user_id, state) VALUES (?, ?, ?) "
                "ON CONFLICT (app_name, user_id) DO UPDATE SET state = excluded.state",
                (self.app_name, self.user_id, user_json),
            )


@contextmanager
def _transaction(conn: sqlite3.Connection, *, write: bool) -> Iterator[None]:
    # A read transaction gives the several SELECTs of one call a single snapshot; a write
    # takes the lock at BEGIN, where the busy timeout applies, rather than at the first write.
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # Also after a failed COMMIT: a transaction left open would make every later
        # BEGIN on this connection fail.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _append(
    conn: sqlite3.Connection,
    key: SessionKey,
    prepared: Sequence[Event],
    unstage: Sequence[str],
    rows: SealedRows,
) -> builtins.list[Event]:
    """The writes of ``append_events``, inside its transaction."""
    row = conn.execute(_SESSION_ROW, key).fetchone()
    if row is None:
        raise session_not_found_error(key)
    session_pk, state_json, _ = row
    conn.executemany(
        "DELETE FROM staged_events WHERE session_pk = ? AND event_id = ?",
        [(session_pk, staged_id) for staged_id in unstage],
    )
    result, new = _insert_new(conn, session_pk, prepared, rows)
    if prepared:
        conn.execute(
            f"DELETE FROM partial_events WHERE {_PARTIALS_OF_SESSION} AND event_id IN "
            f"({', '.join('?' * len(prepared))})",
            (*key, *(event.id for event in prepared)),
        )
    if new:
        session_state = rows.state(state_json)
        scopes = _SharedScopes.load(conn, key.app_name, key.user_id)
        for event in new:
            apply_state_delta(
                event.actions.state_delta, app=scopes.app, user=scopes.user, session=session_state
            )
        scopes.save(conn)
        conn.execute(
            "UPDATE sessions SET state = ?, update_time = ? WHERE pk = ?",
            (rows.state_text(session_state), new[-1].timestamp, session_pk),
        )
    return result


def _insert_new(
    conn: sqlite3.Connection, session_pk: int, prepared: Sequence[Event], rows: SealedRows
) -> tuple[builtins.list[Event], builtins.list[Event]]:
    """Insert the events whose ids the session does not hold yet, with the next sequences.

    Returns:
        One stored event per prepared event (the earlier one for a known id), and the
        events newly inserted, in order.
    """
    (sequence,) = conn.execute(
        "SELECT COALESCE(MAX(sequence), 0) FROM events WHERE session_pk = ?", (session_pk,)
    ).fetchone()
    # One query for the idempotency check of the whole batch, not one per event.
    earlier = dict(
        conn.execute(
            "SELECT event_id, event_json FROM events WHERE session_pk = ? AND event_id IN "
            f"({', '.join('?' * len(prepared))})",
            (session_pk, *(event.id for event in prepared)),
        ).fetchall()
        if prepared
        else ()
    )
    result: builtins.list[Event] = []
    new: builtins.list[Event] = []
    for event in prepared:
        if event.id in earlier:
            result.append(rows.event(earlier[event.id]))
            continue
        sequence += 1
        data = rows.event_text(event)
        conn.execute(
            "INSERT INTO events (session_pk, sequence, event_id, author, invocation_id, "
            "timestamp, event_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_pk,
                sequence,
                event.id,
                event.author,
                event.invocation_id,
                event.timestamp,
                data,
            ),
        )
        # A later event of this batch with the same id is answered as a retry.
        earlier[event.id] = data
        result.append(event)
        new.append(event)
    return result, new


def _read_session(
    conn: sqlite3.Connection,
    key: SessionKey,
    rows: SealedRows,
    *,
    after_sequence: int,
    limit: int | None = None,
) -> Session:
    row = conn.execute(_SESSION_ROW, key).fetchone()
    if row is None:
        raise session_not_found_error(key)
    session_pk, state_json, update_time = row
    scopes = _SharedScopes.load(conn, key.app_name, key.user_id)
    events = [
        rows.event(event_json)
        for (event_json,) in conn.execute(
            "SELECT event_json FROM events WHERE session_pk = ? AND sequence > ? "
            "ORDER BY sequence LIMIT ?",
            # LIMIT -1: no limit, in SQLite.
            (session_pk, after_sequence, -1 if limit is None else limit),
        )
    ]
    app_name, user_id, session_id = key
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=merged_state(scopes.app, scopes.user, rows.state(state_json)),
        events=events,
        last_update_time=update_time,
    )
