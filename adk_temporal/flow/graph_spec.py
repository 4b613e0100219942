"""A graph workflow's shape, as the flow schedules it: nodes, edges, terminals, limits.

Learnt from the worker with the agent tree (``AgentSpec.graph``), so it is in history and
a replay never depends on the worker's configuration.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel

from .node_retry import RetryConfig

__all__ = ["DEFAULT_ROUTE", "EdgeSpec", "GraphSpec", "NodeKind", "NodeSpec", "RouteValue"]

RouteValue: TypeAlias = bool | int | str
"""A route a node may choose, matched against its edges' routes."""

DEFAULT_ROUTE = "__DEFAULT__"
"""The route of an edge followed when none of the node's other routed edges matched."""

NodeKind: TypeAlias = Literal["function", "join", "tool", "agent", "workflow"]
"""What runs a node: a function step, a join, a tool, an LLM agent, a nested graph."""


class EdgeSpec(BaseModel):
    """An edge: ``source`` → ``target``, followed on ``routes`` (``None``: always)."""

    source: str
    target: str
    routes: list[RouteValue] | None = None


class NodeSpec(BaseModel):
    """A node as the flow schedules it."""

    name: str
    kind: NodeKind
    rerun_on_resume: bool = False
    retry: RetryConfig | None = None
    timeout: float | None = None
    wait_for_output: bool = False
    graph: GraphSpec | None = None
    """A nested workflow's graph."""
    agent: str | None = None
    """An LLM agent node's agent."""

    @property
    def joins(self) -> bool:
        """Whether the node waits for all its predecessors."""
        return self.kind == "join"


class GraphSpec(BaseModel):
    """A workflow's graph: nodes, edges in declaration order, terminal nodes, limits."""

    name: str
    nodes: list[NodeSpec]
    edges: list[EdgeSpec]
    terminals: list[str]
    max_concurrency: int | None = None

    def node(self, name: str) -> NodeSpec:
        """The node called ``name``.

        Raises:
            KeyError: No such node.
        """
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise KeyError(name)


NodeSpec.model_rebuild()
