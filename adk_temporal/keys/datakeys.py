"""Data keys: one AES-256 key per session (or user, or app), wrapped by the master key.

:class:`DataKeys` hands out the key of a scope — making and storing it on first use — and
finds a key by the id a sealed value names. A key is stored wrapped: ``nonce ||
AES-256-GCM(master key, data key)``, with the key id and scope as associated data, so a key
moved to another scope in the store fails to unwrap. Keys are cached in memory for
``cache_seconds`` (a store read per payload would double a step's cost); a forget in this
process drops them at once, and other processes stop using a forgotten key when their
cached copy expires. A forgotten key is remembered as forgotten for good.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import ForgottenError
from ..ids import SessionKey
from .scopes import KeyScope, scope_of
from .store import ForgottenKey, KeyStore, KeyStoreError, StoredKey

__all__ = [
    "DEFAULT_CACHE_SECONDS",
    "DataKey",
    "DataKeys",
    "MasterKeys",
    "data_keys_of",
    "is_data_key_id",
]

DEFAULT_CACHE_SECONDS = 30.0
"""How long a process keeps a data key in memory before asking the store again."""

_NONCE_BYTES = 12
_CACHED_KEYS = 4096
"""Keys (and forgotten keys) a process keeps at most: a worker's recent sessions, not every
session it ever served."""
_KEY_BYTES = 32
_DATA_KEY_ID = re.compile(r"dk\.[a-z2-7]{26}")


def is_data_key_id(key_id: str) -> bool:
    """Whether ``key_id`` is a data key's id (``dk.`` and 26 base32 characters)."""
    return _DATA_KEY_ID.fullmatch(key_id) is not None


def _new_key_id() -> str:
    return "dk." + base64.b32encode(os.urandom(16)).decode().rstrip("=").lower()


def _wrap_context(key_id: str, scope: str) -> bytes:
    return b"adk-temporal/data-key/v1\x00" + key_id.encode() + b"\x00" + scope.encode()


class MasterKeys(Protocol):
    """The key file's keys, as data keys need them: wrap with the current, unwrap with any.

    :class:`~adk_temporal.codec.EncryptionCodec` is one.
    """

    @property
    def current_key_id(self) -> str:
        """The id of the key that wraps new data keys."""
        ...

    def master_cipher(self, key_id: str) -> AESGCM:
        """The cipher of master key ``key_id``.

        Raises:
            EncryptionError: The key file does not hold it.
        """
        ...


@dataclass(frozen=True)
class DataKey:
    """An unwrapped data key: its id, its scope and its cipher (never printed)."""

    key_id: str
    scope: str
    cipher: AESGCM = field(repr=False)


class DataKeys:
    """The data keys of a deployment: made on first use, found by id, forgotten on request.

    Args:
        store: Where wrapped keys live.
        master: Wraps and unwraps them (the codec over the key file).
        level: How widely one key reaches: ``session``, ``user`` or ``app``.
        cache_seconds: How long an unwrapped key stays in this process's memory.
        clock: Monotonic seconds, for the cache; injectable for tests.
        wall_clock: POSIX seconds, stamped on new and forgotten keys.
    """

    def __init__(
        self,
        store: KeyStore,
        master: MasterKeys,
        *,
        level: KeyScope = "session",
        cache_seconds: float = DEFAULT_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.level: KeyScope = level
        self._master = master
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._by_scope: dict[str, tuple[DataKey, float]] = {}
        self._by_id: dict[str, tuple[DataKey, float]] = {}
        self._forgotten: dict[str, ForgottenKey] = {}

    def __repr__(self) -> str:
        return f"DataKeys({self.store!r}, level={self.level!r})"

    def scope_of(self, key: SessionKey, *, user_wide: bool = False) -> str:
        """The scope of the key that seals ``key``'s values (see :func:`.scope_of`)."""
        return scope_of(key, self.level, user_wide=user_wide)

    def for_scope(self, scope: str) -> DataKey:
        """The live key of ``scope``, made and stored when it has none.

        Raises:
            KeyStoreError: The store cannot be read or written.
            EncryptionError: The master key that wrapped it is not in the key file.
        """
        cached = self._cached(self._by_scope, scope)
        if cached is not None:
            return cached
        stored = self.store.current(scope)
        if stored is None:
            stored = self.store.add(self._make(scope))
        return self._remember(self._unwrap(stored))

    def by_id(self, key_id: str) -> DataKey:
        """The key a sealed value names.

        Raises:
            ForgottenError: The key was forgotten: the value can never be opened.
            KeyStoreError: The store never held it (another deployment's value, or a store
                other than the one that sealed it), or cannot be read.
        """
        cached = self._cached(self._by_id, key_id)
        if cached is not None:
            return cached
        gone = self._forgotten.get(key_id)
        if gone is None:
            found = self.store.get(key_id) if is_data_key_id(key_id) else None
            if found is None:
                raise KeyStoreError(
                    f"data key {key_id!r} is not in {self.store!r}: the value was sealed by "
                    "another deployment, or this process is given another key store"
                )
            if isinstance(found, StoredKey):
                return self._remember(self._unwrap(found))
            if len(self._forgotten) >= _CACHED_KEYS:
                self._forgotten.pop(next(iter(self._forgotten)))
            gone = self._forgotten.setdefault(key_id, found)
        raise _forgotten_error(gone)

    async def afor_scope(self, scope: str) -> DataKey:
        """:meth:`for_scope` for async callers: the store is asked off the event loop."""
        cached = self._cached(self._by_scope, scope)
        return cached if cached is not None else await asyncio.to_thread(self.for_scope, scope)

    async def aby_id(self, key_id: str) -> DataKey:
        """:meth:`by_id` for async callers: the store is asked off the event loop."""
        cached = self._cached(self._by_id, key_id)
        return cached if cached is not None else await asyncio.to_thread(self.by_id, key_id)

    def forget(self, prefix: str) -> list[ForgottenKey]:
        """Delete every key within ``prefix`` from the store and from this process's memory.

        Returns:
            The keys forgotten (none when nothing within ``prefix`` held a key).
        """
        forgotten = self.store.forget(prefix, self._wall_clock())
        with self._lock:
            for key in forgotten:
                self._forgotten[key.key_id] = key
                self._by_id.pop(key.key_id, None)
                self._by_scope.pop(key.scope, None)
        return forgotten

    # ------------------------------------------------------------------ internals

    def _cached(self, table: dict[str, tuple[DataKey, float]], name: str) -> DataKey | None:
        entry = table.get(name)
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    def _remember(self, key: DataKey) -> DataKey:
        now = self._clock()
        with self._lock:
            for table in (self._by_scope, self._by_id):
                if len(table) >= _CACHED_KEYS:
                    _prune(table, now)
            self._by_scope[key.scope] = (key, now + self._cache_seconds)
            self._by_id[key.key_id] = (key, now + self._cache_seconds)
        return key

    def _make(self, scope: str) -> StoredKey:
        key_id = _new_key_id()
        master_id = self._master.current_key_id
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._master.master_cipher(master_id).encrypt(
            nonce, os.urandom(_KEY_BYTES), _wrap_context(key_id, scope)
        )
        return StoredKey(key_id, scope, nonce + sealed, master_id, self._wall_clock())

    def _unwrap(self, stored: StoredKey) -> DataKey:
        cipher = self._master.master_cipher(stored.master_key_id)
        wrapped = stored.wrapped
        try:
            key = cipher.decrypt(
                wrapped[:_NONCE_BYTES],
                wrapped[_NONCE_BYTES:],
                _wrap_context(stored.key_id, stored.scope),
            )
        except InvalidTag:
            raise KeyStoreError(
                f"data key {stored.key_id!r} of {stored.scope} does not unwrap with master key "
                f"{stored.master_key_id!r}: the store was altered, or the key file's "
                f"{stored.master_key_id!r} is another key"
            ) from None
        return DataKey(stored.key_id, stored.scope, AESGCM(key))


def _prune(table: dict[str, tuple[DataKey, float]], now: float) -> None:
    """Drop the expired entries; if none had, the oldest quarter (insertion order)."""
    expired = [name for name, (_, until) in table.items() if until <= now]
    for name in expired or list(table)[: len(table) // 4]:
        del table[name]


def data_keys_of(codec: object) -> DataKeys | None:
    """The data keys of a payload codec (an ``EncryptionCodec`` whose key file has a
    ``data_keys`` section), or ``None``."""
    found = getattr(codec, "data_keys", None)
    return found if isinstance(found, DataKeys) else None


def _forgotten_error(gone: ForgottenKey) -> ForgottenError:
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(gone.forgotten_at))
    return ForgottenError(
        f"forgotten: this value belongs to {gone.scope}, whose data key {gone.key_id} was "
        f"deleted on {when}; it can never be read again",
        key_id=gone.key_id,
        scope=gone.scope,
        forgotten_at=gone.forgotten_at,
    )
