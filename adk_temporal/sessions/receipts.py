"""``EffectReceipts``: what the store knows of each call of a tool with external effects.

A tool declared with ``effects="external"`` (:func:`adk_temporal.tools.tool`) cannot have
its effect deduplicated by the provider, so a second run after a worker was lost mid-call
could charge twice. Before such a tool's code runs, its step writes a receipt here, keyed by
the call's idempotency key: when it started, on which worker, in which attempt, under which
operator's authorisation; the tool may add details as it goes (a provider's request id);
when the tool returns, the receipt is closed. An attempt that finds an open receipt never
runs the tool again: the call is *in doubt*, and an operator resolves it.

Beginning is one atomic write (the first attempt to write wins); every backend shares the
rules of :func:`check_receipt`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Literal, Protocol, TypeVar

from ..errors import InvalidSessionRequestError
from ..ids import SessionKey
from ..tools import EffectReceipt
from .ledger_sql import Steps
from .rules import check_identity

__all__ = [
    "RECEIPT_COLUMNS",
    "EffectReceipt",
    "EffectReceipts",
    "SqlEffectReceipts",
    "check_receipt",
]

_T = TypeVar("_T")

RECEIPT_COLUMNS = (
    "app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, "
    "call_key TEXT NOT NULL, receipt TEXT NOT NULL, "
    "PRIMARY KEY (app_name, user_id, session_id, call_key)"
)
"""The receipts table's columns: one row per call, its receipt as JSON."""


def check_receipt(key: SessionKey, receipt: EffectReceipt) -> None:
    """The checks every backend's receipts start with.

    Raises:
        InvalidSessionRequestError: A key field, the call key or the attempt id is empty.
    """
    check_identity(key)
    if not receipt.call_key or not receipt.attempt_id:
        raise InvalidSessionRequestError("a receipt needs a call key and an attempt id")


class EffectReceipts(Protocol):
    """Receipts of calls with external effects, shared by every worker of a deployment."""

    async def begin_effect(self, key: SessionKey, receipt: EffectReceipt) -> EffectReceipt:
        """Write ``receipt`` unless the call has one already; return the call's receipt.

        The receipt returned is ``receipt`` itself when this call wrote it (compare
        ``attempt_id``), else the one found: the caller must not run the tool then.

        Raises:
            InvalidSessionRequestError: A key field, the call key or the attempt id is empty.
        """
        ...

    async def put_effect(self, key: SessionKey, receipt: EffectReceipt) -> None:
        """Write ``receipt`` over the call's (details noted, the end, an authorised retry).

        Raises:
            InvalidSessionRequestError: A key field, the call key or the attempt id is empty.
        """
        ...

    async def effect(self, key: SessionKey, call_key: str) -> EffectReceipt | None:
        """The call's receipt; ``None`` when none was written."""
        ...


class SqlEffectReceipts(EffectReceipts):
    """The receipts in a table of :data:`RECEIPT_COLUMNS`."""

    _dialect: Literal["sqlite", "postgres"]

    @abstractmethod
    async def _drive(self, steps: Steps[_T], *, write: bool) -> _T:
        """Run ``steps`` in one transaction (a write transaction when ``write``)."""

    def _receipts(self) -> tuple[str, str]:
        return ("?", "effect_receipts") if self._dialect == "sqlite" else ("%s", "adk_effects")

    async def begin_effect(self, key: SessionKey, receipt: EffectReceipt) -> EffectReceipt:
        """Write unless present (see :meth:`EffectReceipts.begin_effect`)."""
        check_receipt(key, receipt)
        return await self._drive(self._begin_steps(key, receipt), write=True)

    def _begin_steps(self, key: SessionKey, receipt: EffectReceipt) -> Steps[EffectReceipt]:
        mark, table = self._receipts()
        row = (*key, receipt.call_key, receipt.model_dump_json())
        yield (
            f"INSERT INTO {table} (app_name, user_id, session_id, call_key, receipt) "
            f"VALUES ({mark}, {mark}, {mark}, {mark}, {mark}) "
            "ON CONFLICT (app_name, user_id, session_id, call_key) DO NOTHING",
            row,
        )
        [(found,)] = yield self._select(key, receipt.call_key)
        return EffectReceipt.model_validate_json(found)

    def _select(self, key: SessionKey, call_key: str) -> tuple[str, tuple[Any, ...]]:
        mark, table = self._receipts()
        return (
            f"SELECT receipt FROM {table} WHERE app_name = {mark} AND user_id = {mark} "
            f"AND session_id = {mark} AND call_key = {mark}",
            (*key, call_key),
        )

    async def put_effect(self, key: SessionKey, receipt: EffectReceipt) -> None:
        """Write over (see :meth:`EffectReceipts.put_effect`)."""
        check_receipt(key, receipt)
        await self._drive(self._put_steps(key, receipt), write=True)

    def _put_steps(self, key: SessionKey, receipt: EffectReceipt) -> Steps[None]:
        mark, table = self._receipts()
        yield (
            f"INSERT INTO {table} (app_name, user_id, session_id, call_key, receipt) "
            f"VALUES ({mark}, {mark}, {mark}, {mark}, {mark}) "
            "ON CONFLICT (app_name, user_id, session_id, call_key) "
            "DO UPDATE SET receipt = excluded.receipt",
            (*key, receipt.call_key, receipt.model_dump_json()),
        )

    async def effect(self, key: SessionKey, call_key: str) -> EffectReceipt | None:
        """The call's receipt (see :meth:`EffectReceipts.effect`)."""
        check_identity(key)
        return await self._drive(self._effect_steps(key, call_key), write=False)

    def _effect_steps(self, key: SessionKey, call_key: str) -> Steps[EffectReceipt | None]:
        rows = yield self._select(key, call_key)
        return EffectReceipt.model_validate_json(rows[0][0]) if rows else None
