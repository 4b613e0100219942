"""The pure rules of ADK 2 graphs: edge parsing and checks, route matching, retry rules
and back-off, answer unwrapping (ported from google-adk 2.13's ``workflow/_graph.py``,
``utils/_graph_validation.py``, ``utils/_retry_utils.py``, ``utils/_rehydration_utils.py``),
how a run's graph is shown, and how its scheduling state is carried across continue-as-new."""

from __future__ import annotations

from typing import Any

import pytest

from adk_temporal.errors import GraphValidationError, WorkflowConfigurationError
from adk_temporal.flow.graph import _next_nodes, common_branch
from adk_temporal.flow.graph_state import GraphCarry, Loop, Trigger
from adk_temporal.flow.node_retry import RetryConfig, retry_delay, should_retry
from adk_temporal.flow.node_values import InlineValue
from adk_temporal.flow.pauses import unwrap_answer
from adk_temporal.workflow import DEFAULT_ROUTE, START, Edge, FunctionNode, JoinNode, Workflow
from adk_temporal.workflow._render import graph_view, mermaid


def a(node_input: Any) -> Any:
    return node_input


def b(node_input: Any) -> Any:
    return node_input


def c(node_input: Any) -> Any:
    return node_input


def test_routing_map_and_fan_out_become_edges() -> None:
    """A tuple fans out and a dict routes; terminal nodes are those with no outgoing edge."""
    graph = Workflow(name="w", edges=[(START, a, {"x": (b, c), DEFAULT_ROUTE: c})]).spec()
    assert [(e.source, e.target, e.routes) for e in graph.edges] == [
        ("__START__", "a", None),
        ("a", "b", ["x"]),
        ("a", "c", ["x"]),
        ("a", "c", [DEFAULT_ROUTE]),
    ]
    assert graph.terminals == ["b", "c"]


def test_routes_match_values_lists_and_fall_back_to_default() -> None:
    """A route selects its edges, a list of routes each of theirs, the default edge only
    when nothing else matched, and a route with no edge ends the branch."""
    graph = Workflow(
        name="w", edges=[(START, a, {"x": b, True: c}), Edge(a, JoinNode(name="j"), DEFAULT_ROUTE)]
    ).spec()
    assert _next_nodes(graph, "a", "x") == ["b"]
    assert _next_nodes(graph, "a", ["x", True]) == ["b", "c"]
    assert _next_nodes(graph, "a", "nope") == ["j"]
    no_default = Workflow(name="v", edges=[(START, a, {"x": b})]).spec()
    assert _next_nodes(no_default, "a", "nope") == []


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([(START, a), (b, c)], "unreachable from START"),
        ([(START, a, b, a)], "Unconditional cycle detected"),
        ([Edge(START, a, "r")], "Edges from START must not have routes"),
        ([(START, a, b), (a, b)], "Duplicate edge"),
        ([(START, a), (a, FunctionNode(func=b, name="a"))], "Duplicate node names"),
        ([Edge(START, a), Edge(a, b, ["x", DEFAULT_ROUTE])], "DEFAULT_ROUTE cannot be combined"),
    ],
)
def test_bad_graphs_are_refused_as_adk_refuses_them(edges: list[Any], message: str) -> None:
    """Each of ADK's graph rules refuses its graph with a typed error naming the problem."""
    with pytest.raises(GraphValidationError, match=message):
        Workflow(name="w", edges=edges)


def test_bad_declarations_are_typed_errors() -> None:
    """A malformed edge item or node name is a WorkflowConfigurationError (a ValueError)."""
    with pytest.raises(WorkflowConfigurationError, match="Invalid edge type"):
        Workflow(name="w", edges=["nope"])
    with pytest.raises(ValueError, match="valid Python identifier"):
        FunctionNode(func=a, name="not valid")
    # pydantic wraps it in its ValidationError (a ValueError), as in ADK.
    with pytest.raises(ValueError, match="exceptions must contain"):
        RetryConfig(exceptions=[42])  # type: ignore[list-item]


def test_only_listed_exceptions_and_their_subclasses_are_retried() -> None:
    """A listed class (by name) and its subclasses are retried, others not, and never past
    ``max_attempts`` (5 by default)."""
    config = RetryConfig(exceptions=[LookupError])
    assert should_retry(config, ["KeyError", "LookupError", "Exception"], 1)
    assert not should_retry(config, ["ValueError", "Exception"], 1)
    assert should_retry(RetryConfig(), ["ValueError"], 4)
    assert not should_retry(RetryConfig(), ["ValueError"], 5)
    assert not should_retry(None, ["ValueError"], 1)


def test_back_off_doubles_is_capped_and_jitters_within_bounds() -> None:
    """ADK's back-off: initial × factor^(attempt-1), capped, ± jitter × delay."""
    exact = RetryConfig(initial_delay=1.0, jitter=0.0, max_delay=5.0)
    assert [retry_delay(exact, n, 0.5) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    jittered = RetryConfig(initial_delay=2.0, jitter=0.5)
    assert retry_delay(jittered, 1, 0.0) == 1.0
    assert retry_delay(jittered, 1, 0.999999) == pytest.approx(3.0, rel=1e-5)


def test_answers_are_unwrapped_as_adk_hands_them_over() -> None:
    """A lone ``{"result": x}`` gives x, a JSON string parsed; anything else as sent."""
    assert unwrap_answer({"result": '"bob"'}) == "bob"
    assert unwrap_answer({"result": "not json"}) == "not json"
    assert unwrap_answer({"result": 3}) == 3
    assert unwrap_answer({"result": 1, "more": 2}) == {"result": 1, "more": 2}


def test_a_join_runs_on_the_branches_common_prefix() -> None:
    """A join's branch is the dot-separated prefix its predecessors' branches share."""
    assert common_branch(["p@1.a@1", "p@1.b@1"]) == "p@1"
    assert common_branch(["a@1", "b@1"]) == ""


def test_a_graph_view_lists_nested_nodes_pending_unless_published() -> None:
    """Every node, nested ones named below the root, is listed; a node the run did not
    publish is pending; the drawing colours only the nodes that ran."""
    inner = Workflow(name="inner", edges=[(START, b)])
    graph = Workflow(name="outer", edges=[(START, a, inner, c)])
    view = graph_view(graph.spec(), {"a": "done", "inner": "running", "inner/b": "waiting"})
    assert [(n.name, n.kind, n.status) for n in view.nodes] == [
        ("a", "function", "done"),
        ("inner", "workflow", "running"),
        ("inner/b", "function", "waiting"),
        ("c", "function", "pending"),
    ]
    assert "  class inner__b waiting" in view.mermaid.splitlines()
    assert "  class a done" in view.mermaid.splitlines()
    assert "class c" not in view.mermaid
    assert "classDef failed" not in view.mermaid
    assert graph.mermaid() == mermaid(graph.spec())


def test_a_graph_carry_keeps_only_the_outputs_still_read() -> None:
    """The carried state of a graph run crosses history as names, counters and the outputs
    a join or the end still reads, and comes back as the same scheduling state."""
    loop = Loop(
        triggers={"c": [Trigger(input=InlineValue(kind="inline", value=1), branch="b@1")]},
        completed={"a", "b"},
        outputs={"a": InlineValue(kind="inline", value="x"), "b": InlineValue(kind="inline")},
        arrivals={"join": {"b"}},
        runs={"a": 1, "b": 2},
    )
    carried = loop.carry({"b"}, {"a": "done", "b": "done"})
    back = GraphCarry.model_validate_json(carried.model_dump_json())
    assert set(back.outputs) == {"b"} and back.statuses == {"a": "done", "b": "done"}
    restored = Loop.restored(back)
    assert (restored.completed, restored.arrivals, restored.runs) == (
        {"a", "b"},
        {"join": {"b"}},
        {"a": 1, "b": 2},
    )
    assert restored.triggers["c"][0].branch == "b@1"
