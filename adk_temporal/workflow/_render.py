"""A graph workflow drawn as Mermaid text: its nodes, edges and routes.

ADK's dev server draws a workflow's graph; a Mermaid ``flowchart`` is the text form that
docs, the console and most markdown viewers render.
"""

from __future__ import annotations

import json

from ..flow.graph_spec import GraphSpec

__all__ = ["mermaid"]

_SHAPES = {
    "function": ("[", "]"),
    "join": ("{{", "}}"),
    "agent": ("([", "])"),
    "tool": ("[/", "/]"),
    "workflow": ("[[", "]]"),
}


def mermaid(graph: GraphSpec) -> str:
    """``graph`` as a Mermaid flowchart: one shape per node kind (a join ``{{…}}``, an
    agent ``([…])``, a tool ``[/…/]``, a nested workflow ``[[…]]`` drawn inside a
    subgraph), each routed edge labelled with its routes."""
    lines = ["flowchart TD"]
    _draw(graph, "", lines)
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
