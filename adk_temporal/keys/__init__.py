"""Data that can be forgotten: per-session data keys, key stores, forget and retention.

Each session (or user, or app — a tenant) gets its own AES-256 data key, wrapped by the
key file's master key and kept in a key store the operator chooses (a directory by
default, the session store's database in production). The payload codec
(:mod:`adk_temporal.codec`) seals a session's payloads in Temporal history with it, and the
session and artifact stores may seal their values with it too (:class:`StoreSealer`,
:class:`SealedArtifactService`). Forgetting a session deletes its rows, its artifacts and
its key: every copy of its data left anywhere — history, backups, leftover bytes — then
fails to open with :class:`~adk_temporal.errors.ForgottenError`, while other sessions read
as before (:func:`forget`). Retention forgets an app's sessions idle past a limit
(:func:`sweep`). Every forget is an entry in the forget log: who, why, when, what.

The Temporal parts — cancelling a forgotten session's open run, the retention schedule's
workflow and activity — live in ``client.py``, ``workflows/`` and ``activities/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .datakeys import DEFAULT_CACHE_SECONDS, DataKey, DataKeys, MasterKeys, is_data_key_id
from .file import FileKeyStore
from .scopes import KeyScope, Target, inside, scope_of, scope_of_workflow
from .sealing import ROW_MARK, SealedValueError, StoreSealer
from .settings import DataKeySettings, open_key_store
from .sql import PostgresKeyStore, SqliteKeyStore
from .store import ForgetEntry, ForgottenKey, KeyStore, KeyStoreError, StoredKey

if TYPE_CHECKING:
    from .artifacts import SealedArtifactService

__all__ = [
    "DEFAULT_CACHE_SECONDS",
    "ROW_MARK",
    "DataKey",
    "DataKeySettings",
    "DataKeys",
    "FileKeyStore",
    "ForgetEntry",
    "ForgottenKey",
    "KeyScope",
    "KeyStore",
    "KeyStoreError",
    "MasterKeys",
    "PostgresKeyStore",
    "SealedArtifactService",
    "SealedValueError",
    "SqliteKeyStore",
    "StoreSealer",
    "StoredKey",
    "Target",
    "inside",
    "is_data_key_id",
    "open_key_store",
    "scope_of",
    "scope_of_workflow",
]


def __getattr__(name: str) -> object:
    """Import what needs the artifact store (and google-genai) on first access.

    The codec imports this package, and a client that only encrypts payloads should not
    pay for the artifact models.
    """
    if name == "SealedArtifactService":
        from .artifacts import SealedArtifactService

        return SealedArtifactService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
