"""ADK 2 graph workflows, run durably: nodes, edges, routes, joins, loops and pauses.

The names of google-adk 2.13's ``google.adk.workflow`` with its behaviour: a
:class:`Workflow` is a graph of nodes (functions, :class:`JoinNode`, agents, tools, nested
workflows) whose outputs flow along :class:`Edge` values; a node chooses its outgoing
edges with ``ctx.route`` (a value, a list, a boolean; :data:`DEFAULT_ROUTE` when nothing
else matched); :class:`RetryConfig` retries a failing node, ``timeout`` fails one that runs
too long with :class:`NodeTimeoutError`; ``ctx.run_node`` runs a child node; a
:class:`RequestInput` pauses for a person. A graph written for ADK runs here with only its
imports changed.

The graph is scheduled by engine-neutral flow code (:mod:`adk_temporal.flow.graph`): on
Temporal every node is an activity, its retries and timeout are durable timers, and a
worker lost mid-node re-runs only that node; in-process the same flow runs the same steps.
"""

from __future__ import annotations

from ..errors import GraphValidationError, NodeTimeoutError, WorkflowConfigurationError
from ..flow.graph_spec import DEFAULT_ROUTE
from ..flow.node_retry import RetryConfig
from ._agent_nodes import AgentNode, ToolNode
from ._build import node
from ._context import Context
from ._graph import Edge
from ._nodes import START, BaseNode, FunctionNode, JoinNode, Node
from ._request_input import RequestInput
from ._workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "AgentNode",
    "BaseNode",
    "Context",
    "Edge",
    "FunctionNode",
    "GraphValidationError",
    "JoinNode",
    "Node",
    "NodeTimeoutError",
    "RequestInput",
    "RetryConfig",
    "ToolNode",
    "Workflow",
    "WorkflowConfigurationError",
    "node",
]
