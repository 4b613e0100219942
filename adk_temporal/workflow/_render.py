"""A graph workflow drawn as Mermaid text (its nodes, edges and routes), and where each
of its nodes stands in a run.

ADK's dev server draws a workflow's graph; a Mermaid ``flowchart`` is the text form that
docs, the console and most markdown viewers render. ``show`` and the console list each
node's status from what the run published (:func:`graph_view`), and colour the drawing by it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from pydantic import BaseModel

from ..flow.graph_spec import GraphSpec, NodeKind
from ..flow.graph_state import NodeStatus

__all__ = ["GraphView", "NodeView", "graph_view", "mermaid"]

_SHAPES = {
    "function": ("[", "]"),
    "join": ("{{", "}}"),
    "agent": ("([", "])"),
    "tool": ("[/", "/]"),
    "workflow": ("[[", "]]"),
}


_STATUS_STYLES: dict[NodeStatus, str] = {
    "running": "fill:#fff3cd,stroke:#b58900",
    "waiting": "fill:#cce5ff,stroke:#004085",
    "done": "fill:#d4edda,stroke:#2e7d32",
    "failed": "fill:#f8d7da,stroke:#c62828",
}


class NodeView(BaseModel):
    """One node of a graph in a run: its name below the root (``inner/step``), kind and
    status."""

    name: str
    kind: NodeKind
    status: NodeStatus


class GraphView(BaseModel):
    """A graph run as ``show`` and the console present it: every node with its status,
    and the Mermaid drawing coloured by them."""

    name: str
    nodes: list[NodeView]
    mermaid: str


def _walk(graph: GraphSpec, prefix: str = "") -> Iterator[tuple[str, NodeKind]]:
    for node in graph.nodes:
        yield f"{prefix}{node.name}", node.kind
        if node.graph is not None:
            yield from _walk(node.graph, f"{prefix}{node.name}/")


def graph_view(graph: GraphSpec, nodes: Mapping[str, NodeStatus]) -> GraphView:
    """Every node of ``graph``, nested ones included, with where it stands (``nodes``, as
    the run published them; a node the run has not started is pending)."""
    views = [NodeView(name=n, kind=k, status=nodes.get(n, "pending")) for n, k in _walk(graph)]
    return GraphView(name=graph.name, nodes=views, mermaid=mermaid(graph, nodes))


def mermaid(graph: GraphSpec, statuses: Mapping[str, NodeStatus] | None = None) -> str:
    """``graph`` as a Mermaid flowchart: one shape per node kind (a join ``{{…}}``, an
    agent ``([…])``, a tool ``[/…/]``, a nested workflow ``[[…]]`` drawn inside a
    subgraph), each routed edge labelled with its routes; with ``statuses`` (by node name
    below the root), each node that ran is coloured by its status."""
    lines = ["flowchart TD"]
    _draw(graph, "", lines)
    if statuses:
        used = [s for s in _STATUS_STYLES if s in statuses.values()]
        lines += [f"  classDef {s} {_STATUS_STYLES[s]}" for s in used]
        lines += [
            f"  class {name.replace('/', '__')} {status}"
            for name, status in statuses.items()
            if status in _STATUS_STYLES
        ]
    return "\n".join(lines)


def _draw(graph: GraphSpec, prefix: str, lines: list[str]) -> None:
    start = f"{prefix}__START__"
    lines.append(f"  {start}((START))")
    for node in graph.nodes:
        left, right = _SHAPES[node.kind]
        lines.append(f"  {prefix}{node.name}{left}{node.name}{right}")
        if node.graph is not None:
            lines.append(f"  subgraph {prefix}{node.name}_graph [{node.name}]")
            _draw(node.graph, f"{prefix}{node.name}__", lines)
            lines.append("  end")
    for edge in graph.edges:
        label = (
            ""
            if edge.routes is None
            else "|" + ", ".join(json.dumps(r) for r in edge.routes).replace('"', "'") + "|"
        )
        lines.append(f"  {prefix}{edge.source} -->{label} {prefix}{edge.target}")
