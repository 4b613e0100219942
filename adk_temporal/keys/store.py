"""The key store: where wrapped data keys, forgotten keys and the forget log live.

A :class:`KeyStore` keeps one live data key per scope (wrapped by a master key, never in
the clear), a record of every key it forgot (so a value sealed with one says "forgotten",
not "unknown key"), and the forget log: who forgot what, when and why. Its methods are
synchronous and thread-safe: the codec server opens payloads on its own threads and the
SQLite session store on its own; async callers run them off the event loop. Backends:
:class:`~adk_temporal.keys.file.FileKeyStore` (the default, a directory beside the key
file), :class:`~adk_temporal.keys.sql.SqliteKeyStore` and
:class:`~adk_temporal.keys.sql.PostgresKeyStore` (tables in the session store's database).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from ..errors import EncryptionError
from .scopes import KeyScope

__all__ = [
    "ForgetEntry",
    "ForgottenKey",
    "KeyStore",
    "KeyStoreError",
    "StoredKey",
]


class KeyStoreError(EncryptionError):
    """A key store cannot be opened or read (bad location, unreadable record, schema)."""


@dataclass(frozen=True)
class StoredKey:
    """A live data key as stored: wrapped by the master key ``master_key_id``.

    Attributes:
        key_id: The id payloads and stored values name (``dk.`` and 26 characters).
        scope: The session, user or app it seals (``app/user/session``).
        wrapped: ``nonce || AES-256-GCM(master, key)``; useless without the master key.
        master_key_id: The key file's key that wrapped it.
        created_at: When it was made (POSIX seconds).
    """

    key_id: str
    scope: str
    wrapped: bytes = field(repr=False)
    master_key_id: str
    created_at: float


@dataclass(frozen=True)
class ForgottenKey:
    """A data key that was deleted on purpose: what it sealed can never be opened again."""

    key_id: str
    scope: str
    forgotten_at: float


class ForgetEntry(BaseModel):
    """One forget in the forget log: who forgot what, when, why, and what went with it."""

    at: float
    """When (POSIX seconds)."""
    target: str
    """The scope forgotten: ``app``, ``app/user`` or ``app/user/session``."""
    level: KeyScope
    by: str
    """Who asked, as their channel authenticated them (``retention`` for the schedule)."""
    channel: str
    """How: ``cli``, ``gateway``, ``retention`` or ``library``."""
    reason: str
    key_ids: list[str] = Field(default_factory=list)
    """The data keys deleted."""
    sessions: list[str] = Field(default_factory=list)
    """The sessions whose rows were deleted (``app/user/session``)."""
    artifacts: int = 0
    """How many artifact names were deleted (every version of each)."""
    runs_cancelled: list[str] = Field(default_factory=list)
    """Workflow ids of runs cancelled (or terminated) first."""
    outcome: Literal["forgotten", "dry_run"] = "forgotten"


class KeyStore(Protocol):
    """Wrapped data keys by scope and id, the keys forgotten, and the forget log."""

    def current(self, scope: str) -> StoredKey | None:
        """The live key of ``scope``, or ``None`` when it has none (yet, or any more)."""
        ...

    def get(self, key_id: str) -> StoredKey | ForgottenKey | None:
        """The key ``key_id``: live, forgotten, or ``None`` when this store never held it."""
        ...

    def add(self, key: StoredKey) -> StoredKey:
        """Store ``key`` unless its scope already has a live key; return the live one.

        Two processes making the first key of a scope at once both get the same key back.
        """
        ...

    def forget(self, prefix: str, at: float) -> list[ForgottenKey]:
        """Delete every live key whose scope lies within ``prefix``; record each as
        forgotten at ``at``. Forgetting what holds no key deletes nothing."""
        ...

    def scopes(self, prefix: str) -> list[str]:
        """The scopes within ``prefix`` that hold a live key, sorted."""
        ...

    def record(self, entry: ForgetEntry) -> None:
        """Append ``entry`` to the forget log."""
        ...

    def entries(self, prefix: str | None = None) -> list[ForgetEntry]:
        """The forget log, oldest first; with ``prefix``, the entries whose target lies
        within it or contains it (a session's entry and its user's)."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...
