"""The values along a graph workflow's edges, as they cross history.

A value larger than :data:`INLINE_VALUE_BYTES` travels as the id of the stored event whose
output it is, so a node's history costs the same whatever its output weighs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, Field

__all__ = [
    "INLINE_VALUE_BYTES",
    "InlineValue",
    "JoinedValue",
    "MessageValue",
    "NodeValue",
    "StoredValue",
]

INLINE_VALUE_BYTES = 1024
"""The largest node output (JSON bytes) that crosses history as it is; a larger one
crosses as the id of its stored output event."""


class InlineValue(BaseModel):
    """A value carried as it is (``None`` included)."""

    kind: Literal["inline"]
    value: Any = None


class StoredValue(BaseModel):
    """The output of the stored event ``event_id``."""

    kind: Literal["stored"]
    event_id: str


class MessageValue(BaseModel):
    """The invocation's user message (what a graph's first nodes receive)."""

    kind: Literal["message"]


class JoinedValue(BaseModel):
    """A join's input: each predecessor's output by name."""

    kind: Literal["joined"]
    values: dict[str, NodeValue]


NodeValue: TypeAlias = Annotated[
    InlineValue | StoredValue | MessageValue | JoinedValue, Field(discriminator="kind")
]
"""A value along an edge."""


JoinedValue.model_rebuild()
