"""The multi-machine SessionService: PostgreSQL through psycopg 3 and its connection pool.

Every worker of every machine may use the same database. Each write is one transaction on a
pooled connection, and concurrent writers are ordered by row locks, always taken in the same
order (session row, then the app's state row, then the user's) so they cannot deadlock:

* ``append_events`` locks the session row (``SELECT ... FOR UPDATE``) first, so two appends
  to one session run one after the other: the second sees the first's events, skips ids
  already stored and continues the sequence without a gap. ``UNIQUE (session_pk, event_id)``
  backs the idempotency check: even a bug that skipped it could not store an event twice.
* The app and user state rows are locked only by a write that changes them, so appends to
  different sessions of one app do not queue behind each other unless they share a scope
  they both write.
* Each read is one statement, so one snapshot: a session's events and its state always
  agree, and a read is one round trip to the server.

JSON is stored as ``TEXT``, byte for byte what the other backends store: ``JSONB`` would
refuse values the others accept (``NaN``, ``"\\u0000"``) and turn a float such as ``1e300``
into an integer. Identity columns use the ``"C"`` collation so ``list`` sorts ids by code
point like the other backends, whatever the database's locale.

Schema (version 1, recorded in ``adk_schema_version``; tables are prefixed ``adk_`` because
the database may be shared with other applications):

* ``adk_app_states(app_name, state)`` and ``adk_user_states(app_name, user_id, state)``.
* ``adk_sessions(pk, app_name, user_id, session_id, state, create_time, update_time)``.
* ``adk_events(session_pk, sequence, event_id, author, invocation_id, timestamp,
  event_json)``: ``event_json`` is ``Event.model_dump_json()``.
* ``adk_staged_events(session_pk, event_id, event_json)``: events staged by tool steps
  until the append that takes them (created on open in older databases too).
* ``adk_initial_states(session_pk, state)``: a session's own state as ``create`` set it,
  when it set any (created on open in older databases too; their sessions read as ``{}``).
* ``adk_partial_events(sequence, app_name, user_id, session_id, event_id, event_json,
  published)``: streamed pieces of model replies (:mod:`.partials`), deleted when their final
  event is appended (created on open in older databases too). A publish also sends
  ``NOTIFY`` on a channel named after the session, so followers on any machine read the new
  piece at once instead of polling; the piece travels in the table, not in the notification,
  whose payload PostgreSQL caps at 8000 bytes.

Given a ``sealer`` (:mod:`.sealing`), a session's event, state and initial-state columns
hold its values sealed with the session's data key.

The driver is an optional dependency: ``pip install 'adk-temporal[postgres]'``.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

from ..extras import needs_extra

with needs_extra("postgres", "PostgresSessionService"):
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool

from ..events import Event
from ..ids import SessionKey
from .call_slots import CALL_SLOT_COLUMNS, SqlCallSlots
from .grants import SqlGrants, grant_tables
from .ledger_sql import (
    LEDGER_COLUMNS,
    RESERVATION_COLUMNS,
    Rows,
    SqlLedger,
    Steps,
    ledger_sql,
    run_steps_async,
)
from .partials import PARTIAL_TTL_SECONDS, follow_log, prepare_partial
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

__all__ = ["SCHEMA_VERSION", "PostgresSessionService"]

SCHEMA_VERSION = 1
"""The schema version this module creates and reads."""

_Connection = psycopg.AsyncConnection[TupleRow]

# "statement": one autocommitted statement (a read that must see one snapshot is written as
# one statement); "write": a read-committed transaction ordered by row locks.
_Mode = Literal["statement", "write"]
_T = TypeVar("_T")

# Any fixed key works; it only has to be the same in every process creating the schema.
_SCHEMA_LOCK_KEY = 0x61646B5F73657373

_SCHEMA = (
    "CREATE TABLE adk_schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE adk_app_states (
        app_name TEXT COLLATE "C" PRIMARY KEY,
        state TEXT NOT NULL
    )""",
    """CREATE TABLE adk_user_states (
        app_name TEXT COLLATE "C" NOT NULL,
        user_id TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id)
    )""",
    """CREATE TABLE adk_sessions (
        pk BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        app_name TEXT COLLATE "C" NOT NULL,
        user_id TEXT COLLATE "C" NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL,
        create_time DOUBLE PRECISION NOT NULL,
        update_time DOUBLE PRECISION NOT NULL,
        UNIQUE (app_name, user_id, session_id)
    )""",
    """CREATE TABLE adk_events (
        session_pk BIGINT NOT NULL REFERENCES adk_sessions (pk) ON DELETE CASCADE,
        sequence BIGINT NOT NULL,
        event_id TEXT COLLATE "C" NOT NULL,
        author TEXT NOT NULL,
        invocation_id TEXT NOT NULL,
        timestamp DOUBLE PRECISION NOT NULL,
        event_json TEXT NOT NULL,
        PRIMARY KEY (session_pk, sequence),
        UNIQUE (session_pk, event_id)
    )""",
)

# Added after schema version 1 without changing anything else, so it is created on every
# open rather than with the versioned tables.
_STAGED_TABLE = """CREATE TABLE IF NOT EXISTS adk_staged_events (
    session_pk BIGINT NOT NULL REFERENCES adk_sessions (pk) ON DELETE CASCADE,
    event_id TEXT COLLATE "C" NOT NULL,
    event_json TEXT NOT NULL,
    PRIMARY KEY (session_pk, event_id)
)"""

# Created on open like the staged table: what rewind and fork start from.
_INITIAL_TABLE = """CREATE TABLE IF NOT EXISTS adk_initial_states (
    session_pk BIGINT PRIMARY KEY REFERENCES adk_sessions (pk) ON DELETE CASCADE,
    state TEXT NOT NULL
)"""

# The ledger outlives sessions (a deleted session's tokens still count for its user and app),
# so it keys rows by name, not by the session's primary key.
_LEDGER_TABLE = f"CREATE TABLE IF NOT EXISTS adk_token_ledger ({LEDGER_COLUMNS})"
# One row per model limit: when its next call may start.
_CALL_SLOT_TABLE = f"CREATE TABLE IF NOT EXISTS adk_call_slots ({CALL_SLOT_COLUMNS})"
# Keyed like the ledger: a receipt says what happened to a call whatever became of its session.
_RECEIPT_TABLE = f"CREATE TABLE IF NOT EXISTS adk_effects ({RECEIPT_COLUMNS})"

# Keyed like the ledger; a reservation lives as long as its step, or its lease.
_RESERVATION_TABLE = f"CREATE TABLE IF NOT EXISTS adk_token_reservations ({RESERVATION_COLUMNS})"

# Created on open like the staged table: standing grants outlive sessions, as the ledger.
_GRANT_TABLES = grant_tables("adk_", "DOUBLE PRECISION")

# Created on open like the staged table. The advisory lock in publish_partial serialises a
# session's publishers, so its pieces commit in sequence order and a follower reading "after
# the last sequence seen" never skips one that commits late.
_PARTIAL_TABLES = (
    """CREATE TABLE IF NOT EXISTS adk_partial_events (
        sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        app_name TEXT COLLATE "C" NOT NULL,
        user_id TEXT COLLATE "C" NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        event_id TEXT COLLATE "C" NOT NULL,
        event_json TEXT NOT NULL,
        published DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS adk_partial_events_session "
    "ON adk_partial_events (app_name, user_id, session_id, sequence)",
    "CREATE INDEX IF NOT EXISTS adk_partial_events_published ON adk_partial_events (published)",
)

_PARTIALS_OF_SESSION = "app_name = %s AND user_id = %s AND session_id = %s"

# How long a follower waits for a notification before reading anyway: a notification is
# only lost with its connection, which the next read then reports.
_NOTIFY_WAIT_SECONDS = 1.0


def _channel(key: SessionKey) -> str:
    """The session's NOTIFY channel: a hash, as ids may be longer than an identifier."""
    return "adk_partials_" + hashlib.sha1("\x00".join(key).encode()).hexdigest()


# The shared scopes come in the same statement, so the merged state is one snapshot even
# outside a transaction.
_SESSION_FIELDS = """s.pk, s.session_id, s.state, s.update_time,
    (SELECT a.state FROM adk_app_states a WHERE a.app_name = s.app_name),
    (SELECT u.state FROM adk_user_states u
     WHERE u.app_name = s.app_name AND u.user_id = s.user_id)"""
_SESSION_COLUMNS = f"{_SESSION_FIELDS} FROM adk_sessions s"
_SESSION_KEY = "s.app_name = %s AND s.user_id = %s AND s.session_id = %s"

_SESSION_ROW = f"SELECT {_SESSION_COLUMNS} WHERE {_SESSION_KEY}"

# One statement, so one snapshot: the events and the states it returns belong together,
# in one round trip to the server rather than a transaction's five.
_SESSION_WITH_EVENTS = (
    f"SELECT {_SESSION_FIELDS}, ARRAY(SELECT e.event_json FROM adk_events e "
    "WHERE e.session_pk = s.pk AND e.sequence > %s ORDER BY e.sequence LIMIT %s) "
    f"FROM adk_sessions s WHERE {_SESSION_KEY}"
)

# An upsert that changes nothing still locks the row, and creates it when missing: a plain
# SELECT ... FOR UPDATE finds no row to lock the first time, and two writers would both
# insert their own version of the scope.
_LOCK_APP_STATE = (
    "INSERT INTO adk_app_states (app_name, state) VALUES (%s, '{}') "
    "ON CONFLICT (app_name) DO UPDATE SET state = adk_app_states.state RETURNING state"
)
_LOCK_USER_STATE = (
    "INSERT INTO adk_user_states (app_name, user_id, state) VALUES (%s, %s, '{}') "
    "ON CONFLICT (app_name, user_id) DO UPDATE SET state = adk_user_states.state "
    "RETURNING state"
)


class PostgresSessionService(SqlLedger, SqlCallSlots, SqlGrants, SqlEffectReceipts, SessionService):
    """Stores sessions in PostgreSQL; safe for many worker processes on many machines.

    The schema is created on first use, which also checks that the database is reachable.
    Use ``async with`` or call :meth:`close` when done; a closed service refuses further
    calls. A service belongs to the event loop it is first used on.

    Args:
        dsn: A libpq connection string or ``postgresql://`` URI. The user needs the right to
            create tables on first use.
        min_connections: Connections the pool keeps open.
        max_connections: Connections the pool opens at most; further calls wait.
        pool_timeout: Seconds a call waits for a free connection before failing with
            ``psycopg_pool.PoolTimeout``.
        clock: Returns the current time in seconds; stamps a new session's update time and
            events appended without a timestamp.
        sealer: Seals each session's rows with its data key
            (:class:`~adk_temporal.keys.StoreSealer`); ``None`` stores them as JSON.

    Raises:
        psycopg.ProgrammingError: ``dsn`` cannot be parsed.
    """

    _sql = ledger_sql("postgres")
    _dialect = "postgres"
    # A use locks the grants it counts, so two calls never take a grant's last use twice.
    _grant_sql = SqlGrants.grant_statements("%s", "adk_", " FOR UPDATE OF g")

    def __init__(
        self,
        dsn: str,
        *,
        min_connections: int = 1,
        max_connections: int = 10,
        pool_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
        sealer: RowSealer | None = None,
    ) -> None:
        self._dsn = dsn
        self._sealer = sealer
        # Kept for messages and repr: the DSN may carry a password.
        parameters = conninfo_to_dict(dsn)
        parameters.pop("password", None)
        self._description = make_conninfo("", **parameters)
        self._min_connections = min_connections
        self._max_connections = max_connections
        self._pool_timeout = pool_timeout
        self._clock = clock
        self._pool: AsyncConnectionPool[_Connection] | None = None
        self._open_lock = asyncio.Lock()
        self._closed = False

    def __repr__(self) -> str:
        """The class and the connection parameters, without the password."""
        return f"PostgresSessionService({self._description!r})"

    async def close(self) -> None:
        """Close the connection pool; idempotent. Calls still running finish first."""
        self._closed = True
        # Under the lock, so a first use that is opening the pool right now cannot leave an
        # open pool behind.
        async with self._open_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def create(self, key: SessionKey, *, state: Mapping[str, Any] | None = None) -> Session:
        """Create an empty session (see :meth:`ConversationStore.create`)."""
        check_identity(key)
        initial = to_json_state(state or {}, where="initial state")
        app_delta: dict[str, Any] = {}
        user_delta: dict[str, Any] = {}
        session_state: dict[str, Any] = {}
        apply_state_delta(initial, app=app_delta, user=user_delta, session=session_state)
        now = self._clock()
        rows = await rows_for(self._sealer, key)
        async with self._connection("write") as conn:
            # A concurrent create of the same key waits here for the other to commit, then
            # inserts nothing.
            cursor = await conn.execute(
                "INSERT INTO adk_sessions "
                "(app_name, user_id, session_id, state, create_time, update_time) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING pk",
                (*key, rows.state_text(session_state), now, now),
            )
            inserted = await cursor.fetchone()
            if inserted is None:
                raise session_exists_error(key)
            if session_state:
                await conn.execute(
                    "INSERT INTO adk_initial_states (session_pk, state) VALUES (%s, %s)",
                    (inserted[0], rows.state_text(session_state)),
                )
            await _update_shared_scopes(conn, key, app_delta, user_delta)
            return await _read_session(conn, key, rows, after_sequence=0)

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        """Read a session with its events (see :meth:`ConversationStore.get`)."""
        check_identity(key)
        check_after_sequence(after_sequence, limit)
        rows = read_rows(self._sealer)
        async with self._connection("statement") as conn:
            return await _read_session(conn, key, rows, after_sequence=after_sequence, limit=limit)

    async def get_state(self, key: SessionKey) -> dict[str, Any]:
        """Read a session's merged state (see :meth:`ConversationStore.get_state`)."""
        check_identity(key)
        async with self._connection("statement") as conn:
            row = await (await conn.execute(_SESSION_ROW, key)).fetchone()
        if row is None:
            raise session_not_found_error(key)
        return _merged_row_state(row, read_rows(self._sealer))

    async def get_initial_state(self, key: SessionKey) -> dict[str, Any]:
        """Read the state ``create`` set (see :meth:`ConversationStore.get_initial_state`)."""
        check_identity(key)
        async with self._connection("statement") as conn:
            cursor = await conn.execute(
                "SELECT i.state FROM adk_sessions s LEFT JOIN adk_initial_states i "
                "ON i.session_pk = s.pk "
                "WHERE s.app_name = %s AND s.user_id = %s AND s.session_id = %s",
                key,
            )
            row = await cursor.fetchone()
        if row is None:
            raise session_not_found_error(key)
        return read_rows(self._sealer).state(row[0] or "{}")

    async def list(self, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions without events (see :meth:`ConversationStore.list`)."""
        check_user(app_name, user_id)
        async with self._connection("statement") as conn:
            cursor = await conn.execute(
                f"SELECT {_SESSION_COLUMNS} WHERE s.app_name = %s AND s.user_id = %s "
                "ORDER BY s.session_id",
                (app_name, user_id),
            )
            rows = await cursor.fetchall()
        sealed = read_rows(self._sealer)
        return [
            Session(
                id=row[1],
                app_name=app_name,
                user_id=user_id,
                state=_merged_row_state(row, sealed),
                last_update_time=row[3],
            )
            for row in rows
        ]

    async def delete(self, key: SessionKey) -> None:
        """Delete a session if it exists (see :meth:`ConversationStore.delete`)."""
        check_identity(key)
        async with self._connection("statement") as conn:
            # Events go with it through ON DELETE CASCADE.
            await conn.execute(
                "DELETE FROM adk_sessions WHERE app_name = %s AND user_id = %s AND session_id = %s",
                key,
            )
            await conn.execute(f"DELETE FROM adk_partial_events WHERE {_PARTIALS_OF_SESSION}", key)

    async def user_ids(self, app_name: str) -> builtins.list[str]:
        """Every user of the app (see :meth:`ErasableStore.user_ids`)."""
        async with self._connection("statement") as conn:
            cursor = await conn.execute(
                "SELECT user_id FROM adk_sessions WHERE app_name = %s UNION "
                "SELECT user_id FROM adk_user_states WHERE app_name = %s ORDER BY user_id",
                (app_name, app_name),
            )
            return [user_id for (user_id,) in await cursor.fetchall()]

    async def idle_sessions(
        self, app_name: str, before: float, limit: int
    ) -> builtins.list[tuple[SessionKey, float]]:
        """Sessions idle since before ``before`` (see :meth:`ErasableStore.idle_sessions`)."""
        async with self._connection("statement") as conn:
            cursor = await conn.execute(
                "SELECT user_id, session_id, update_time FROM adk_sessions WHERE app_name = %s "
                "AND update_time < %s ORDER BY update_time, user_id, session_id LIMIT %s",
                (app_name, before, limit),
            )
            rows = await cursor.fetchall()
        return [(SessionKey(app_name, user, session), at) for user, session, at in rows]

    async def delete_scope_state(self, app_name: str, user_id: str | None) -> None:
        """Delete a user's or an app's state (see :meth:`ErasableStore.delete_scope_state`)."""
        async with self._connection("write") as conn:
            if user_id is not None:
                await conn.execute(
                    "DELETE FROM adk_user_states WHERE app_name = %s AND user_id = %s",
                    (app_name, user_id),
                )
                return
            await conn.execute("DELETE FROM adk_user_states WHERE app_name = %s", (app_name,))
            await conn.execute("DELETE FROM adk_app_states WHERE app_name = %s", (app_name,))

    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        async with self._connection("write" if write else "statement") as conn:

            async def execute(statement: str, params: tuple[Any, ...]) -> Rows:
                cursor = await conn.execute(statement, params)
                return await cursor.fetchall() if cursor.description is not None else []

            return await run_steps_async(steps, execute)

    async def stage_events(self, key: SessionKey, events: Sequence[Event]) -> None:
        """Keep events aside (see :meth:`StagingArea.stage_events`)."""
        prepared = prepare_stage(key, events)
        rows = await rows_for(self._sealer, key)
        async with self._connection("write") as conn:
            row = await (await conn.execute(_SESSION_ROW, key)).fetchone()
            if row is None:
                raise session_not_found_error(key)
            async with conn.cursor() as insert:
                await insert.executemany(
                    "INSERT INTO adk_staged_events (session_pk, event_id, event_json) "
                    "VALUES (%s, %s, %s) ON CONFLICT (session_pk, event_id) "
                    "DO UPDATE SET event_json = excluded.event_json",
                    [(row[0], event_id, rows.seal(text)) for event_id, text in prepared],
                )

    async def staged_events(self, key: SessionKey, ids: Sequence[str]) -> dict[str, Event]:
        """Read staged events (see :meth:`StagingArea.staged_events`)."""
        check_identity(key)
        async with self._connection("statement") as conn:
            # One statement: a session without such events is one row of NULLs, no session
            # no row.
            cursor = await conn.execute(
                "SELECT st.event_id, st.event_json FROM adk_sessions s "
                "LEFT JOIN adk_staged_events st "
                "ON st.session_pk = s.pk AND st.event_id = ANY(%s) "
                f"WHERE {_SESSION_KEY}",
                (list(ids), *key),
            )
            rows = await cursor.fetchall()
        if not rows:
            raise session_not_found_error(key)
        found = [(event_id, data) for event_id, data in rows if event_id is not None]
        sealed = read_rows(self._sealer)
        return {event_id: sealed.event(data) for event_id, data in found}

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> builtins.list[Event]:
        """Append events idempotently (see :meth:`ConversationStore.append_events`)."""
        check_identity(key)
        prepared = prepare_events(events, now=self._clock())
        rows = await rows_for(self._sealer, key)
        async with self._connection("write") as conn:
            cursor = await conn.execute(
                "SELECT pk, state FROM adk_sessions "
                "WHERE app_name = %s AND user_id = %s AND session_id = %s FOR UPDATE",
                key,
            )
            row = await cursor.fetchone()
            if row is None:
                raise session_not_found_error(key)
            session_pk, state_json = row
            if unstage:
                await conn.execute(
                    "DELETE FROM adk_staged_events WHERE session_pk = %s AND event_id = ANY(%s)",
                    (session_pk, list(unstage)),
                )
            if not prepared:
                return []
            await conn.execute(
                f"DELETE FROM adk_partial_events WHERE {_PARTIALS_OF_SESSION} "
                "AND event_id = ANY(%s)",
                (*key, [event.id for event in prepared]),
            )
            result, new = await _insert_new(conn, session_pk, prepared, rows)
            if new:
                session_state = rows.state(state_json)
                app_delta: dict[str, Any] = {}
                user_delta: dict[str, Any] = {}
                for event in new:
                    # Assignments are last-wins, so folding the batch's deltas into one per
                    # scope and applying that once equals applying them event by event.
                    apply_state_delta(
                        event.actions.state_delta,
                        app=app_delta,
                        user=user_delta,
                        session=session_state,
                    )
                await _update_shared_scopes(conn, key, app_delta, user_delta)
                await conn.execute(
                    "UPDATE adk_sessions SET state = %s, update_time = %s WHERE pk = %s",
                    (rows.state_text(session_state), new[-1].timestamp, session_pk),
                )
            return result

    async def publish_partial(self, key: SessionKey, event: Event) -> None:
        """Keep a piece and notify the session's followers (``publish_partial``)."""
        rows = await rows_for(self._sealer, key)
        data = rows.seal(prepare_partial(key, event))
        now = self._clock()
        channel = _channel(key)
        async with self._connection("write") as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (channel,))
            await conn.execute(
                "DELETE FROM adk_partial_events WHERE published < %s",
                (now - PARTIAL_TTL_SECONDS,),
            )
            await conn.execute(
                "INSERT INTO adk_partial_events (app_name, user_id, session_id, event_id, "
                "event_json, published) VALUES (%s, %s, %s, %s, %s, %s)",
                (*key, event.id, data, now),
            )
            # Delivered when the transaction commits, so the row is there to read.
            await conn.execute("SELECT pg_notify(%s, '')", (channel,))

    def follow_partials(self, key: SessionKey) -> AsyncGenerator[Event, None]:
        """Pieces as NOTIFY announces them (``PartialChannel.follow_partials``)."""
        check_identity(key)
        return self._follow_partials(key)

    async def _follow_partials(self, key: SessionKey) -> AsyncGenerator[Event, None]:
        await self._open()
        sealed = read_rows(self._sealer)
        # A connection of its own, outside the pool: it listens for as long as the
        # follower runs, and notifications arrive only on the connection that listens.
        conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
        async with conn:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(_channel(key))))

            async def read_after(sequence: int) -> builtins.list[tuple[int, Event]]:
                cursor = await conn.execute(
                    "SELECT sequence, event_json FROM adk_partial_events "
                    f"WHERE {_PARTIALS_OF_SESSION} AND sequence > %s ORDER BY sequence",
                    (*key, sequence),
                )
                return [(number, sealed.event(data)) for number, data in await cursor.fetchall()]

            async def wait() -> None:
                async for _ in conn.notifies(timeout=_NOTIFY_WAIT_SECONDS, stop_after=1):
                    pass

            async for event in follow_log(read_after, wait):
                yield event

    @asynccontextmanager
    async def _connection(self, mode: _Mode) -> AsyncIterator[_Connection]:
        pool = await self._open()
        async with pool.connection() as conn:
            if mode == "statement":
                # Pooled connections are in autocommit mode: one statement is one snapshot.
                yield conn
                return
            async with conn.transaction():
                yield conn

    async def _open(self) -> AsyncConnectionPool[_Connection]:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        if self._pool is not None:
            return self._pool
        async with self._open_lock:
            if self._closed:
                raise RuntimeError(f"{self!r} is closed")
            if self._pool is None:
                # A direct connection first: when the database is unreachable its error names
                # the cause, where the pool would only time out.
                connection = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
                async with connection:
                    await self._ensure_schema(connection)
                pool: AsyncConnectionPool[_Connection] = AsyncConnectionPool(
                    self._dsn,
                    min_size=self._min_connections,
                    max_size=self._max_connections,
                    timeout=self._pool_timeout,
                    kwargs={"autocommit": True},
                    open=False,
                    name="adk-sessions",
                )
                await pool.open()
                self._pool = pool
            return self._pool

    async def _ensure_schema(self, conn: _Connection) -> None:
        async with conn.transaction():
            # Two processes starting on a fresh database would both find no tables and one
            # would fail creating them; the advisory lock makes the second wait and find
            # them.
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
            cursor = await conn.execute("SELECT to_regclass('adk_schema_version') IS NOT NULL")
            exists = await cursor.fetchone()
            if exists is None or not exists[0]:
                for statement in _SCHEMA:
                    await conn.execute(statement)
                await _create_open_tables(conn)
                await conn.execute(
                    "INSERT INTO adk_schema_version (version) VALUES (%s)", (SCHEMA_VERSION,)
                )
                return
            cursor = await conn.execute("SELECT version FROM adk_schema_version")
            versions = [version for (version,) in await cursor.fetchall()]
            if versions != [SCHEMA_VERSION]:
                raise RuntimeError(
                    f"session database {self._description!r} has schema version "
                    f"{', '.join(map(str, versions)) or 'none'}, but this adk-temporal reads "
                    f"version {SCHEMA_VERSION}; use a matching adk-temporal release or a new "
                    "database"
                )
            await _create_open_tables(conn)


async def _create_open_tables(conn: _Connection) -> None:
    """The tables added after schema version 1, created on every open."""
    tables = (
        _STAGED_TABLE,
        _INITIAL_TABLE,
        _LEDGER_TABLE,
        _RESERVATION_TABLE,
        _CALL_SLOT_TABLE,
        _RECEIPT_TABLE,
        *_PARTIAL_TABLES,
        *_GRANT_TABLES,
    )
    for statement in tables:
        await conn.execute(statement)


async def _insert_new(
    conn: _Connection, session_pk: int, prepared: Sequence[Event], sealed: SealedRows
) -> tuple[builtins.list[Event], builtins.list[Event]]:
    """Insert the events whose ids the session does not hold yet, with the next sequences.

    Returns:
        One stored event per prepared event (the earlier one for a known id), and the
        events newly inserted, in order.
    """
    cursor = await conn.execute(
        "SELECT event_id, event_json FROM adk_events WHERE session_pk = %s AND event_id = ANY(%s)",
        (session_pk, [event.id for event in prepared]),
    )
    stored = {event_id: sealed.event(text) for event_id, text in await cursor.fetchall()}
    cursor = await conn.execute(
        "SELECT COALESCE(MAX(sequence), 0) FROM adk_events WHERE session_pk = %s", (session_pk,)
    )
    (sequence,) = await cursor.fetchone() or (0,)
    result: builtins.list[Event] = []
    new: builtins.list[Event] = []
    for event in prepared:
        earlier = stored.get(event.id)
        if earlier is not None:
            result.append(earlier.model_copy(deep=True))
            continue
        stored[event.id] = event
        result.append(event)
        new.append(event)
    if new:
        rows = [
            (
                session_pk,
                sequence + offset,
                event.id,
                event.author,
                event.invocation_id,
                event.timestamp,
                sealed.event_text(event),
            )
            for offset, event in enumerate(new, start=1)
        ]
        async with conn.cursor() as insert:
            await insert.executemany(
                "INSERT INTO adk_events (session_pk, sequence, event_id, author, "
                "invocation_id, timestamp, event_json) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
    return result, new


async def _update_shared_scopes(
    conn: _Connection,
    key: SessionKey,
    app_delta: Mapping[str, Any],
    user_delta: Mapping[str, Any],
) -> None:
    app_name, user_id, _ = key
    # Read-modify-write under the row lock; the app row before the user row, always.
    if app_delta:
        cursor = await conn.execute(_LOCK_APP_STATE, (app_name,))
        (state_json,) = await cursor.fetchone() or ("{}",)
        await conn.execute(
            "UPDATE adk_app_states SET state = %s WHERE app_name = %s",
            (json.dumps({**json.loads(state_json), **app_delta}), app_name),
        )
    if user_delta:
        cursor = await conn.execute(_LOCK_USER_STATE, (app_name, user_id))
        (state_json,) = await cursor.fetchone() or ("{}",)
        await conn.execute(
            "UPDATE adk_user_states SET state = %s WHERE app_name = %s AND user_id = %s",
            (json.dumps({**json.loads(state_json), **user_delta}), app_name, user_id),
        )


def _merged_row_state(row: TupleRow, sealed: SealedRows) -> dict[str, Any]:
    # Columns of _SESSION_COLUMNS: the session's state, then the app's and user's (NULL
    # when the scope was never written).
    return merged_state(
        json.loads(row[4] or "{}"), json.loads(row[5] or "{}"), sealed.state(row[2])
    )


async def _read_session(
    conn: _Connection,
    key: SessionKey,
    sealed: SealedRows,
    *,
    after_sequence: int,
    limit: int | None = None,
) -> Session:
    # LIMIT NULL: no limit, in PostgreSQL.
    cursor = await conn.execute(_SESSION_WITH_EVENTS, (after_sequence, limit, *key))
    row = await cursor.fetchone()
    if row is None:
        raise session_not_found_error(key)
    events = [sealed.event(event_json) for event_json in row[6]]
    app_name, user_id, session_id = key
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=_merged_row_state(row, sealed),
        events=events,
        last_update_time=row[3],
    )
