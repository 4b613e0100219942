"""The default key store: a directory of small files beside the key file, for one machine.

Layout (directory mode 0700, files 0600)::

    keys/<key id>.json        a live key: scope, wrapped key, master key id, created at
    scopes/<sha-256 of scope> the id of the scope's live key
    forgotten/<key id>.json   a forgotten key: scope, when
    forget-log.jsonl          one ForgetEntry per line
    .lock                     held (flock) by every write, across the machine's processes

Writes go to a temporary file renamed into place, so a reader sees a record whole or not at
all. Workers on several machines share a database key store instead
(:mod:`adk_temporal.keys.sql`): a file lock does not reach across machines.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .scopes import inside
from .store import ForgetEntry, ForgottenKey, KeyStoreError, StoredKey

__all__ = ["FileKeyStore"]


class FileKeyStore:
    """A :class:`~adk_temporal.keys.store.KeyStore` in a directory (created on first use).

    Args:
        root: The directory.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._thread_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FileKeyStore({str(self.root)!r})"

    def current(self, scope: str) -> StoredKey | None:
        """The live key of ``scope`` (see :meth:`KeyStore.current`)."""
        pointer = self._read_text(self._scope_file(scope))
        if pointer is None:
            return None
        found = self._read_key(pointer.strip())
        return found if found is not None and found.scope == scope else None

    def get(self, key_id: str) -> StoredKey | ForgottenKey | None:
        """The key ``key_id``, live or forgotten (see :meth:`KeyStore.get`)."""
        live = self._read_key(key_id)
        if live is not None:
            return live
        data = self._read_json(self.root / "forgotten" / f"{key_id}.json")
        if data is None:
            return None
        return ForgottenKey(key_id, str(data["scope"]), float(data["forgotten_at"]))

    def add(self, key: StoredKey) -> StoredKey:
        """Store ``key`` unless its scope has a live key (see :meth:`KeyStore.add`)."""
        with self._locked():
            existing = self.current(key.scope)
            if existing is not None:
                return existing
            record = {
                "scope": key.scope,
                "wrapped": base64.b64encode(key.wrapped).decode(),
                "master_key_id": key.master_key_id,
                "created_at": key.created_at,
            }
            self._write(self.root / "keys" / f"{key.key_id}.json", json.dumps(record))
            self._write(self._scope_file(key.scope), key.key_id)
            return key

    def forget(self, prefix: str, at: float) -> list[ForgottenKey]:
        """Delete the live keys within ``prefix`` (see :meth:`KeyStore.forget`)."""
        forgotten: list[ForgottenKey] = []
        with self._locked():
            for key in self._live_keys():
                if not inside(key.scope, prefix):
                    continue
                # The record first: a crash after it leaves the key forgotten, never "unknown".
                record = {"scope": key.scope, "forgotten_at": at}
                self._write(self.root / "forgotten" / f"{key.key_id}.json", json.dumps(record))
                (self.root / "keys" / f"{key.key_id}.json").unlink(missing_ok=True)
                self._scope_file(key.scope).unlink(missing_ok=True)
                forgotten.append(ForgottenKey(key.key_id, key.scope, at))
        return forgotten

    def scopes(self, prefix: str) -> list[str]:
        """The scopes within ``prefix`` holding a live key (see :meth:`KeyStore.scopes`)."""
        return sorted(k.scope for k in self._live_keys() if inside(k.scope, prefix))

    def record(self, entry: ForgetEntry) -> None:
        """Append ``entry`` to ``forget-log.jsonl`` (see :meth:`KeyStore.record`)."""
        with self._locked():
            path = self.root / "forget-log.jsonl"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(entry.model_dump_json() + "\n")
                out.flush()
                os.fsync(out.fileno())

    def entries(self, prefix: str | None = None) -> list[ForgetEntry]:
        """The forget log, oldest first (see :meth:`KeyStore.entries`)."""
        text = self._read_text(self.root / "forget-log.jsonl") or ""
        found = [ForgetEntry.model_validate_json(line) for line in text.splitlines() if line]
        if prefix is None:
            return found
        return [e for e in found if inside(e.target, prefix) or inside(prefix, e.target)]

    def close(self) -> None:
        """Nothing to release: every call opens and closes its files."""

    # ------------------------------------------------------------------ files

    def _scope_file(self, scope: str) -> Path:
        return self.root / "scopes" / hashlib.sha256(scope.encode()).hexdigest()

    def _live_keys(self) -> Iterator[StoredKey]:
        folder = self.root / "keys"
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*.json")):
            key = self._read_key(path.stem)
            if key is not None:
                yield key

    def _read_key(self, key_id: str) -> StoredKey | None:
        data = self._read_json(self.root / "keys" / f"{key_id}.json")
        if data is None:
            return None
        try:
            return StoredKey(
                key_id=key_id,
                scope=str(data["scope"]),
                wrapped=base64.b64decode(data["wrapped"], validate=True),
                master_key_id=str(data["master_key_id"]),
                created_at=float(data["created_at"]),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise KeyStoreError(
                f"key store {self.root}: key {key_id!r} is malformed ({err})"
            ) from None

    def _read_json(self, path: Path) -> dict[str, Any] | None:
        text = self._read_text(path)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise KeyStoreError(f"key store file {path} is not JSON ({err.msg})") from None
        if not isinstance(data, dict):
            raise KeyStoreError(f"key store file {path} must hold a JSON object")
        return data

    def _read_text(self, path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as err:
            raise KeyStoreError(f"cannot read key store file {path}: {err}") from None

    def _write(self, path: Path, text: str) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        # The thread lock first: flock on one process's two descriptors does not exclude.
        with self._thread_lock:
            fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)
