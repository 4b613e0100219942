"""Sealing stored values with data keys: session rows, artifact bytes, and their framing.

A sealed row is text — ``adk-sealed:v1:<key id>:<base64 of nonce || ciphertext>`` — so a
TEXT column holds it; sealed artifact bytes are ``ADKSEAL1``, the key id's length and id,
then ``nonce || ciphertext``. Both use AES-256-GCM with the key id (and, for artifacts, the
file name) as associated data, so a value moved to another row or name fails to open.
Anything without the marker was written before sealing was turned on and reads as it is.
"""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag

from ..errors import EncryptionError
from ..ids import SessionKey
from .datakeys import DataKey, DataKeys

__all__ = [
    "ROW_MARK",
    "SealedValueError",
    "StoreSealer",
    "open_bytes",
    "seal_bytes",
]

ROW_MARK = "adk-sealed:v1:"
"""How a sealed row's text starts."""

_BYTES_MARK = b"ADKSEAL1"
_NONCE_BYTES = 12


class SealedValueError(EncryptionError):
    """A sealed value is malformed or fails authentication (altered, or moved)."""


def _context(kind: bytes, key_id: str, name: str = "") -> bytes:
    return b"adk-temporal/" + kind + b"/v1\x00" + key_id.encode() + b"\x00" + name.encode()


def seal_bytes(key: DataKey, data: bytes, *, name: str = "") -> bytes:
    """``data`` sealed with ``key`` for the artifact ``name``."""
    nonce = os.urandom(_NONCE_BYTES)
    key_id = key.key_id.encode()
    sealed = key.cipher.encrypt(nonce, data, _context(b"artifact", key.key_id, name))
    return _BYTES_MARK + bytes([len(key_id)]) + key_id + nonce + sealed


def sealed_key_id(data: bytes) -> str | None:
    """The key id sealed bytes name; ``None`` for bytes that are not sealed."""
    if not data.startswith(_BYTES_MARK) or len(data) <= len(_BYTES_MARK):
        return None
    size = data[len(_BYTES_MARK)]
    start = len(_BYTES_MARK) + 1
    return data[start : start + size].decode("ascii", errors="replace")


async def open_bytes(keys: DataKeys, data: bytes, *, name: str = "") -> bytes:
    """``data`` opened when sealed (by :func:`seal_bytes`), else as it is.

    Raises:
        ForgottenError: Its key was forgotten.
        SealedValueError: It was altered or belongs to another name.
    """
    key_id = sealed_key_id(data)
    if key_id is None:
        return data
    key = await keys.aby_id(key_id)
    body = data[len(_BYTES_MARK) + 1 + len(key_id) :]
    try:
        return key.cipher.decrypt(
            body[:_NONCE_BYTES], body[_NONCE_BYTES:], _context(b"artifact", key_id, name)
        )
    except InvalidTag:
        raise SealedValueError(
            f"sealed artifact {name!r} (key {key_id}) failed authentication: it was altered, "
            "or its bytes were moved from another artifact"
        ) from None


class _Sealing:
    """One session's key, sealing row text."""

    def __init__(self, key: DataKey) -> None:
        self._key = key

    def seal_row(self, text: str) -> str:
        """``text`` sealed as a row."""
        key = self._key
        nonce = os.urandom(_NONCE_BYTES)
        sealed = key.cipher.encrypt(nonce, text.encode(), _context(b"row", key.key_id))
        return f"{ROW_MARK}{key.key_id}:{base64.b64encode(nonce + sealed).decode()}"


class StoreSealer:
    """Seals a SQL session store's rows with each session's data key (a ``RowSealer``).

    Pass it to ``SqliteSessionService(path, sealer=...)`` or ``PostgresSessionService(dsn,
    sealer=...)``.

    Args:
        keys: The deployment's data keys.
    """

    def __init__(self, keys: DataKeys) -> None:
        self.keys = keys

    async def row_sealing(self, key: SessionKey) -> _Sealing:
        """The sealing of ``key``'s rows, its data key made on first use."""
        return _Sealing(await self.keys.afor_scope(self.keys.scope_of(key)))

    def open_row(self, text: str) -> str:
        """``text`` opened when sealed, else as it is.

        Raises:
            ForgottenError: The row's key was forgotten.
            SealedValueError: The row is malformed or was altered.
        """
        if not text.startswith(ROW_MARK):
            return text
        key_id, _, body = text[len(ROW_MARK) :].partition(":")
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise SealedValueError(f"sealed row (key {key_id}) is not base64") from None
        key = self.keys.by_id(key_id)
        try:
            opened = key.cipher.decrypt(
                raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _context(b"row", key_id)
            )
        except InvalidTag:
            raise SealedValueError(
                f"sealed row (key {key_id}) failed authentication: it was altered"
            ) from None
        return opened.decode()
