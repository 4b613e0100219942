"""Every converter of the process shares its type adapters.

Temporal builds a payload converter for each serialization context (each activity result a
workflow task applies, in replay too), so adapters cached per converter were built again for
every payload.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import TypeAdapter

from adk_temporal import converter
from adk_temporal.converter import AdkPayloadConverter
from adk_temporal.events import Event


def test_converters_built_per_context_build_one_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding the same type with fresh converters builds its adapter once."""
    built: list[Any] = []

    def counted(hint: Any) -> TypeAdapter[Any]:
        built.append(hint)
        return TypeAdapter(hint)

    monkeypatch.setattr(converter, "TypeAdapter", counted)
    converter._adapter.cache_clear()
    event = Event(author="model", invocation_id="i-1")
    payload = AdkPayloadConverter().to_payloads([event])[0]
    decoded = [AdkPayloadConverter().from_payloads([payload], [Event])[0] for _ in range(3)]
    converter._adapter.cache_clear()
    assert decoded == [event] * 3
    assert built == [Event]


def test_unhashable_hint_still_decodes() -> None:
    """A hint that cannot key the cache (metadata in a dict) is validated all the same."""
    hint: Any = Annotated[list[int], {"unit": "ms"}]
    with pytest.raises(TypeError):
        hash(hint)
    payload = AdkPayloadConverter().to_payloads([[1, 2]])[0]
    assert AdkPayloadConverter().from_payloads([payload], [hint]) == [[1, 2]]
