"""``Context``: what a graph node's code sees while it runs on the worker.

The workflow part of ADK 2.13's ``google/adk/agents/context.py``: the session state (reads
see the node's own writes; writes are recorded as the node's state delta), the route and
output the node chooses, where it runs (``node_path``, ``run_id``, ``attempt_count``), the
answers to its pauses (``resume_inputs``), and ``run_node`` to run another node as its
child.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..events import EventActions
from ..state import State

__all__ = ["Context", "RunChild"]

RunChild = Callable[["Context", Any, Any, "str | None"], Awaitable[Any]]
"""How a context runs a child node: ``(parent, node, node_input, run_id) -> output``."""


class Context:
    """A node run's view of its invocation (ADK 2's ``Context``, workflow part).

    Args:
        state: The session state the node starts from (``temp:`` values included).
        node_path: The run's path, ``wf@1/step@2``.
        invocation_id: The invocation's id.
        attempt_count: Which attempt of the run this is (1-based).
        resume_inputs: Answers to the node's pauses, by interrupt id.
        rerun_on_resume: Whether the node reruns on resume (``run_node`` needs it).
        run_child: Runs a child node (``None``: ``run_node`` is not available here).
    """

    def __init__(
        self,
        *,
        state: dict[str, Any],
        node_path: str,
        invocation_id: str,
        attempt_count: int = 1,
        resume_inputs: dict[str, Any] | None = None,
        rerun_on_resume: bool = False,
        run_child: RunChild | None = None,
    ) -> None:
        self._actions = EventActions()
        self._state = State(dict(state), self._actions.state_delta)
        self.node_path = node_path
        self.invocation_id = invocation_id
        self.attempt_count = attempt_count
        self.resume_inputs: dict[str, Any] = dict(resume_inputs or {})
        self.rerun_on_resume = rerun_on_resume
        self._run_child = run_child
        self._output: Any = None
        self.output_emitted = False
        self._route: Any = None
        self.route_emitted = False

    @property
    def state(self) -> State:
        """The session state: assignment records a delta that rides on the next event."""
        return self._state

    @property
    def actions(self) -> EventActions:
        """The actions the node's next event carries (its state delta)."""
        return self._actions

    @property
    def run_id(self) -> str:
        """The run's number among runs of this node, as a string (``"2"`` for ``step@2``)."""
        return self.node_path.rpartition("@")[2]

    @property
    def output(self) -> Any:
        """The node's output (at most one per run)."""
        return self._output

    @output.setter
    def output(self, value: Any) -> None:
        if self._output is not None:
            raise ValueError("Output already set. A node can produce at most one output.")
        self._output = value

    @property
    def route(self) -> Any:
        """The route that selects the node's outgoing edges (a value or a list)."""
        return self._route

    @route.setter
    def route(self, value: Any) -> None:
        self._route = value
        self.route_emitted = False

    async def run_node(
        self, node: Any, node_input: Any = None, *, run_id: str | None = None
    ) -> Any:
        """Run ``node`` as a child of this node and return its output.

        A child that finished in an earlier run of this node (before a crash or a pause)
        is not run again: its stored output is returned.

        Raises:
            ValueError: This node does not rerun on resume (ADK requires it), or children
                cannot be run here.
        """
        if not self.rerun_on_resume:
            raise ValueError(
                "A node must have rerun_on_resume=True. Reason is that dynamically scheduled "
                "nodes might be interrupted, and the workflow wakes-up/re-runs the parent "
                "node, so it can get the child node response."
            )
        if self._run_child is None:
            raise ValueError(f"node {self.node_path} cannot run child nodes here")
        return await self._run_child(self, node, node_input, run_id)
