"""The data converter of adk-temporal: pydantic JSON without default-valued fields.

Clients only need this module (not the worker's plugin), which keeps commands that merely
start or answer invocations light. Workers, clients, every CLI command and the demo build
their converter with :func:`adk_data_converter`, so a codec given to it (encryption:
:mod:`adk_temporal.codec`) applies everywhere the converter goes.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import SchemaSerializer, core_schema
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverter,
    DefaultFailureConverterWithEncodedAttributes,
    DefaultPayloadConverter,
    EncodingPayloadConverter,
    JSONPlainPayloadConverter,
    PayloadCodec,
)

from .errors import EncryptionError

__all__ = ["AdkPayloadConverter", "adk_data_converter"]

_ANY = SchemaSerializer(core_schema.any_schema())


@functools.lru_cache(maxsize=1024)
def _adapter(type_hint: Any) -> TypeAdapter[Any]:
    """The one type adapter of a (hashable) type hint, for every converter in the process."""
    return TypeAdapter(type_hint)


class _CompactJSONPayloadConverter(PydanticJSONPlainPayloadConverter):
    """Pydantic JSON without fields that hold their default value."""

    def to_payload(self, value: Any) -> Payload | None:
        """Serialise ``value`` with ``exclude_defaults``; decoding restores the defaults."""
        return Payload(
            metadata={"encoding": self.encoding.encode()},
            data=_ANY.to_json(value, exclude_defaults=True),
        )

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        """Validate the JSON as ``type_hint`` with the process's shared type adapter.

        Temporal builds a new converter for each serialization context (every activity
        result a workflow task applies), and the base class caches adapters per converter:
        each payload paid for building its type's adapter anew (a third of the workflow
        thread's time in a replay; ``benchmarks/replay_cost.py``).
        """
        hint: Any = Any if type_hint is None else type_hint
        try:
            hash(hint)
        except TypeError:
            return TypeAdapter(hint).validate_json(payload.data)
        return _adapter(hint).validate_json(payload.data)


class _EncryptedPayloadConverter(EncodingPayloadConverter):
    """Refuses encrypted payloads that reach conversion still sealed, with the fix.

    A payload is still sealed here only when the process has no codec (no key file).
    Without this converter Temporal reports ``KeyError: Unknown payload encoding``, which
    says nothing about the missing key file.
    """

    @property
    def encoding(self) -> str:
        """``binary/encrypted``, the encoding of :class:`~adk_temporal.codec.EncryptionCodec`."""
        return "binary/encrypted"

    def to_payload(self, value: Any) -> Payload | None:
        """Never encodes: sealing is the codec's job."""
        return None

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        """Raise :class:`~adk_temporal.errors.EncryptionError` naming the key id."""
        key_id = payload.metadata.get("encryption-key-id", b"?").decode(errors="replace")
        raise EncryptionError(
            f"this payload is encrypted (key {key_id!r}) and this process has no key file; "
            "pass --encryption-key-file or set ADK_ENCRYPTION_KEY_FILE (library: "
            "adk_data_converter(codec=EncryptionCodec.from_file(path)))"
        )


class AdkPayloadConverter(CompositePayloadConverter):
    """Temporal's default payload converters, with compact pydantic JSON.

    ``google.genai`` types declare dozens of optional fields, and our events carry empty
    maps and flags: written with their defaults, a one-line text part costs ~700 bytes of
    history and an event ~400. Fields holding their default are left out (a map filled in
    place is not its default, so no delta is ever dropped), and decoding restores them.
    """

    def __init__(self) -> None:
        compact = _CompactJSONPayloadConverter()
        super().__init__(
            *(
                compact if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            ),
            _EncryptedPayloadConverter(),
        )


def adk_data_converter(
    existing: DataConverter | None = None, *, codec: PayloadCodec | None = None
) -> DataConverter:
    """``existing`` (or the default converter) with :class:`AdkPayloadConverter`.

    The payload converter always changes, because the default JSON converter cannot encode
    the bytes inside ``types.Content``. A user's failure converter is kept, and so is the
    codec of ``existing`` unless ``codec`` replaces it.

    With a codec, Temporal's default failure converter is swapped for the one that moves
    failure messages and stack traces into an encoded payload: a tool's error message can
    quote its arguments, and the codec exists to keep those out of history.

    Args:
        existing: The converter to start from; ``None`` for Temporal's default.
        codec: A payload codec, e.g. :class:`~adk_temporal.codec.EncryptionCodec`.
    """
    base = existing or DataConverter.default
    payload_codec = codec if codec is not None else base.payload_codec
    failure_converter_class = base.failure_converter_class
    if payload_codec is not None and failure_converter_class is DefaultFailureConverter:
        failure_converter_class = DefaultFailureConverterWithEncodedAttributes
    return dataclasses.replace(
        base,
        payload_converter_class=AdkPayloadConverter,
        payload_codec=payload_codec,
        failure_converter_class=failure_converter_class,
    )
