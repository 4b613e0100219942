"""Session storage: the Session model, the store's interfaces and its backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ids import SessionKey
from .call_slots import CallSlots
from .conversations import ConversationStore
from .erasure import ErasableStore
from .grants import GrantStore
from .initial import create_session
from .ledger import TokenLedger, TokenReservation, TokenTotals
from .memory import InMemorySessionService
from .partials import PartialChannel
from .receipts import EffectReceipt, EffectReceipts
from .rules import REMOVED_STATE_VALUE
from .service import SessionService
from .session import Session
from .sqlite import SqliteSessionService
from .staging import StagingArea

if TYPE_CHECKING:
    from .postgres import PostgresSessionService

__all__ = [
    "REMOVED_STATE_VALUE",
    "CallSlots",
    "ConversationStore",
    "EffectReceipt",
    "EffectReceipts",
    "ErasableStore",
    "GrantStore",
    "InMemorySessionService",
    "PartialChannel",
    "PostgresSessionService",
    "Session",
    "SessionKey",
    "SessionService",
    "SqliteSessionService",
    "StagingArea",
    "TokenLedger",
    "TokenReservation",
    "TokenTotals",
    "create_session",
]


def __getattr__(name: str) -> object:
    """Import PostgresSessionService on first access.

    Its driver (psycopg) is the optional ``postgres`` extra, so importing this package must
    not require it.
    """
    if name == "PostgresSessionService":
        from .postgres import PostgresSessionService

        return PostgresSessionService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
