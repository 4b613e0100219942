"""What crosses the boundary of a graph workflow's node step: its input and result.

A node step's input names the node and carries the values along its edges
(:mod:`.node_values`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from .graph_spec import RouteValue
from .messages import InvocationRef
from .node_values import (
    INLINE_VALUE_BYTES,
    InlineValue,
    JoinedValue,
    MessageValue,
    NodeValue,
    StoredValue,
)

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
