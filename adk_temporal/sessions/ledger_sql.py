"""The token ledger in SQL: the statements SQLite and PostgreSQL share, and one sequence of
them per operation, which each backend runs in its own transaction.

An operation is a generator of ``(statement, parameters)`` that receives each statement's
rows (:data:`Steps`): SQLite drives it on its thread (:func:`run_steps`), PostgreSQL on its
event loop (:func:`run_steps_async`), so the reservation's read-judge-write is written once.
SQLite's write transaction holds the database's one write lock; PostgreSQL serialises the
reservations and settlements of one app with a transaction-scoped advisory lock, as an
app's budget spans all its users.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

from ..ids import SessionKey
from ..usage import SCOPES
from .ledger import (
    CheckedLedger,
    ReservationAsk,
    TokenReservation,
    TokenTotals,
    judge_reservation,
)
from .rules import check_identity

__all__ = [
    "LEDGER_COLUMNS",
    "RESERVATION_COLUMNS",
    "LedgerSql",
    "SqlLedger",
    "Steps",
    "ledger_sql",
    "run_steps",
    "run_steps_async",
    "totals_params",
]

_T = TypeVar("_T")

Rows: TypeAlias = list[tuple[Any, ...]]
Steps: TypeAlias = Generator[tuple[str, tuple[Any, ...]], Rows, _T]
"""An operation: yields each statement with its parameters, receives its rows (``[]`` for
one that returns none), returns the operation's result."""

LEDGER_COLUMNS = (
    "app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, "
    "entry_id TEXT NOT NULL, kind TEXT NOT NULL, tokens BIGINT NOT NULL, "
    "PRIMARY KEY (app_name, user_id, session_id, entry_id)"
)
"""The ledger table's columns: ``kind`` is ``used``, or the scope a grant raises."""

RESERVATION_COLUMNS = (
    "app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, "
    "entry_id TEXT NOT NULL, tokens BIGINT NOT NULL, expires_at DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (app_name, user_id, session_id, entry_id)"
)
"""The reservations table's columns: one row per step running now, until its lease ends."""

_KEY_COLUMNS = "app_name, user_id, session_id, entry_id"


@dataclass(frozen=True)
class LedgerSql:
    """The ledger's statements in one dialect."""

    insert: str
    """One ledger row; a second of the same id is a no-op."""
    totals: str
    """Used, then granted, per scope: parameters :func:`totals_params`."""
    reserved: str
    """Live reservations per scope: parameters user, session, user, app, now."""
    purge: str
    """Drop an app's ended leases and one step's reservation: app, now, the step's key."""
    reserve: str
    """One reservation row."""
    release: str
    """Delete one step's reservation."""
    lock: str | None
    """Serialises an app's reservations, where the write transaction does not."""


def ledger_sql(dialect: Literal["sqlite", "postgres"]) -> LedgerSql:
    """The statements of ``dialect``, over its table names (``token_ledger`` and
    ``token_reservations`` in SQLite, ``adk_``-prefixed in PostgreSQL)."""
    mark, prefix = ("?", "") if dialect == "sqlite" else ("%s", "adk_")
    ledger, held = f"{prefix}token_ledger", f"{prefix}token_reservations"
    values = ", ".join([mark] * 6)
    insert = f"INSERT INTO {ledger} ({_KEY_COLUMNS}, kind, tokens) VALUES ({values})"
    own = f"user_id = {mark} AND session_id = {mark} AND entry_id = {mark}"
    per_scope = (
        f"COALESCE(SUM(CASE WHEN user_id = {mark} AND session_id = {mark} THEN tokens END), 0), "
        f"COALESCE(SUM(CASE WHEN user_id = {mark} THEN tokens END), 0), "
        "COALESCE(SUM(tokens), 0)"
    )
    return LedgerSql(
        insert=(
            insert.replace("INSERT", "INSERT OR IGNORE")
            if dialect == "sqlite"
            else f"{insert} ON CONFLICT DO NOTHING"
        ),
        totals=_totals(ledger, mark),
        reserved=f"SELECT {per_scope} FROM {held} WHERE app_name = {mark} AND expires_at > {mark}",
        purge=f"DELETE FROM {held} WHERE app_name = {mark} AND (expires_at <= {mark} OR ({own}))",
        reserve=f"INSERT INTO {held} ({_KEY_COLUMNS}, tokens, expires_at) VALUES ({values})",
        release=f"DELETE FROM {held} WHERE app_name = {mark} AND {own}",
        lock=None if dialect == "sqlite" else "SELECT pg_advisory_xact_lock(hashtext(%s))",
    )


def _totals(table: str, mark: str) -> str:
    """One query summing a session's, its user's and its app's rows: used per scope, then
    granted per scope (a grant's kind is the scope it raises). Parameters:
    :data:`_TOTALS_PARAMS`."""
    scopes = {
        "session": f"user_id = {mark} AND session_id = {mark}",
        "user": f"user_id = {mark}",
        "app": "TRUE",
    }
    used = [f"kind = 'used' AND {where}" for where in scopes.values()]
    granted = [f"kind = '{scope}' AND {where}" for scope, where in scopes.items()]
    sums = [f"COALESCE(SUM(CASE WHEN {c} THEN tokens END), 0)" for c in used + granted]
    return f"SELECT {', '.join(sums)} FROM {table} WHERE app_name = {mark}"


_TOTALS_PARAMS = ("user_id", "session_id", "user_id") * 2 + ("app_name",)
"""The key fields :func:`_totals`'s query takes, in order."""


def totals_params(key: SessionKey) -> tuple[str, ...]:
    """The parameters of :attr:`LedgerSql.totals` for session ``key``."""
    fields = key._asdict()
    return tuple(fields[name] for name in _TOTALS_PARAMS)


def run_steps(steps: Steps[_T], execute: Callable[[str, tuple[Any, ...]], Rows]) -> _T:
    """Run ``steps`` with a blocking ``execute``; its result."""
    try:
        request = next(steps)
        while True:
            request = steps.send(execute(*request))
    except StopIteration as done:
        result: _T = done.value
        return result


async def run_steps_async(
    steps: Steps[_T], execute: Callable[[str, tuple[Any, ...]], Awaitable[Rows]]
) -> _T:
    """Run ``steps`` with an async ``execute``; its result."""
    try:
        request = next(steps)
        while True:
            request = steps.send(await execute(*request))
    except StopIteration as done:
        result: _T = done.value
        return result


class SqlLedger(CheckedLedger):
    """The ledger in the tables of :data:`LEDGER_COLUMNS` and :data:`RESERVATION_COLUMNS`;
    a backend names its statements (:func:`ledger_sql`) and runs operations in a
    transaction (:meth:`_drive`)."""

    _sql: ClassVar[LedgerSql]
    """The backend's statements."""

    @abstractmethod
    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        """Run ``steps`` in one transaction (a write transaction when ``write``)."""

    async def token_totals(self, key: SessionKey) -> TokenTotals:
        """Sum the ledger and the live reservations (see :meth:`TokenLedger.token_totals`)."""
        check_identity(key)
        return await self._drive(self._totals_steps(key, self._clock()), write=False)

    async def _add_entry(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> None:
        await self._drive(self._add_steps(key, entry_id, kind, tokens), write=True)

    async def _reserve(self, ask: ReservationAsk) -> TokenReservation:
        return await self._drive(self._reserve_steps(ask), write=True)

    async def _release(self, key: SessionKey, entry_id: str) -> None:
        await self._drive(self._release_steps(key, entry_id), write=True)

    def _totals_steps(self, key: SessionKey, now: float) -> Steps[TokenTotals]:
        [row] = yield self._sql.totals, totals_params(key)
        scopes = (key.user_id, key.session_id, key.user_id, key.app_name, now)
        [held] = yield self._sql.reserved, scopes
        values = [int(v) for v in row]
        return TokenTotals(
            used=dict(zip(SCOPES, values[:3], strict=True)),
            granted=dict(zip(SCOPES, values[3:], strict=True)),
            reserved=dict(zip(SCOPES, (int(v) for v in held), strict=True)),
        )

    def _add_steps(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> Steps[None]:
        # A settlement moves tokens from reserved to used: under the reservations' lock, so
        # a reservation's two reads (used, then reserved; each statement its own snapshot
        # in PostgreSQL) never fall on either side of it and miss the step in both.
        yield from self._lock_steps(key)
        yield self._sql.insert, (*key, entry_id, kind, tokens)
        if kind == "used":
            yield from self._release_steps(key, entry_id)

    def _lock_steps(self, key: SessionKey) -> Steps[None]:
        """Take the app's ledger lock for the transaction, where the backend has one."""
        if self._sql.lock is not None:
            yield self._sql.lock, (f"adk-token-ledger/{key.app_name}",)

    def _release_steps(self, key: SessionKey, entry_id: str) -> Steps[None]:
        yield self._sql.release, (*key, entry_id)

    def _reserve_steps(self, ask: ReservationAsk) -> Steps[TokenReservation]:
        key = ask.key
        yield from self._lock_steps(key)
        yield self._sql.purge, (key.app_name, ask.now, key.user_id, key.session_id, ask.entry_id)
        outcome = judge_reservation(ask.budgets, (yield from self._totals_steps(key, ask.now)))
        if outcome.reserved:
            yield self._sql.reserve, (*key, ask.entry_id, ask.tokens, ask.expires_at)
        return outcome
