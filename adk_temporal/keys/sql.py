"""Key stores in the session store's database: SQLite (one machine) and PostgreSQL.

Three tables beside the session store's own, created on first use::

    adk_data_keys(key_id PRIMARY KEY, scope UNIQUE, wrapped, master_key_id, created_at)
    adk_forgotten_keys(key_id PRIMARY KEY, scope, forgotten_at)
    adk_forget_log(seq, at, target, entry_json)

``UNIQUE (scope)`` makes the first key of a scope one key however many workers make it at
once. A forget deletes the keys and records them forgotten in one transaction. Each store
holds one connection behind a lock (calls are short); PostgreSQL's driver is the optional
``postgres`` extra, imported when such a store is opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from ..extras import needs_extra
from .scopes import inside
from .store import ForgetEntry, ForgottenKey, KeyStoreError, StoredKey

__all__ = ["PostgresKeyStore", "SqliteKeyStore"]

_TABLES = (
    """CREATE TABLE IF NOT EXISTS adk_data_keys (
        key_id TEXT PRIMARY KEY,
        scope TEXT NOT NULL UNIQUE,
        wrapped {blob} NOT NULL,
        master_key_id TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS adk_forgotten_keys (
        key_id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        forgotten_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS adk_forget_log (
        seq {serial},
        at DOUBLE PRECISION NOT NULL,
        target TEXT NOT NULL,
        entry_json TEXT NOT NULL
    )""",
)

_KEY_FIELDS = "key_id, scope, wrapped, master_key_id, created_at"


class _SqlKeyStore:
    """The key store's statements over a DB-API connection; subclasses connect."""

    _mark = "?"
    _dialect: Literal["sqlite", "postgres"] = "sqlite"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None

    def _connect(self) -> Any:
        raise NotImplementedError

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self._mark)

    def _within(self, column: str) -> str:
        # "scope = p OR scope starts with p/": a prefix match without LIKE, whose wildcards
        # ids may contain.
        return f"({column} = ? OR substr({column}, 1, ?) = ?)"

    def _run(self, work: Callable[[Any], Any], *, write: bool) -> Any:
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            conn = self._conn
            cursor = conn.cursor()
            try:
                if write and self._dialect == "sqlite":
                    cursor.execute("BEGIN IMMEDIATE")
                result = work(cursor)
                conn.commit()
                return result
            except BaseException:
                self._after_failure(conn)
                raise
            finally:
                cursor.close()

    def _after_failure(self, conn: Any) -> None:
        # A connection the server dropped is opened anew by the next call, not reused.
        try:
            conn.rollback()
        except Exception:
            conn.close()
            self._conn = None

    def current(self, scope: str) -> StoredKey | None:
        """The live key of ``scope`` (see :meth:`KeyStore.current`)."""

        def read(cur: Any) -> StoredKey | None:
            cur.execute(
                self._sql(f"SELECT {_KEY_FIELDS} FROM adk_data_keys WHERE scope = ?"), (scope,)
            )
            return _key(cur.fetchone())

        found: StoredKey | None = self._run(read, write=False)
        return found

    def get(self, key_id: str) -> StoredKey | ForgottenKey | None:
        """The key ``key_id``, live or forgotten (see :meth:`KeyStore.get`)."""

        def read(cur: Any) -> StoredKey | ForgottenKey | None:
            cur.execute(
                self._sql(f"SELECT {_KEY_FIELDS} FROM adk_data_keys WHERE key_id = ?"), (key_id,)
            )
            live = _key(cur.fetchone())
            if live is not None:
                return live
            cur.execute(
                self._sql("SELECT scope, forgotten_at FROM adk_forgotten_keys WHERE key_id = ?"),
                (key_id,),
            )
            row = cur.fetchone()
            return ForgottenKey(key_id, row[0], float(row[1])) if row else None

        found: StoredKey | ForgottenKey | None = self._run(read, write=False)
        return found

    def add(self, key: StoredKey) -> StoredKey:
        """Store ``key`` unless its scope has a live key (see :meth:`KeyStore.add`)."""

        def insert(cur: Any) -> StoredKey | None:
            cur.execute(
                self._sql(
                    f"INSERT INTO adk_data_keys ({_KEY_FIELDS}) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (scope) DO NOTHING"
                ),
                (key.key_id, key.scope, key.wrapped, key.master_key_id, key.created_at),
            )
            cur.execute(
                self._sql(f"SELECT {_KEY_FIELDS} FROM adk_data_keys WHERE scope = ?"),
                (key.scope,),
            )
            return _key(cur.fetchone())

        stored: StoredKey | None = self._run(insert, write=True)
        if stored is None:
            raise KeyStoreError(f"{self!r}: the key of {key.scope} vanished as it was added")
        return stored

    def forget(self, prefix: str, at: float) -> list[ForgottenKey]:
        """Delete the live keys within ``prefix`` (see :meth:`KeyStore.forget`)."""
        within = self._within("scope")
        args = (prefix, len(prefix) + 1, prefix + "/")

        def delete(cur: Any) -> list[ForgottenKey]:
            cur.execute(self._sql(f"SELECT key_id, scope FROM adk_data_keys WHERE {within}"), args)
            rows: Sequence[tuple[str, str]] = cur.fetchall()
            for key_id, scope in rows:
                cur.execute(
                    self._sql(
                        "INSERT INTO adk_forgotten_keys (key_id, scope, forgotten_at) "
                        "VALUES (?, ?, ?) ON CONFLICT (key_id) DO NOTHING"
                    ),
                    (key_id, scope, at),
                )
            cur.execute(self._sql(f"DELETE FROM adk_data_keys WHERE {within}"), args)
            return [ForgottenKey(key_id, scope, at) for key_id, scope in rows]

        forgotten: list[ForgottenKey] = self._run(delete, write=True)
        return forgotten

    def scopes(self, prefix: str) -> list[str]:
        """The scopes within ``prefix`` holding a live key (see :meth:`KeyStore.scopes`)."""
        within = self._within("scope")

        def read(cur: Any) -> list[str]:
            cur.execute(
                self._sql(f"SELECT scope FROM adk_data_keys WHERE {within} ORDER BY scope"),
                (prefix, len(prefix) + 1, prefix + "/"),
            )
            return [row[0] for row in cur.fetchall()]

        found: list[str] = self._run(read, write=False)
        return found

    def record(self, entry: ForgetEntry) -> None:
        """Append ``entry`` to the forget log (see :meth:`KeyStore.record`)."""

        def insert(cur: Any) -> None:
            cur.execute(
                self._sql("INSERT INTO adk_forget_log (at, target, entry_json) VALUES (?, ?, ?)"),
                (entry.at, entry.target, entry.model_dump_json()),
            )

        self._run(insert, write=True)

    def entries(self, prefix: str | None = None) -> list[ForgetEntry]:
        """The forget log, oldest first (see :meth:`KeyStore.entries`)."""

        def read(cur: Any) -> list[str]:
            cur.execute("SELECT entry_json FROM adk_forget_log ORDER BY seq")
            return [row[0] for row in cur.fetchall()]

        texts: list[str] = self._run(read, write=False)
        found = [ForgetEntry.model_validate_json(text) for text in texts]
        if prefix is None:
            return found
        return [e for e in found if inside(e.target, prefix) or inside(prefix, e.target)]

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _key(row: Sequence[Any] | None) -> StoredKey | None:
    if row is None:
        return None
    key_id, scope, wrapped, master_key_id, created_at = row
    return StoredKey(key_id, scope, bytes(wrapped), master_key_id, float(created_at))


class SqliteKeyStore(_SqlKeyStore):
    """A key store in a SQLite file: the embedded session store's ``sessions.db`` by default.

    Args:
        path: The database file (created with its tables on first use).
        busy_timeout: Seconds a write waits for another process's lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._busy_timeout = busy_timeout

    def __repr__(self) -> str:
        return f"SqliteKeyStore({self.path!r})"

    def _connect(self) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _TABLES:
                conn.execute(
                    statement.format(blob="BLOB", serial="INTEGER PRIMARY KEY AUTOINCREMENT")
                )
            conn.execute("COMMIT")
            # Explicit transactions from here on: _run begins them and commits.
            conn.isolation_level = "DEFERRED"
        except sqlite3.Error as err:
            conn.close()
            raise KeyStoreError(f"cannot open key store {self.path}: {err}") from None
        return conn


class PostgresKeyStore(_SqlKeyStore):
    """A key store in a PostgreSQL database, shared by workers on several machines.

    Args:
        dsn: The database (the session store's, typically).
    """

    _mark = "%s"
    _dialect = "postgres"

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self.dsn = dsn

    def __repr__(self) -> str:
        # The DSN may carry a password: never printed.
        return "PostgresKeyStore(...)"

    def _connect(self) -> Any:
        with needs_extra("postgres", "PostgresKeyStore"):
            import psycopg
        try:
            conn = psycopg.connect(self.dsn)
            with conn.cursor() as cur:
                # One creator at a time: concurrent CREATE TABLE IF NOT EXISTS can still clash.
                cur.execute("SELECT pg_advisory_xact_lock(4817301)")
                for statement in _TABLES:
                    cur.execute(statement.format(blob="BYTEA", serial="BIGSERIAL PRIMARY KEY"))
            conn.commit()
        except psycopg.Error as err:
            raise KeyStoreError(f"cannot open the PostgreSQL key store: {err}") from None
        return conn
