"""``Workflow``: a graph of nodes run as one agent (ADK 2's ``Workflow``).

A workflow is itself a node, so a graph may hold another; and it is an agent, so an
:class:`~adk_temporal.app.App` serves it, a runner or a client starts it by name, and its
events are authored by it (an LLM agent node's by that agent). Its shape is described to
the flow (:meth:`Workflow.spec`) with the rest of the agent tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agents import BaseAgent
from ..flow.graph_spec import EdgeSpec, GraphSpec, NodeKind, NodeSpec
from ..flow.node_retry import RetryConfig
from ._agent_nodes import AgentNode, ToolNode
from ._graph import Graph
from ._nodes import START, BaseNode, JoinNode
from ._render import mermaid

__all__ = ["Workflow"]


class Workflow(BaseNode, BaseAgent):
    """A graph of nodes: functions, joins, agents, tools and nested workflows.

    Args:
        name: The workflow's name: a node name, and the author of its nodes' events.
        edges: Edge items: :class:`~adk_temporal.workflow.Edge` values, or chains such as
            ``(START, a, (b, c), join, {"yes": d, "no": e})`` (a tuple fans out, a dict
            routes).
        max_concurrency: How many of its nodes run at once (``None`` or ≤ 0: no limit).
        description: One line about what it does.
        rerun_on_resume: Rerun when a pause inside it is answered (ADK's default: yes).
        retry_config: How the workflow, as a node of another, is retried.
        timeout: Seconds the workflow may take as a node of another.

    Raises:
        WorkflowConfigurationError: An edge item is malformed.
        GraphValidationError: The graph breaks one of ADK's rules.
    """

    def __init__(
        self,
        *,
        name: str,
        edges: Sequence[Any] = (),
        max_concurrency: int | None = None,
        description: str = "",
        rerun_on_resume: bool = True,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
    ) -> None:
        BaseNode.__init__(
            self,
            name,
            description=description,
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
        )
        self.edges = list(edges)
        self.max_concurrency = max_concurrency
        self.graph = Graph.parse(self.edges)
        children = [
            n.agent if isinstance(n, AgentNode) else n
            for n in self.graph.nodes
            if isinstance(n, AgentNode | Workflow)
        ]
        BaseAgent.__init__(self, name, description=description, sub_agents=children)

    def find(self, names: Sequence[str]) -> BaseNode:
        """The node at ``names`` below this workflow (through nested workflows).

        Raises:
            KeyError: No node is there.
        """
        current: BaseNode = self
        for name in names:
            if not isinstance(current, Workflow):
                raise KeyError(name)
            current = current.graph.node(name)
        return current

    def mermaid(self) -> str:
        """The graph drawn as a Mermaid flowchart (routes on their edges)."""
        return mermaid(self.spec())

    def spec(self) -> GraphSpec:
        """The graph as the flow schedules it."""
        return GraphSpec(
            name=self.name,
            nodes=[_node_spec(n) for n in self.graph.nodes if n is not START],
            edges=[
                EdgeSpec(
                    source=e.from_node.name,
                    target=e.to_node.name,
                    routes=None
                    if e.route is None
                    else list(e.route)
                    if isinstance(e.route, list)
                    else [e.route],
                )
                for e in self.graph.edges
            ],
            terminals=sorted(self.graph.terminals),
            max_concurrency=self.max_concurrency,
        )


def _node_spec(node: BaseNode) -> NodeSpec:
    kind: NodeKind = "function"
    if isinstance(node, Workflow):
        kind = "workflow"
    elif isinstance(node, JoinNode):
        kind = "join"
    elif isinstance(node, AgentNode):
        kind = "agent"
    elif isinstance(node, ToolNode):
        kind = "tool"
    return NodeSpec(
        name=node.name,
        kind=kind,
        rerun_on_resume=node.rerun_on_resume,
        retry=node.retry_config,
        timeout=node.timeout,
        wait_for_output=node.wait_for_output,
        graph=node.spec() if isinstance(node, Workflow) else None,
        agent=node.agent.name if isinstance(node, AgentNode) else None,
    )
