"""The data converter of adk-temporal: pydantic JSON without default-valued fields.

Clients only need this module (not the worker's plugin), which keeps commands that merely
start or answer invocations light.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_core import SchemaSerializer, core_schema
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

__all__ = ["AdkPayloadConverter", "adk_data_converter"]

_ANY = SchemaSerializer(core_schema.any_schema())


class _CompactJSONPayloadConverter(PydanticJSONPlainPayloadConverter):
    """Pydantic JSON without fields that hold their default value."""

    def to_payload(self, value: Any) -> Payload | None:
        """Serialise ``value`` with ``exclude_defaults``; decoding restores the defaults."""
        return Payload(
            metadata={"encoding": self.encoding.encode()},
            data=_ANY.to_json(value, exclude_defaults=True),
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
            )
        )


def adk_data_converter(existing: DataConverter | None = None) -> DataConverter:
    """``existing`` (or the default converter) with :class:`AdkPayloadConverter`.

    Keeps a user's codec and failure converter; only the payload converter changes, because
    the default JSON converter cannot encode the bytes inside ``types.Content``.
    """
    base = existing or DataConverter.default
    return dataclasses.replace(base, payload_converter_class=AdkPayloadConverter)
