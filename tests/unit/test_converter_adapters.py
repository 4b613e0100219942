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


class _Counted(TypeAdapter[Any]):
    built = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).built += 1
        super().__init__(*args, **kwargs)


def test_converters_built_per_context_build_one_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding the same type with fresh converters builds its adapter once."""
    monkeypatch.setattr(converter, "TypeAdapter", _Counted)
    converter._adapter.cache_clear()
    event = Event(author="model", invocation_id="i-1")
    payload = AdkPayloadConverter().to_payloads([event])[0]
    decoded = [AdkPayloadConverter().from_payloads([payload], [Event])[0] for _ in range(3)]
    converter._adapter.cache_clear()
    assert decoded == [event] * 3
    assert _Counted.built == 1


def test_unhashable_hint_still_decodes() -> None:
    """A hint that cannot key the cache (metadata in a dict) is validated all the same."""
    hint: Any = Annotated[list[int], {"unit": "ms"}]
    with pytest.raises(TypeError):
        hash(hint)
    payload = AdkPayloadConverter().to_payloads([[1, 2]])[0]
    assert AdkPayloadConverter().from_payloads([payload], [hint]) == [[1, 2]]
