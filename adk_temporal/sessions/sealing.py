"""Sealed rows: how a SQL session store encrypts a session's values with the session's key.

A store given a :class:`RowSealer` seals what a session holds — its events, staged and
streamed events, and its state — with that session's data key before writing, and opens
them after reading (:class:`~adk_temporal.keys.StoreSealer` is the implementation). Values
written before sealing was turned on are read as they are. Keys are resolved before a
write transaction starts (:meth:`RowSealer.row_sealing`), so making a session's first key
never waits on the transaction's own lock. App and user state rows are not sealed: they are
shared by many sessions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..events import Event
from ..ids import SessionKey

__all__ = ["PLAIN", "RowSealer", "RowSealing", "SealedRows", "read_rows", "rows_for"]


class RowSealing(Protocol):
    """One session's key, ready to seal the text of its rows."""

    def seal_row(self, text: str) -> str:
        """``text`` sealed; what :meth:`RowSealer.open_row` turns back into ``text``."""
        ...


class RowSealer(Protocol):
    """Finds a session's key for writing, and opens any sealed row."""

    async def row_sealing(self, key: SessionKey) -> RowSealing:
        """The sealing of ``key``'s rows (its key made on first use)."""
        ...

    def open_row(self, text: str) -> str:
        """``text`` opened when sealed, else as it is.

        Raises:
            ForgottenError: The row's key was forgotten.
        """
        ...


class _Plain:
    """No sealing: rows are written as they are."""

    def seal_row(self, text: str) -> str:
        """``text`` unchanged."""
        return text


PLAIN: RowSealing = _Plain()
"""The sealing of a store given no sealer."""


def _as_is(text: str) -> str:
    return text


@dataclass(frozen=True)
class SealedRows:
    """How one call of a store writes and reads a session's values: sealed or not."""

    sealing: RowSealing = PLAIN
    opener: Callable[[str], str] = _as_is

    def event_text(self, event: Event) -> str:
        """``event`` as its row stores it."""
        return self.sealing.seal_row(event.model_dump_json())

    def event(self, text: str) -> Event:
        """The event a row holds."""
        return Event.model_validate_json(self.opener(text))

    def state_text(self, state: dict[str, Any]) -> str:
        """A session's own state as its row stores it."""
        return self.sealing.seal_row(json.dumps(state))

    def state(self, text: str) -> dict[str, Any]:
        """The state a row holds."""
        loaded: dict[str, Any] = json.loads(self.opener(text))
        return loaded

    def seal(self, text: str) -> str:
        """Row text (an event already serialised) sealed."""
        return self.sealing.seal_row(text)


def read_rows(sealer: RowSealer | None) -> SealedRows:
    """Rows for reading: opening needs no session key, so none is resolved."""
    return SealedRows() if sealer is None else SealedRows(PLAIN, sealer.open_row)


async def rows_for(sealer: RowSealer | None, key: SessionKey) -> SealedRows:
    """The rows of ``key`` for writing, its key resolved (made on first use)."""
    if sealer is None:
        return SealedRows()
    return SealedRows(await sealer.row_sealing(key), sealer.open_row)
