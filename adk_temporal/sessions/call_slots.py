"""``CallSlots``: when the next call of a rate-limited model may start, shared by every worker.

A model limit's rate (:mod:`adk_temporal.model_limits`) is first Temporal's: the matching
service dispatches the limit's steps at that rate across every worker. Its token bucket
starts full, though, so a backlog saw five calls in its first second at a limit of two
(two workers, one queue). Right before it calls the model, a limited step therefore asks
here to start: it may when the limit's last start is ``1 / rate`` seconds past, and its own
start is then recorded, in one transaction of the session store every worker shares and by
one clock (the database's, for SQLite and PostgreSQL), so starts keep to the rate however
many workers there are. Otherwise it is told how long to wait and asks again. A start is
taken at the moment of the call, never booked ahead: a worker that stalls between a booked
slot and its call (a loaded machine) would send several calls at once when it wakes.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Literal, Protocol, TypeVar

from ..errors import InvalidSessionRequestError
from .ledger_sql import Steps

__all__ = ["CALL_SLOT_COLUMNS", "CallSlots", "SqlCallSlots", "check_slot_request"]

_T = TypeVar("_T")

CALL_SLOT_COLUMNS = "limit_name TEXT PRIMARY KEY, next_at DOUBLE PRECISION NOT NULL"
"""The slots table's columns: one row per limit, the earliest its next call may start."""


def check_slot_request(name: str, per_second: float) -> None:
    """The checks every backend's slots start with.

    Raises:
        InvalidSessionRequestError: The limit's name is empty or its rate not above 0.
    """
    if not name:
        raise InvalidSessionRequestError("a call slot needs a limit name")
    if not per_second > 0:
        raise InvalidSessionRequestError(f"a limit's rate must be above 0, got {per_second}")


class CallSlots(Protocol):
    """Start slots of rate-limited model calls, shared by every worker of a deployment."""

    async def take_call_slot(self, name: str, per_second: float) -> float:
        """Start a call of limit ``name`` at ``per_second`` now, if the limit's last start
        was ``1 / per_second`` ago or more (recording this one), else start nothing.

        Returns:
            ``0.0`` when the call may start at once (its start is recorded); else the
            seconds until it may, when the caller asks again.

        Raises:
            InvalidSessionRequestError: The name is empty or the rate not above 0.
        """
        ...


class SqlCallSlots(CallSlots):
    """The slots in a table of :data:`CALL_SLOT_COLUMNS`, timed by the database's clock."""

    _dialect: Literal["sqlite", "postgres"]

    @abstractmethod
    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        """Run ``steps`` in one transaction (a write transaction when ``write``)."""

    async def take_call_slot(self, name: str, per_second: float) -> float:
        """Take a slot (see :meth:`CallSlots.take_call_slot`)."""
        check_slot_request(name, per_second)
        return await self._drive(self._slot_steps(name, 1 / per_second), write=True)

    def _slot_steps(self, name: str, interval: float) -> Steps[float]:
        mark, table, now = _DIALECTS[self._dialect]
        if self._dialect == "postgres":
            # Serialises the limit's takers; SQLite's write transaction does that already.
            yield "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"adk-call-slots/{name}",)
        yield (
            f"INSERT INTO {table} (limit_name, next_at) VALUES ({mark}, {now}) "
            "ON CONFLICT (limit_name) DO NOTHING",
            (name,),
        )
        [(next_at, at)] = yield (
            f"SELECT next_at, {now} FROM {table} WHERE limit_name = {mark}",
            (name,),
        )
        if float(next_at) > float(at):
            return float(next_at) - float(at)
        yield (
            f"UPDATE {table} SET next_at = {mark} WHERE limit_name = {mark}",
            (float(at) + interval, name),
        )
        return 0.0


_DIALECTS = {
    # julianday('now') keeps milliseconds; every process on the machine reads one clock.
    "sqlite": ("?", "call_slots", "((julianday('now') - 2440587.5) * 86400.0)"),
    # The server's clock: workers on other machines may disagree about the time.
    "postgres": ("%s", "adk_call_slots", "EXTRACT(EPOCH FROM clock_timestamp())::float8"),
}
"""Per dialect: the placeholder, the table and the time now."""
