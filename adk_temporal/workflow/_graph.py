"""Edges and the graph they form: chains, fan-outs, routing maps, and their checks.

Ports ADK 2.13's ``google/adk/workflow/_graph.py``, ``utils/_graph_parser.py`` and
``utils/_graph_validation.py``: an edge item is an :class:`Edge` or a chain tuple whose
elements are nodes, tuples of nodes (a fan-out) or routing maps (``{route: node}``); the
graph must start at ``START``, reach every node, name each node once, and close every cycle
through a routed edge. Which edges a finished node follows
is the flow's (:mod:`adk_temporal.flow.graph`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import GraphValidationError, WorkflowConfigurationError
from ..flow.graph_spec import DEFAULT_ROUTE, RouteValue
from ._build import build_node
from ._nodes import START, BaseNode

__all__ = ["DEFAULT_ROUTE", "Edge", "Graph", "RouteValue"]


@dataclass
class Edge:
    """An edge of the graph: ``from_node`` → ``to_node``, followed when the route the
    source chose matches ``route`` (one value or a list); ``None``: always followed."""

    from_node: Any
    to_node: Any
    route: RouteValue | list[RouteValue] | None = None


@dataclass
class Graph:
    """The checked graph: its nodes (``START`` first), edges and terminal node names."""

    nodes: list[BaseNode] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    terminals: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, items: Sequence[Any]) -> Graph:
        """The graph of a workflow's edge items, checked.

        Raises:
            WorkflowConfigurationError: An item is malformed.
            GraphValidationError: The graph breaks one of ADK's rules.
        """
        built: dict[int, BaseNode] = {}

        def get(like: Any) -> BaseNode:
            if isinstance(like, BaseNode) or (isinstance(like, str) and like == "START"):
                return build_node(like)
            return built.setdefault(id(like), build_node(like))

        edges: list[Edge] = []
        for item in items:
            if isinstance(item, Edge):
                edges.append(Edge(get(item.from_node), get(item.to_node), item.route))
            elif isinstance(item, tuple):
                edges += _chain(item, get)
            else:
                raise WorkflowConfigurationError(f"Invalid edge type: {type(item)}")
        nodes = list({id(n): n for e in edges for n in (e.from_node, e.to_node)}.values())
        graph = cls(nodes=nodes, edges=edges)
        graph.terminals = _validate(nodes, edges)
        return graph

    def node(self, name: str) -> BaseNode:
        """The node called ``name``.

        Raises:
            KeyError: The graph has no such node.
        """
        for candidate in self.nodes:
            if candidate.name == name:
                return candidate
        raise KeyError(name)

    def predecessors(self, name: str) -> list[str]:
        """The names of the nodes with an edge to ``name``, in edge order, once each."""
        return list(dict.fromkeys(e.from_node.name for e in self.edges if e.to_node.name == name))


def _flatten(element: Any) -> list[Any]:
    if isinstance(element, dict):
        return [n for target in element.values() for n in _flatten(target)]
    if isinstance(element, tuple):
        return list(element)
    return [element]


def _chain(chain: tuple[Any, ...], get: Any) -> list[Edge]:
    edges: list[Edge] = []
    for source, target in itertools.pairwise(chain):
        if not isinstance(target, dict):
            edges += [Edge(get(a), get(b)) for a in _flatten(source) for b in _flatten(target)]
            continue
        if isinstance(source, dict):
            raise WorkflowConfigurationError(
                "Consecutive routing maps are not allowed in a chain. Split them into "
                "separate edge items."
            )
        if not target:
            raise WorkflowConfigurationError(
                "Routing map must not be empty. Provide at least one route -> node mapping."
            )
        for route, to in target.items():
            if not isinstance(route, bool | int | str):
                raise WorkflowConfigurationError(
                    f"Invalid routing map key: {route!r} (type {type(route).__name__}). "
                    "Keys must be RouteValue (str, int, or bool)."
                )
            edges += [Edge(get(a), get(b), route) for a in _flatten(source) for b in _flatten(to)]
    return edges


def _routes(route: RouteValue | list[RouteValue] | None) -> set[RouteValue | None]:
    if route is None:
        return {None}
    return set(route) if isinstance(route, list) else {route}


def _validate(nodes: list[BaseNode], edges: list[Edge]) -> set[str]:
    names = [n.name for n in nodes]
    duplicates = sorted(n for n, count in Counter(names).items() if count > 1)
    if duplicates:
        raise GraphValidationError(
            f"Graph validation failed. Duplicate node names found: {duplicates}. Reuse the "
            "same node object, or give distinct nodes distinct names."
        )
    if START.name not in names:
        raise GraphValidationError(
            f"Graph validation failed. START node (name: '{START.name}') not found in graph nodes."
        )
    _check_edges(edges)
    _check_reach(edges, set(names))
    _check_cycles(edges, names)
    sources = {e.from_node.name for e in edges}
    return {n for n in names if n != START.name and n not in sources}


def _check_edges(edges: list[Edge]) -> None:
    seen: dict[tuple[str, str], set[RouteValue | None]] = {}
    for edge in edges:
        a, b = edge.from_node.name, edge.to_node.name
        if a == START.name and edge.route is not None:
            raise GraphValidationError(
                f"Graph validation failed. Edges from START must not have routes (edge to "
                f"{b} has route {edge.route})."
            )
        if isinstance(edge.route, list) and DEFAULT_ROUTE in edge.route:
            raise GraphValidationError(
                f"Graph validation failed. DEFAULT_ROUTE cannot be combined with other routes "
                f"in a list (edge from={a}, to={b}). Use a separate edge for DEFAULT_ROUTE."
            )
        new = _routes(edge.route)
        known = seen.setdefault((a, b), set())
        if known and (None in known or None in new or not known.isdisjoint(new)):
            raise GraphValidationError(
                f"Graph validation failed. Duplicate edge found: from={a}, to={b}"
            )
        known.update(new)


def _check_reach(edges: list[Edge], names: set[str]) -> None:
    adjacent: dict[str, set[str]] = {n: set() for n in names}
    for edge in edges:
        adjacent[edge.from_node.name].add(edge.to_node.name)
    if any(e.to_node.name == START.name for e in edges):
        raise GraphValidationError(
            "Graph validation failed. START node must not have incoming edges."
        )
    reached: set[str] = set()
    stack = [START.name]
    while stack:
        current = stack.pop()
        if current not in reached:
            reached.add(current)
            stack += adjacent[current] - reached
    if names - reached:
        raise GraphValidationError(
            f"Graph validation failed. The following nodes are unreachable from START: "
            f"{sorted(names - reached)}"
        )


def _check_cycles(edges: list[Edge], names: list[str]) -> None:
    adjacent: dict[str, list[str]] = {n: [] for n in names}
    for edge in edges:
        if edge.route is None:
            adjacent[edge.from_node.name].append(edge.to_node.name)
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        for nxt in adjacent[name]:
            if nxt in path:
                cycle = [*path[path.index(nxt) :], nxt]
                raise GraphValidationError(
                    f"Graph validation failed. Unconditional cycle detected: "
                    f"{' -> '.join(cycle)}. Cycles must include at least one conditional "
                    "(routed) edge to avoid infinite loops."
                )
            if nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(name)

    for name in names:
        if name not in done:
            visit(name, [name])
