"""``GrantStore``: the standing grants of approvals, where every run of a session or user
finds them.

A grant (:class:`~adk_temporal.approvals.Grant`) stands for later calls of one tool in one
session, or in every session of its user, so it lives in the session store beside the
conversations, not in any run. The tool step records it (once per id: a retried step
records nothing twice) and takes a use of it for a call it covers, under the call's own
use id, in one transaction with the count: two calls at once never both take a grant's
last use, and a retried step takes none again. Grants and their uses are never deleted; a
revoked grant keeps who revoked it and when.

SQLite and PostgreSQL keep two tables (:func:`grant_tables`) and run the same statements,
written once here as steps (:data:`Steps`) each backend drives with its own connection.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from ..approvals import Grant, GrantNotFoundError
from ..ids import SessionKey
from .ledger_sql import Steps
from .rules import check_identity, check_user

__all__ = [
    "GrantStore",
    "GrantsInMemory",
    "SqlGrants",
    "grant_tables",
]

_T = TypeVar("_T")


def grant_tables(prefix: str, real: str) -> tuple[str, str, str]:
    """The grants table, its index by user and tool (what a call looks grants up by), and
    the uses table (``prefix`` before their names; ``real`` the backend's floating-point
    type)."""
    return (
        f"""CREATE TABLE IF NOT EXISTS {prefix}approval_grants (
            app_name TEXT NOT NULL, grant_id TEXT NOT NULL, user_id TEXT NOT NULL,
            session_id TEXT, tool TEXT NOT NULL, granted_at {real} NOT NULL,
            expires_at {real} NOT NULL, revoked_at {real}, revoked_by TEXT,
            grant_json TEXT NOT NULL, PRIMARY KEY (app_name, grant_id))""",
        f"CREATE INDEX IF NOT EXISTS {prefix}approval_grants_by_tool "
        f"ON {prefix}approval_grants (app_name, user_id, tool)",
        f"""CREATE TABLE IF NOT EXISTS {prefix}approval_grant_uses (
            app_name TEXT NOT NULL, use_id TEXT NOT NULL, grant_id TEXT NOT NULL,
            used_at {real} NOT NULL, PRIMARY KEY (app_name, use_id))""",
    )


class GrantStore(Protocol):
    """Records standing grants, takes their uses, lists and revokes them."""

    async def record_grant(self, grant: Grant) -> None:
        """Store ``grant`` unless one with its id exists in its app (then nothing changes).

        Raises:
            InvalidSessionRequestError: An id of the grant breaks the id grammar.
        """
        ...

    async def use_grant(
        self, key: SessionKey, tool: str, args: Mapping[str, Any], use_id: str, now: float
    ) -> Grant | None:
        """Take one use of a grant that covers a call of ``tool`` with ``args`` in session
        ``key`` at ``now`` (the oldest such grant), recorded under ``use_id``; the grant
        with its uses counted, or ``None`` when none covers the call. A ``use_id`` recorded
        before returns its grant and takes nothing more.
        """
        ...

    async def list_grants(
        self, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[Grant]:
        """The user's grants, oldest first (``session_id``: those its calls may use, the
        user's own included), whatever their status."""
        ...

    async def revoke_grant(
        self, app_name: str, grant_id: str, *, by: str | None, now: float
    ) -> Grant:
        """Revoke a grant at ``now``, recorded as by ``by``: it covers no call after this.
        Revoking a revoked grant changes nothing and returns it.

        Raises:
            GrantNotFoundError: The app has no grant ``grant_id``.
        """
        ...


def _check_grant(grant: Grant) -> None:
    if grant.session_id is None:
        check_user(grant.app_name, grant.user_id)
    else:
        check_identity(SessionKey(grant.app_name, grant.user_id, grant.session_id))


def _grant(row: tuple[Any, ...]) -> Grant:
    """A grant from ``(grant_json, revoked_at, revoked_by, uses)``."""
    grant_json, revoked_at, revoked_by, uses = row
    grant = Grant.model_validate_json(grant_json)
    return grant.model_copy(
        update={"revoked_at": revoked_at, "revoked_by": revoked_by, "uses": int(uses)}
    )


class _Sql:
    """The statements, for one backend's placeholder mark and table prefix."""

    def __init__(self, mark: str, prefix: str, lock: str) -> None:
        m = mark
        self.grants = f"{prefix}approval_grants"
        self.uses = f"{prefix}approval_grant_uses"
        uses = (
            f"(SELECT COUNT(*) FROM {self.uses} u WHERE u.app_name = g.app_name "
            "AND u.grant_id = g.grant_id)"
        )
        self.columns = f"g.grant_json, g.revoked_at, g.revoked_by, {uses}"
        self.insert = (
            f"INSERT INTO {self.grants} (app_name, grant_id, user_id, session_id, tool, "
            f"granted_at, expires_at, grant_json) VALUES ({', '.join([m] * 8)}) "
            "ON CONFLICT DO NOTHING"
        )
        self.used = f"SELECT grant_id FROM {self.uses} WHERE app_name = {m} AND use_id = {m}"
        self.one = (
            f"SELECT {self.columns} FROM {self.grants} g WHERE app_name = {m} AND grant_id = {m}"
        )
        # Uses are counted by a statement of their own, after the lock is held: in
        # PostgreSQL a count inside the locking statement reads the snapshot from before the
        # wait, and two calls would both see the last use free.
        self.candidates = (
            f"SELECT g.grant_json, g.revoked_at, g.revoked_by, 0 FROM {self.grants} g "
            f"WHERE app_name = {m} AND user_id = {m} AND tool = {m} "
            f"AND (session_id IS NULL OR session_id = {m}) AND revoked_at IS NULL "
            f"AND expires_at > {m} ORDER BY granted_at, grant_id{lock}"
        )
        self.count = f"SELECT COUNT(*) FROM {self.uses} WHERE app_name = {m} AND grant_id = {m}"
        self.take = (
            f"INSERT INTO {self.uses} (app_name, use_id, grant_id, used_at) "
            f"VALUES ({m}, {m}, {m}, {m})"
        )
        self.of_user = (
            f"SELECT {self.columns} FROM {self.grants} g WHERE app_name = {m} AND user_id = {m} "
            "ORDER BY granted_at, grant_id"
        )
        self.revoke = (
            f"UPDATE {self.grants} SET revoked_at = {m}, revoked_by = {m} "
            f"WHERE app_name = {m} AND grant_id = {m} AND revoked_at IS NULL"
        )


def _record(sql: _Sql, grant: Grant) -> Steps[None]:
    yield (
        sql.insert,
        (
            grant.app_name,
            grant.id,
            grant.user_id,
            grant.session_id,
            grant.tool,
            grant.granted_at,
            grant.expires_at,
            grant.model_dump_json(),
        ),
    )


def _use(
    sql: _Sql, key: SessionKey, tool: str, args: Mapping[str, Any], use_id: str, now: float
) -> Steps[Grant | None]:
    taken = yield sql.used, (key.app_name, use_id)
    if taken:
        [row] = yield sql.one, (key.app_name, taken[0][0])
        return _grant(row)
    rows = yield sql.candidates, (key.app_name, key.user_id, tool, key.session_id, now)
    for row in rows:
        [(uses,)] = yield sql.count, (key.app_name, _grant(row).id)
        grant = _grant((*row[:3], uses))
        if grant.covers(key, tool, args, now):
            yield sql.take, (key.app_name, use_id, grant.id, now)
            return grant.model_copy(update={"uses": grant.uses + 1})
    return None


def _list(sql: _Sql, app_name: str, user_id: str, session_id: str | None) -> Steps[list[Grant]]:
    rows = yield sql.of_user, (app_name, user_id)
    grants = [_grant(row) for row in rows]
    return [g for g in grants if session_id is None or g.session_id in (None, session_id)]


def _revoke(sql: _Sql, app_name: str, grant_id: str, by: str | None, now: float) -> Steps[Grant]:
    yield sql.revoke, (now, by, app_name, grant_id)
    rows = yield sql.one, (app_name, grant_id)
    if not rows:
        raise GrantNotFoundError(f"app {app_name!r} has no grant {grant_id!r}")
    return _grant(rows[0])


class SqlGrants(GrantStore):
    """The grant store over :func:`grant_tables`; a backend sets ``_grant_sql`` and runs
    steps in one transaction (:meth:`_drive`)."""

    _grant_sql: _Sql

    @staticmethod
    def grant_statements(mark: str, prefix: str, lock: str) -> _Sql:
        """The statements for a backend (``lock``: what locks the rows a use reads)."""
        return _Sql(mark, prefix, lock)

    @abstractmethod
    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        """Run ``steps`` in one transaction (a write one when ``write``)."""

    async def record_grant(self, grant: Grant) -> None:
        """Store a grant once (see :meth:`GrantStore.record_grant`)."""
        _check_grant(grant)
        await self._drive(_record(self._grant_sql, grant), write=True)

    async def use_grant(
        self, key: SessionKey, tool: str, args: Mapping[str, Any], use_id: str, now: float
    ) -> Grant | None:
        """Take a use of a covering grant (see :meth:`GrantStore.use_grant`)."""
        check_identity(key)
        return await self._drive(_use(self._grant_sql, key, tool, args, use_id, now), write=True)

    async def list_grants(
        self, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[Grant]:
        """List a user's grants (see :meth:`GrantStore.list_grants`)."""
        check_user(app_name, user_id)
        return await self._drive(_list(self._grant_sql, app_name, user_id, session_id), write=False)

    async def revoke_grant(
        self, app_name: str, grant_id: str, *, by: str | None, now: float
    ) -> Grant:
        """Revoke a grant (see :meth:`GrantStore.revoke_grant`)."""
        return await self._drive(_revoke(self._grant_sql, app_name, grant_id, by, now), write=True)


class GrantsInMemory(GrantStore):
    """The grant store in this process's memory (for the in-memory session service).

    Every method reads and writes without awaiting in between, so each is atomic among the
    event loop's tasks, as a transaction is.
    """

    _grant_rows: dict[tuple[str, str], Grant]
    _grant_uses: dict[tuple[str, str], str]

    def _grant_tables(self) -> tuple[dict[tuple[str, str], Grant], dict[tuple[str, str], str]]:
        if not hasattr(self, "_grant_rows"):
            self._grant_rows, self._grant_uses = {}, {}
        return self._grant_rows, self._grant_uses

    async def record_grant(self, grant: Grant) -> None:
        """Store a grant once (see :meth:`GrantStore.record_grant`)."""
        _check_grant(grant)
        rows, _ = self._grant_tables()
        rows.setdefault((grant.app_name, grant.id), grant.model_copy(update={"uses": 0}))

    async def use_grant(
        self, key: SessionKey, tool: str, args: Mapping[str, Any], use_id: str, now: float
    ) -> Grant | None:
        """Take a use of a covering grant (see :meth:`GrantStore.use_grant`)."""
        check_identity(key)
        rows, uses = self._grant_tables()
        taken = uses.get((key.app_name, use_id))
        if taken is not None:
            return rows[(key.app_name, taken)].model_copy()
        found = sorted(
            (g for (app, _), g in rows.items() if app == key.app_name),
            key=lambda g: (g.granted_at, g.id),
        )
        for grant in found:
            if grant.covers(key, tool, args, now):
                uses[(key.app_name, use_id)] = grant.id
                grant.uses += 1
                return grant.model_copy()
        return None

    async def list_grants(
        self, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[Grant]:
        """List a user's grants (see :meth:`GrantStore.list_grants`)."""
        check_user(app_name, user_id)
        rows, _ = self._grant_tables()
        return [
            g.model_copy()
            for g in sorted(rows.values(), key=lambda g: (g.granted_at, g.id))
            if (g.app_name, g.user_id) == (app_name, user_id)
            and (session_id is None or g.session_id in (None, session_id))
        ]

    async def revoke_grant(
        self, app_name: str, grant_id: str, *, by: str | None, now: float
    ) -> Grant:
        """Revoke a grant (see :meth:`GrantStore.revoke_grant`)."""
        rows, _ = self._grant_tables()
        grant = rows.get((app_name, grant_id))
        if grant is None:
            raise GrantNotFoundError(f"app {app_name!r} has no grant {grant_id!r}")
        if grant.revoked_at is None:
            grant.revoked_at, grant.revoked_by = now, by
        return grant.model_copy()
