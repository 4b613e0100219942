"""The ``data_keys`` section of the key file, and opening the key store it names.

::

    {
      "current": "k1",
      "keys": {"k1": "<base64 of 32 bytes>"},
      "data_keys": {"level": "session", "store": "sqlite:sessions.db", "seal_stores": true}
    }

``store`` is a directory (a :class:`~adk_temporal.keys.file.FileKeyStore`; the default is
``<key file>.data-keys`` beside the key file), ``sqlite:<path>`` (tables in that SQLite
file, typically the embedded ``sessions.db``) or a ``postgresql://`` DSN (tables in the
session store's database). Relative paths are relative to the key file's directory.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .datakeys import DEFAULT_CACHE_SECONDS
from .file import FileKeyStore
from .scopes import KeyScope
from .sql import PostgresKeyStore, SqliteKeyStore
from .store import KeyStore

__all__ = ["DataKeySettings", "open_key_store"]


class DataKeySettings(BaseModel):
    """Per-session data keys, as the key file's ``data_keys`` section turns them on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: KeyScope = "session"
    """How widely one key reaches: ``session``, ``user`` or ``app`` (a tenant)."""
    store: str | None = None
    """Where the keys live (see the module docstring); ``None``: beside the key file."""
    seal_stores: bool = False
    """Seal the session store's rows and the artifacts with the same keys."""
    cache_seconds: float = Field(default=DEFAULT_CACHE_SECONDS, ge=0, le=3600)
    """How long a process keeps a key in memory."""


def open_key_store(spec: str | None, key_file: str | Path | None) -> KeyStore:
    """The key store ``spec`` names (see the module docstring).

    Args:
        spec: A directory, ``sqlite:<path>`` or a ``postgresql://`` DSN; ``None`` for the
            default directory beside ``key_file``.
        key_file: The key file, which relative paths are relative to.

    Raises:
        ValueError: ``spec`` is ``None`` and there is no key file to place the default by.
    """
    base = Path(key_file).parent if key_file is not None else Path.cwd()
    if spec is None:
        if key_file is None:
            raise ValueError("data keys need a key store: name one in data_keys.store")
        return FileKeyStore(Path(f"{key_file}.data-keys"))
    if spec.startswith(("postgresql://", "postgres://")):
        return PostgresKeyStore(spec)
    if spec.startswith("sqlite:"):
        return SqliteKeyStore(base / spec.removeprefix("sqlite:"))
    return FileKeyStore(base / spec)
