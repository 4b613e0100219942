"""``TokenLedger``: the model tokens spent per session, user and app, what was granted, and
what steps running now hold reserved.

Cumulative token budgets (:class:`~adk_temporal.usage.TokenBudgets`) count across
invocations and continue-as-new, and across the sessions of a user or an app, so their
count lives in the session store, not in any run. Every model step records its tokens
under its event id and every grant under its request id: a retried step or a grant
delivered twice is counted once. Rows are never deleted, a deleted session's spending
included, so a user's or an app's total survives the sessions it was spent in.

A step reserves its worst case before it calls the model (:meth:`TokenLedger.reserve_tokens`):
the check of the budgets and the reservation are one write, so steps starting at once see
each other's reservations and never pass a budget by more than one reservation in all.
Recording the step's tokens settles its reservation in the same write. A reservation is
keyed by the step's event id (a retried step replaces its own) and leased: one whose step
died with its worker stops counting when its lease ends.

Every backend's writes share :class:`CheckedLedger`'s argument checks and
:func:`judge_reservation`'s rule; SQLite and PostgreSQL share their statements
(:mod:`.ledger_sql`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from ..errors import InvalidSessionRequestError
from ..ids import SessionKey
from ..usage import MAX_TOKENS, SCOPES, BudgetScope, OverBudget, TokenBudgets
from .rules import check_identity

__all__ = [
    "CheckedLedger",
    "ReservationAsk",
    "TokenLedger",
    "TokenReservation",
    "TokenTotals",
    "judge_reservation",
]


def _zeros() -> dict[BudgetScope, int]:
    return dict.fromkeys(SCOPES, 0)


class TokenTotals(BaseModel):
    """Tokens used, granted and reserved (by steps running now), by scope, as seen from one
    session."""

    used: dict[BudgetScope, int] = Field(default_factory=_zeros)
    granted: dict[BudgetScope, int] = Field(default_factory=_zeros)
    reserved: dict[BudgetScope, int] = Field(default_factory=_zeros)


class TokenReservation(BaseModel):
    """What a step's reservation found: its tokens reserved, or the budget in the way."""

    reserved: bool = False
    over: OverBudget | None = None
    """Spending alone reached this budget: the step must not start (it asks for more)."""
    held: OverBudget | None = None
    """Spending reached this budget only with what steps running now reserved: the step
    may start once they settle below it."""


@dataclass(frozen=True)
class ReservationAsk:
    """A reservation a backend is asked to make, its arguments checked."""

    key: SessionKey
    entry_id: str
    tokens: int
    budgets: TokenBudgets
    now: float
    """The backend's clock when asked: leases that ended by then are dropped."""
    expires_at: float


def judge_reservation(budgets: TokenBudgets, totals: TokenTotals) -> TokenReservation:
    """Whether a step may reserve, given the totals before its reservation (its own earlier
    reservation, of a failed attempt, not among them)."""
    over = budgets.crossed(totals.used, totals.granted)
    if over is not None:
        return TokenReservation(over=over)
    held = budgets.crossed(totals.used, totals.granted, totals.reserved)
    if held is not None:
        return TokenReservation(held=held)
    return TokenReservation(reserved=True)


class TokenLedger(Protocol):
    """Records model tokens, grants and reservations; sums them per session, user and app."""

    async def record_tokens(self, key: SessionKey, entry_id: str, tokens: int) -> None:
        """Count ``tokens`` spent in session ``key``, once per ``entry_id`` (a step's event
        id): recording the same id again changes nothing. The reservation under the same
        id, if any, is released in the same write.

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
        """What session ``key``, its user and its app used, were granted, and hold reserved
        (leases not ended) in all."""
        ...

    async def reserve_tokens(
        self, key: SessionKey, entry_id: str, tokens: int, budgets: TokenBudgets, *, lease: float
    ) -> TokenReservation:
        """Reserve ``tokens`` for the step ``entry_id`` if ``budgets`` allow it now, in one
        write with the check (:func:`judge_reservation`).

        The step's earlier reservation (an attempt that failed) is replaced, and
        reservations whose lease ended are dropped, before the check.

        Args:
            key: The step's session.
            entry_id: The step's event id, which its :meth:`record_tokens` settles.
            tokens: The step's worst case: its input counted plus its output cap.
            budgets: The budgets to check.
            lease: Seconds the reservation counts unless settled or released.

        Raises:
            InvalidSessionRequestError: As :meth:`record_tokens`; or the lease is not
                positive.
        """
        ...

    async def release_tokens(self, key: SessionKey, entry_id: str) -> None:
        """Drop the reservation of step ``entry_id`` (its model was not called, or failed);
        releasing one that is not there changes nothing.

        Raises:
            InvalidSessionRequestError: A key field or the id is empty.
        """
        ...


class CheckedLedger(TokenLedger):
    """The ledger's writes over a backend's storage, their arguments checked first."""

    _clock: Callable[[], float]
    """The backend's clock (POSIX seconds), which leases are measured with."""

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

    async def reserve_tokens(
        self, key: SessionKey, entry_id: str, tokens: int, budgets: TokenBudgets, *, lease: float
    ) -> TokenReservation:
        """Reserve a step's worst case (see :meth:`TokenLedger.reserve_tokens`)."""
        _check_entry(key, entry_id, tokens)
        if not lease > 0:
            raise InvalidSessionRequestError(
                f"a reservation's lease must be above 0 seconds, got {lease}"
            )
        now = self._clock()
        ask = ReservationAsk(key, entry_id, tokens, budgets, now, now + lease)
        return await self._reserve(ask)

    async def release_tokens(self, key: SessionKey, entry_id: str) -> None:
        """Drop a step's reservation (see :meth:`TokenLedger.release_tokens`)."""
        _check_entry(key, entry_id, 0)
        await self._release(key, entry_id)

    @abstractmethod
    async def _add_entry(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> None:
        """Store the entry unless ``key`` already has one with ``entry_id``; a ``used`` entry
        also releases the reservation of ``entry_id``, in the same write."""

    @abstractmethod
    async def _reserve(self, ask: ReservationAsk) -> TokenReservation:
        """In one write: drop ended leases and the step's own reservation, judge the
        totals, and store the reservation when it is allowed."""

    @abstractmethod
    async def _release(self, key: SessionKey, entry_id: str) -> None:
        """Delete the reservation of ``entry_id``."""


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
