"""``TokenLedger``: the model tokens spent per session, user and app, and what was granted.

Cumulative token budgets (:class:`~adk_temporal.usage.TokenBudgets`) count across
invocations and continue-as-new, and across the sessions of a user or an app, so their
count lives in the session store, not in any run. Every model step records its tokens
under its event id and every grant under its request id: a retried step or a grant
delivered twice is counted once. Rows are never deleted, a deleted session's spending
included, so a user's or an app's total survives the sessions it was spent in.

Every backend's writes share :class:`CheckedLedger`'s argument checks. SQLite and
PostgreSQL keep one table (:data:`LEDGER_COLUMNS`) and run the same statements, written here
once with their placeholder; :class:`SqlLedger` builds their rows and parameters, so each of
them only runs the statements.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar, Protocol

from pydantic import BaseModel, Field

from ..errors import InvalidSessionRequestError
from ..ids import SessionKey
from ..usage import MAX_TOKENS, SCOPES, BudgetScope
from .rules import check_identity

__all__ = [
    "LEDGER_COLUMNS",
    "CheckedLedger",
    "LedgerRow",
    "SqlLedger",
    "TokenLedger",
    "TokenTotals",
    "insert_sql",
    "totals_from_row",
    "totals_sql",
]

LEDGER_COLUMNS = (
    "app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, "
    "entry_id TEXT NOT NULL, kind TEXT NOT NULL, tokens BIGINT NOT NULL, "
    "PRIMARY KEY (app_name, user_id, session_id, entry_id)"
)
"""The ledger table's columns: ``kind`` is ``used``, or the scope a grant raises."""

LedgerRow = tuple[str, str, str, str, str, int]
"""One row of :data:`LEDGER_COLUMNS`, in their order."""


class TokenTotals(BaseModel):
    """Tokens used and granted, by scope, as seen from one session."""

    used: dict[BudgetScope, int] = Field(default_factory=lambda: dict.fromkeys(SCOPES, 0))
    granted: dict[BudgetScope, int] = Field(default_factory=lambda: dict.fromkeys(SCOPES, 0))


class TokenLedger(Protocol):
    """Records model tokens and grants; sums them per session, user and app."""

    async def record_tokens(self, key: SessionKey, entry_id: str, tokens: int) -> None:
        """Count ``tokens`` spent in session ``key``, once per ``entry_id`` (a step's event
        id): recording the same id again changes nothing.

        Raises:
            InvalidSessionRequestError: A key field or the id is empty, or tokens is below 0
                or above :data:`~adk_temporal.usage.MAX_TOKENS`.
        """
        ...

    async def grant_tokens(
        self, key: SessionKey, scope: BudgetScope, entry_id: str, tokens: int
    ) -> None:
        """Raise ``scope``'s budget (as seen from ``key``) by ``tokens``, once per id.

        Raises:
            InvalidSessionRequestError: A key field or the id is empty, or tokens is below 0
                or above :data:`~adk_temporal.usage.MAX_TOKENS`.
        """
        ...

    async def token_totals(self, key: SessionKey) -> TokenTotals:
        """What session ``key``, its user and its app used and were granted in all."""
        ...


class CheckedLedger(TokenLedger):
    """``record_tokens`` and ``grant_tokens`` over a backend's one write of a checked entry."""

    async def record_tokens(self, key: SessionKey, entry_id: str, tokens: int) -> None:
        """Count a step's tokens once (see :meth:`TokenLedger.record_tokens`)."""
        _check_entry(key, entry_id, tokens)
        await self._add_entry(key, entry_id, "used", tokens)

    async def grant_tokens(
        self, key: SessionKey, scope: BudgetScope, entry_id: str, tokens: int
    ) -> None:
        """Raise a budget once (see :meth:`TokenLedger.grant_tokens`)."""
        _check_entry(key, entry_id, tokens)
        await self._add_entry(key, entry_id, scope, tokens)

    @abstractmethod
    async def _add_entry(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> None:
        """Store the entry unless ``key`` already has one with ``entry_id``."""


class SqlLedger(CheckedLedger):
    """The ledger in a table of :data:`LEDGER_COLUMNS`; a backend sets the statements
    (from :func:`insert_sql` and :func:`totals_sql`) and runs them."""

    _ledger_insert: ClassVar[str]
    """The backend's :func:`insert_sql`."""

    _ledger_totals: ClassVar[tuple[str, tuple[str, ...]]]
    """The backend's :func:`totals_sql`."""

    async def _add_entry(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> None:
        await self._insert_row(self._ledger_insert, (*key, entry_id, kind, tokens))

    async def token_totals(self, key: SessionKey) -> TokenTotals:
        """Sum the ledger (see :meth:`TokenLedger.token_totals`)."""
        check_identity(key)
        statement, names = self._ledger_totals
        fields = key._asdict()
        row = await self._query_totals(statement, tuple(fields[n] for n in names))
        return totals_from_row(row)

    @abstractmethod
    async def _insert_row(self, statement: str, row: LedgerRow) -> None:
        """Run the insert ``statement`` of ``row`` as a write of its own."""

    @abstractmethod
    async def _query_totals(self, statement: str, params: tuple[str, ...]) -> tuple[int, ...]:
        """Run the totals query ``statement`` and return its one row."""


def _check_entry(key: SessionKey, entry_id: str, tokens: int) -> None:
    """The checks every backend's ledger writes start with.

    Raises:
        InvalidSessionRequestError: A key field or the id is empty, or tokens is below 0
            or above :data:`~adk_temporal.usage.MAX_TOKENS`.
    """
    check_identity(key)
    if not entry_id:
        raise InvalidSessionRequestError("a ledger entry needs a non-empty id")
    if not 0 <= tokens <= MAX_TOKENS:
        raise InvalidSessionRequestError(
            f"a ledger entry counts 0 to {MAX_TOKENS} tokens, got {tokens}"
        )


def insert_sql(table: str, mark: str, conflict: str) -> str:
    """The insert of one ledger row; ``conflict`` makes a second insert of an id a no-op
    (``OR IGNORE`` before ``INTO`` for SQLite, ``ON CONFLICT DO NOTHING`` after for
    PostgreSQL: pass ``"sqlite"`` or ``"postgres"``)."""
    values = ", ".join([mark] * 6)
    columns = "(app_name, user_id, session_id, entry_id, kind, tokens)"
    if conflict == "sqlite":
        return f"INSERT OR IGNORE INTO {table} {columns} VALUES ({values})"
    return f"INSERT INTO {table} {columns} VALUES ({values}) ON CONFLICT DO NOTHING"


def totals_sql(table: str, mark: str) -> tuple[str, tuple[str, ...]]:
    """One query summing a session's, its user's and its app's rows; with the key fields
    (``app_name``, ``user_id``, ``session_id``) its parameters name, in order."""
    session = f"user_id = {mark} AND session_id = {mark}"
    user = f"user_id = {mark}"
    sums = []
    params: list[str] = []
    for kind in ("used", "session", "user", "app"):
        for scope, where, names in (
            ("session", session, ("user_id", "session_id")),
            ("user", user, ("user_id",)),
            ("app", "TRUE", ()),
        ):
            if kind not in ("used", scope):
                continue
            sums.append(f"COALESCE(SUM(CASE WHEN kind = '{kind}' AND {where} THEN tokens END), 0)")
            params += names
    sql = f"SELECT {', '.join(sums)} FROM {table} WHERE app_name = {mark}"
    return sql, (*params, "app_name")


def totals_from_row(row: tuple[int, ...]) -> TokenTotals:
    """:func:`totals_sql`'s row as totals."""
    used = dict(zip(SCOPES, (int(v) for v in row[:3]), strict=True))
    granted = dict(zip(SCOPES, (int(v) for v in row[3:]), strict=True))
    return TokenTotals(used=used, granted=granted)
