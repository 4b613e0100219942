"""What crosses the boundary of a graph workflow's node step: its input and result.

A node step's input
names the node and carries the values along its edges; a value larger than
:data:`INLINE_VALUE_BYTES` travels as the id of the stored event whose output it is, so a
node's history costs the same whatever its output weighs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from .graph_spec import RouteValue
from .messages import InvocationRef

__all__ = [
    "INLINE_VALUE_BYTES",
    "InlineValue",
    "JoinedValue",
    "MessageValue",
    "NodeFailed",
    "NodeRan",
    "NodeRequest",
    "NodeStepInput",
    "NodeStepResult",
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


class NodeRequest(BaseModel):
    """A pause a node raised (``RequestInput``): its request event is stored."""

    interrupt_id: str
    message: str = ""
    payload: Any = None
    response_schema: dict[str, Any] | None = None


class NodeStepInput(BaseModel):
    """Input of the node step: run node ``names[-1]`` once, as run ``path``."""

    ref: InvocationRef
    names: list[str]
    """The workflows from the root down to the node, then the node."""
    path: str
    """The run's node path (``wf@1/step@2``)."""
    author: str
    input: NodeValue
    event_id: str
    """The base the run's event ids are derived from: a retried step stores nothing twice."""
    timestamp: float = 0.0
    attempt: int = 1
    output_for: list[str] = Field(default_factory=list)
    temp_state: dict[str, Any] = Field(default_factory=dict)
    resume_inputs: dict[str, Any] = Field(default_factory=dict)


class NodeRan(BaseModel):
    """The node ran: its output (``None``: none), route, ``temp:`` writes and pauses."""

    kind: Literal["ran"]
    output: NodeValue | None = None
    route: RouteValue | list[RouteValue] | None = None
    temp_delta: dict[str, Any] = Field(default_factory=dict)
    requests: list[NodeRequest] = Field(default_factory=list)


class NodeFailed(BaseModel):
    """The node raised; its error event is stored."""

    kind: Literal["failed"]
    error_type: str
    error_names: list[str]
    """The error's class and every class it inherits from, by name (for ``RetryConfig``)."""
    message: str = ""


NodeStepResult: TypeAlias = Annotated[NodeRan | NodeFailed, Field(discriminator="kind")]
"""Result of the node step, tagged by ``kind``."""

JoinedValue.model_rebuild()
