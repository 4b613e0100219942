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

import importlib
from typing import TYPE_CHECKING

from .datakeys import (
    DEFAULT_CACHE_SECONDS,
    DataKey,
    DataKeys,
    MasterKeys,
    data_keys_of,
    is_data_key_id,
)
from .file import FileKeyStore
from .scopes import KeyScope, Target, inside, scope_of, scope_of_workflow
from .sealing import ROW_MARK, SealedValueError, StoreSealer
from .settings import DataKeySettings, open_key_store
from .sql import PostgresKeyStore, SqliteKeyStore
from .store import ForgetEntry, ForgottenKey, KeyStore, KeyStoreError, StoredKey

if TYPE_CHECKING:
    from .artifacts import SealedArtifactService
    from .forgetting import CannotForgetError, forget, sessions_of
    from .retention import (
        DEFAULT_SWEEP_LIMIT,
        IdleSession,
        RetentionReport,
        SweepRequest,
        sweep,
    )

__all__ = [
    "DEFAULT_CACHE_SECONDS",
    "DEFAULT_SWEEP_LIMIT",
    "ROW_MARK",
    "CannotForgetError",
    "DataKey",
    "DataKeySettings",
    "DataKeys",
    "FileKeyStore",
    "ForgetEntry",
    "ForgottenKey",
    "IdleSession",
    "KeyScope",
    "KeyStore",
    "KeyStoreError",
    "MasterKeys",
    "PostgresKeyStore",
    "RetentionReport",
    "SealedArtifactService",
    "SealedValueError",
    "SqliteKeyStore",
    "StoreSealer",
    "StoredKey",
    "SweepRequest",
    "Target",
    "data_keys_of",
    "forget",
    "inside",
    "is_data_key_id",
    "open_key_store",
    "scope_of",
    "scope_of_workflow",
    "sessions_of",
    "sweep",
]

_LAZY = {
    "SealedArtifactService": "artifacts",
    "CannotForgetError": "forgetting",
    "forget": "forgetting",
    "sessions_of": "forgetting",
    "DEFAULT_SWEEP_LIMIT": "retention",
    "IdleSession": "retention",
    "RetentionReport": "retention",
    "SweepRequest": "retention",
    "sweep": "retention",
}


def __getattr__(name: str) -> object:
    """Import what needs the stores (and google-genai) on first access.

    The codec imports this package, and a client that only encrypts payloads should not
    pay for the artifact and session models.
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
