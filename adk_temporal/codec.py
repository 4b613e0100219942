"""Encrypted payloads: AES-256-GCM with rotating keys, optionally compressed first.

:class:`EncryptionCodec` is a Temporal payload codec. Every payload a client or worker
writes — messages, tool arguments and results, approvals and their payloads, memos, activity
summaries, failure messages — reaches the server as ciphertext; only processes holding the
key file (workers, clients, the codec server behind the Temporal UI) read it back.

An encrypted payload is the original payload, serialised, optionally zlib-compressed, then
sealed with AES-256-GCM under a fresh random 96-bit nonce. Its metadata says how to open it::

    encoding           binary/encrypted
    encryption-cipher  AES-256-GCM
    encryption-key-id  the id of the key in the key file, e.g. "k2"
    compression        zlib (only when compressed)

and its data is ``nonce || ciphertext || tag``. The key id and the compression flag are also
authenticated (GCM associated data), so neither can be altered unnoticed. Payloads that are
not encrypted pass through decoding unchanged, so histories written before encryption was
turned on stay readable.

Keys live in a JSON key file, never on a command line (where ``ps`` and shell histories
would show them)::

    {
      "current": "k2",
      "keys": {"k1": "<base64 of 32 random bytes>", "k2": "<base64 of 32 random bytes>"},
      "compress": false
    }

New payloads use ``current``; every key in ``keys`` can still open what it sealed, so a
rotation adds a key, makes it current and keeps the old ones (:func:`rotate_key_file` does
exactly that). Rotate well before a key has sealed 2**32 payloads: past that, random 96-bit
nonces risk repeating, which breaks GCM. A process that meets a key id it does not hold
re-reads its key file once it changed, so workers started before a rotation read payloads
sealed after it. Key ids are 1-64 characters of ``A-Z a-z 0-9 . _ -``. The file is found
through ``--encryption-key-file`` or the ``ADK_ENCRYPTION_KEY_FILE`` environment variable
(:func:`codec_from_env`); keep it readable by its owner only (``chmod 600``).

With a ``data_keys`` section (:mod:`adk_temporal.keys`), a payload of a session's workflow
(``adk/{app}/{user}/{session}``: Temporal tells the codec whose payload it encodes) is
sealed with that session's data key instead — ``encryption-key-id`` then names the data key
(``dk.…``) — so forgetting the session (deleting its key) leaves every payload of it in
history unreadable, while other sessions read as before. Payloads of no session keep the
master key. Decoding needs no context: the key id says which key opens a payload, so
histories sealed before data keys were turned on stay readable.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import re
import tempfile
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ActivitySerializationContext,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from .errors import EncryptionError
from .keys import (
    DataKey,
    DataKeys,
    DataKeySettings,
    KeyStore,
    is_data_key_id,
    open_key_store,
    scope_of_workflow,
)

__all__ = [
    "ENCRYPTED_ENCODING",
    "KEY_FILE_ENV",
    "EncryptionCodec",
    "EncryptionKeys",
    "KeyFileError",
    "PayloadAuthenticationError",
    "UnknownKeyError",
    "codec_from_env",
    "load_keys",
    "rotate_key_file",
    "write_key_file",
]

ENCRYPTED_ENCODING = "binary/encrypted"
"""The ``encoding`` metadata of an encrypted payload."""

KEY_FILE_ENV = "ADK_ENCRYPTION_KEY_FILE"
"""The environment variable that names the key file."""

_CIPHER = b"AES-256-GCM"
_ZLIB = b"zlib"
_NONCE_BYTES = 12
_TAG_BYTES = 16
_KEY_BYTES = 32
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_MAKE_KEY = 'python -c "import base64,os; print(base64.b64encode(os.urandom(32)).decode())"'


class KeyFileError(EncryptionError):
    """A key file is missing, unreadable or malformed; the message names the file and field."""


class UnknownKeyError(EncryptionError):
    """A payload was sealed with a key id the key file does not hold (removed too early?)."""


class PayloadAuthenticationError(EncryptionError):
    """A payload failed authentication: it was altered, or its key id now names another key."""


@dataclass(frozen=True)
class EncryptionKeys:
    """A key ring: the key new payloads are sealed with, and every key still accepted.

    Args:
        current: The id of the key that seals new payloads; must be in ``keys``.
        keys: Every key by id, 32 bytes each; old ones stay so old payloads stay readable.
        compress: zlib-compress payloads before sealing them. Off by default: compressed
            length reveals how repetitive the plaintext is, which can leak a secret that
            shares a payload with text an attacker chooses.
        data_keys: Per-session data keys (the key file's ``data_keys`` section); ``None``
            seals everything with the master key.

    Raises:
        KeyFileError: An id breaks the grammar, a key is not 32 bytes, or ``current`` is
            not one of ``keys``.
    """

    current: str
    # repr=False: a key ring printed in a log or a traceback must not print the keys.
    keys: Mapping[str, bytes] = field(repr=False)
    compress: bool = False
    data_keys: DataKeySettings | None = None

    def __post_init__(self) -> None:
        _check_keys(self.current, self.keys, "the key ring")

    @classmethod
    def generate(cls, key_id: str = "k1", *, compress: bool = False) -> EncryptionKeys:
        """A key ring holding one fresh random key."""
        return cls(key_id, {key_id: os.urandom(_KEY_BYTES)}, compress)

    @classmethod
    def from_json(cls, text: str, *, source: str = "the key file") -> EncryptionKeys:
        """Parse the key file format (see the module docstring).

        Raises:
            KeyFileError: The text is not that format; the message names ``source`` and
                what to fix.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise KeyFileError(
                f"{source} is not JSON ({err.msg}, line {err.lineno}); expected "
                '{"current": "k1", "keys": {"k1": "<base64 of 32 bytes>"}}'
            ) from None
        if not isinstance(data, dict):
            raise KeyFileError(f"{source} must hold a JSON object with 'current' and 'keys'")
        unknown = sorted(set(data) - {"current", "keys", "compress", "data_keys"})
        if unknown:
            raise KeyFileError(
                f"{source} has unknown field(s) {', '.join(map(repr, unknown))}; "
                "allowed: 'current', 'keys', 'compress', 'data_keys'"
            )
        current, raw_keys = data.get("current"), data.get("keys")
        if not isinstance(current, str):
            raise KeyFileError(f"{source}: 'current' must be the id of a key in 'keys'")
        if not isinstance(raw_keys, dict) or not raw_keys:
            raise KeyFileError(f"{source}: 'keys' must be a non-empty object of id: key")
        compress = data.get("compress", False)
        if not isinstance(compress, bool):
            raise KeyFileError(f"{source}: 'compress' must be true or false")
        keys = {}
        for key_id, encoded in raw_keys.items():
            keys[key_id] = _decode_key(key_id, encoded, source)
        _check_keys(current, keys, source)
        return cls(current, keys, compress, _data_key_settings(data.get("data_keys"), source))

    def to_json(self) -> str:
        """The key file format, keys in base64."""
        data = {
            "current": self.current,
            "keys": {k: base64.b64encode(v).decode() for k, v in self.keys.items()},
            "compress": self.compress,
        }
        if self.data_keys is not None:
            data["data_keys"] = self.data_keys.model_dump(exclude_defaults=True)
        return json.dumps(data, indent=2) + "\n"

    def rotated(self, key_id: str | None = None) -> EncryptionKeys:
        """This ring plus a fresh random key, which becomes current.

        Args:
            key_id: The new key's id; default ``k<n>``, the first unused number.

        Raises:
            KeyFileError: ``key_id`` is already in the ring or breaks the grammar.
        """
        if key_id is None:
            n = len(self.keys) + 1
            while f"k{n}" in self.keys:
                n += 1
            key_id = f"k{n}"
        if key_id in self.keys:
            raise KeyFileError(f"key id {key_id!r} is already in the key ring; choose another")
        keys = {**self.keys, key_id: os.urandom(_KEY_BYTES)}
        return EncryptionKeys(key_id, keys, self.compress, self.data_keys)


def _data_key_settings(raw: object, source: str) -> DataKeySettings | None:
    if raw is None:
        return None
    try:
        return DataKeySettings.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'data_keys'}: {e['msg']}" for e in err.errors()
        )
        raise KeyFileError(
            f"{source}: 'data_keys' is malformed ({problems}); expected "
            '{"level": "session"|"user"|"app", "store": DIR|"sqlite:PATH"|DSN, '
            '"seal_stores": true|false}'
        ) from None


def _decode_key(key_id: str, encoded: object, source: str) -> bytes:
    if not isinstance(encoded, str):
        raise KeyFileError(f"{source}: key {key_id!r} must be a base64 string")
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise KeyFileError(
            f"{source}: key {key_id!r} is not valid base64; make a key with {_MAKE_KEY}"
        ) from None
    return key


def _check_keys(current: str, keys: Mapping[str, bytes], source: str) -> None:
    for key_id, key in keys.items():
        if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
            raise KeyFileError(
                f"{source}: key id {key_id!r} must be 1-64 characters of A-Z a-z 0-9 . _ -"
            )
        if len(key) != _KEY_BYTES:
            raise KeyFileError(
                f"{source}: key {key_id!r} is {len(key)} bytes; AES-256 needs exactly "
                f"{_KEY_BYTES} (make one with {_MAKE_KEY})"
            )
    if current not in keys:
        raise KeyFileError(
            f"{source}: 'current' is {current!r}, which is not one of the keys "
            f"({', '.join(sorted(keys))})"
        )


def load_keys(path: str | Path) -> EncryptionKeys:
    """Read a key file.

    Raises:
        KeyFileError: The file is missing, unreadable or not the key file format; the
            message names the file.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyFileError(
            f"key file {path} does not exist; create one with "
            f"`adk-temporal rotate-key --encryption-key-file {path}`"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise KeyFileError(f"cannot read key file {path}: {err}") from None
    return EncryptionKeys.from_json(text, source=f"key file {path}")


def write_key_file(path: str | Path, keys: EncryptionKeys) -> None:
    """Write ``keys`` to ``path`` atomically, readable by the owner only (mode 0600).

    Written to a temporary file beside it and renamed, so a process reading the file at the
    same moment sees the old ring or the new one, never half of one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(keys.to_json())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def rotate_key_file(path: str | Path, key_id: str | None = None) -> EncryptionKeys:
    """Add a fresh key to the key file at ``path`` and make it current.

    Creates the file with one key when it does not exist. Old keys stay, so everything
    they sealed stays readable.

    Args:
        path: The key file.
        key_id: The new key's id; default ``k<n>``.

    Returns:
        The key ring now in the file.

    Raises:
        KeyFileError: The existing file is unusable, or ``key_id`` is taken.
    """
    path = Path(path)
    if path.exists():
        keys = load_keys(path).rotated(key_id)
    else:
        keys = EncryptionKeys.generate(key_id or "k1")
    write_key_file(path, keys)
    return keys


def _associated_data(key_id: bytes, compression: bytes) -> bytes:
    # Binds the metadata the opener trusts to the ciphertext: a payload whose key id or
    # compression flag was rewritten fails authentication instead of being misread.
    return b"adk-temporal/v1\x00" + key_id + b"\x00" + compression


class _Ring:
    """A key ring with its ciphers, swapped as one object when the key file is re-read."""

    def __init__(self, keys: EncryptionKeys) -> None:
        self.keys = keys
        self.ciphers = {k: AESGCM(v) for k, v in keys.keys.items()}


class _KeyFile:
    """The master key ring and where it came from, shared by a codec and its contexts."""

    def __init__(self, keys: EncryptionKeys, path: Path | None) -> None:
        self.ring = _Ring(keys)
        self.path = path
        self.loaded_stat = self.stat()
        self.reload_lock = threading.Lock()

    def stat(self) -> tuple[int, int] | None:
        if self.path is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def reload(self) -> bool:
        """Re-read the key file if it changed since it was loaded; whether it was."""
        with self.reload_lock:
            stat = self.stat()
            if self.path is None or stat is None or stat == self.loaded_stat:
                return False
            # Replaced whole, so a concurrent encode sees the old ring or the new one.
            self.ring = _Ring(load_keys(self.path))
            self.loaded_stat = stat
            return True


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    """Seals payloads with AES-256-GCM under the current key; opens them with any key.

    Use it through the data converter: ``adk_data_converter(codec=codec)``, or
    ``AdkClient.connect(..., payload_codec=codec)`` (workers built on that client inherit
    it). With data keys, Temporal hands each payload's workflow to :meth:`with_context`,
    and a session's payloads are sealed with the session's own key.

    Args:
        keys: The key ring.
        key_file: Where ``keys`` came from. When a payload names a key id the ring lacks,
            the file is read again if it changed since, so a process started before a
            rotation still reads payloads sealed with the new key.
        key_store: Where data keys live; turns them on. Default: the store the key ring's
            ``data_keys`` section names, if it has one.
    """

    def __init__(
        self,
        keys: EncryptionKeys,
        *,
        key_file: str | Path | None = None,
        key_store: KeyStore | None = None,
    ) -> None:
        self._file = _KeyFile(keys, Path(key_file) if key_file is not None else None)
        self._scope: str | None = None
        settings = keys.data_keys
        if key_store is None and settings is not None:
            key_store = open_key_store(settings.store, key_file)
        self.data_keys: DataKeys | None = None
        """The data keys payloads of a session are sealed with; ``None``: master key only."""
        if key_store is not None:
            settings = settings or DataKeySettings()
            self.data_keys = DataKeys(
                key_store, self, level=settings.level, cache_seconds=settings.cache_seconds
            )

    @classmethod
    def from_file(cls, path: str | Path) -> EncryptionCodec:
        """A codec over the key file at ``path``.

        Raises:
            KeyFileError: The file is missing, unreadable or malformed.
        """
        return cls(load_keys(path), key_file=path)

    @property
    def current_key_id(self) -> str:
        """The id of the key new payloads are sealed with."""
        return self._file.ring.keys.current

    @property
    def key_ids(self) -> list[str]:
        """Every key id this codec can open, sorted."""
        return sorted(self._file.ring.keys.keys)

    @property
    def seals_stores(self) -> bool:
        """Whether the key file asks for sealed session rows and artifacts too."""
        settings = self._file.ring.keys.data_keys
        return self.data_keys is not None and settings is not None and settings.seal_stores

    def with_context(self, context: SerializationContext) -> EncryptionCodec:
        """This codec for the payloads of one workflow: its session's data key seals them.

        Temporal calls it for every workflow task, activity and client call; without data
        keys, or for a workflow that is no session's, it is this codec.
        """
        if self.data_keys is None:
            return self
        workflow_id = None
        if isinstance(context, (WorkflowSerializationContext, ActivitySerializationContext)):
            workflow_id = context.workflow_id
        scope = scope_of_workflow(workflow_id, self.data_keys.level)
        if scope == self._scope:
            return self
        scoped = copy.copy(self)
        scoped._scope = scope
        return scoped

    def master_cipher(self, key_id: str) -> AESGCM:
        """The cipher of master key ``key_id`` (data keys are wrapped with these).

        Raises:
            UnknownKeyError: The key file does not hold it.
        """
        cipher = self._file.ring.ciphers.get(key_id)
        if cipher is None and self._file.reload():
            cipher = self._file.ring.ciphers.get(key_id)
        if cipher is None:
            where = f"key file {self._file.path}" if self._file.path else "the key ring"
            raise UnknownKeyError(
                f"payload was sealed with key {key_id!r}, which {where} does not hold "
                f"(it holds {', '.join(self.key_ids)}); put that key back in 'keys' — "
                "a rotation keeps old keys"
            )
        return cipher

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Seal each payload under its session's data key, or the current master key."""
        key = None
        if self.data_keys is not None and self._scope is not None:
            key = await self.data_keys.afor_scope(self._scope)
        return [self._seal(p, key) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Open each encrypted payload; others pass through unchanged.

        Raises:
            UnknownKeyError: A payload names a key id the key file does not hold.
            ForgottenError: A payload belongs to a forgotten session.
            PayloadAuthenticationError: A payload was altered or is malformed.
        """
        opened = []
        for payload in payloads:
            key_id = _sealed_key_id(payload)
            data_key = None
            if key_id is not None and self._is_data_key(key_id):
                assert self.data_keys is not None  # _is_data_key
                data_key = await self.data_keys.aby_id(key_id)
            opened.append(self._open(payload, data_key))
        return opened

    def encode_payload(self, payload: Payload) -> Payload:
        """Seal one payload (synchronous: the codec server calls it from its threads)."""
        key = None
        if self.data_keys is not None and self._scope is not None:
            key = self.data_keys.for_scope(self._scope)
        return self._seal(payload, key)

    def decode_payload(self, payload: Payload) -> Payload:
        """Open one payload (synchronous); one that is not encrypted is returned as it is.

        Raises:
            UnknownKeyError: The payload names a key id the key file does not hold.
            ForgottenError: The payload belongs to a forgotten session.
            PayloadAuthenticationError: The payload was altered or is malformed.
        """
        key_id = _sealed_key_id(payload)
        data_key = None
        if key_id is not None and self._is_data_key(key_id):
            assert self.data_keys is not None  # _is_data_key
            data_key = self.data_keys.by_id(key_id)
        return self._open(payload, data_key)

    def _is_data_key(self, key_id: str) -> bool:
        return (
            self.data_keys is not None
            and key_id not in self._file.ring.ciphers
            and is_data_key_id(key_id)
        )

    def _seal(self, payload: Payload, data_key: DataKey | None) -> Payload:
        ring = self._file.ring
        keys = ring.keys
        plaintext = payload.SerializeToString()
        compression = b""
        if keys.compress:
            packed = zlib.compress(plaintext)
            # Only when it pays: a payload that does not shrink is stored as it is.
            if len(packed) < len(plaintext):
                plaintext, compression = packed, _ZLIB
        if data_key is not None:
            key_name, cipher = data_key.key_id, data_key.cipher
        else:
            key_name, cipher = keys.current, ring.ciphers[keys.current]
        key_id = key_name.encode()
        nonce = os.urandom(_NONCE_BYTES)
        sealed = cipher.encrypt(nonce, plaintext, _associated_data(key_id, compression))
        metadata = {
            "encoding": ENCRYPTED_ENCODING.encode(),
            "encryption-cipher": _CIPHER,
            "encryption-key-id": key_id,
        }
        if compression:
            metadata["compression"] = compression
        return Payload(metadata=metadata, data=nonce + sealed)

    def _open(self, payload: Payload, data_key: DataKey | None) -> Payload:
        metadata = payload.metadata
        if metadata.get("encoding") != ENCRYPTED_ENCODING.encode():
            return payload
        key_id = metadata.get("encryption-key-id", b"")
        if not key_id:
            raise PayloadAuthenticationError(
                "encrypted payload carries no encryption-key-id metadata: it was altered"
            )
        name = key_id.decode(errors="replace")
        cipher_name = metadata.get("encryption-cipher", _CIPHER)
        if cipher_name != _CIPHER:
            raise PayloadAuthenticationError(
                f"payload sealed with cipher {cipher_name.decode(errors='replace')!r}; "
                f"this codec only opens {_CIPHER.decode()}"
            )
        compression = metadata.get("compression", b"")
        if compression not in (b"", _ZLIB):
            raise PayloadAuthenticationError(
                f"payload compressed with {compression.decode(errors='replace')!r}; "
                "this codec only reads zlib"
            )
        if len(payload.data) < _NONCE_BYTES + _TAG_BYTES:
            raise PayloadAuthenticationError(
                f"encrypted payload (key {name!r}) is {len(payload.data)} bytes, shorter "
                "than a nonce and a tag: it was truncated"
            )
        if data_key is None and name not in self._file.ring.ciphers and is_data_key_id(name):
            raise UnknownKeyError(
                f"payload was sealed with data key {name!r}, and this process has no data "
                "keys: give it the key file with the 'data_keys' section the writers use"
            )
        cipher = data_key.cipher if data_key is not None else self.master_cipher(name)
        nonce, sealed = payload.data[:_NONCE_BYTES], payload.data[_NONCE_BYTES:]
        try:
            plaintext = cipher.decrypt(nonce, sealed, _associated_data(key_id, compression))
        except InvalidTag:
            raise PayloadAuthenticationError(
                f"encrypted payload (key {name!r}) failed authentication: it was altered, "
                f"or key {name!r} in the key file is not the key that sealed it"
            ) from None
        if compression:
            # Decompressed only after authentication: nobody without the key can hand
            # this codec a zlib bomb.
            plaintext = zlib.decompress(plaintext)
        return Payload.FromString(plaintext)


def _sealed_key_id(payload: Payload) -> str | None:
    """The key id an encrypted payload names; ``None`` for any other payload."""
    if payload.metadata.get("encoding") != ENCRYPTED_ENCODING.encode():
        return None
    return payload.metadata.get("encryption-key-id", b"").decode(errors="replace") or None


def codec_from_env(environ: Mapping[str, str] | None = None) -> EncryptionCodec | None:
    """The codec of the key file named by ``ADK_ENCRYPTION_KEY_FILE``; ``None`` when unset.

    Raises:
        KeyFileError: The variable names an unusable file.
    """
    path = (os.environ if environ is None else environ).get(KEY_FILE_ENV)
    return EncryptionCodec.from_file(path) if path else None
