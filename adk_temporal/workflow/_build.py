"""Making nodes of what a graph's edges name: functions, nodes, agents and tools.

ADK 2.13's ``build_node`` (``google/adk/workflow/utils/_workflow_graph_utils.py``) and the
``node`` decorator (``_node.py``).
"""

from __future__ import annotations

from typing import Any

from ..agents import BaseAgent
from ..errors import WorkflowConfigurationError
from ..flow.node_retry import RetryConfig
from ..tools import FunctionTool
from ._agent_nodes import AgentNode, ToolNode
from ._nodes import START, BaseNode, FunctionNode

__all__ = ["build_node", "node"]


def build_node(node_like: Any) -> BaseNode:
    """``node_like`` as a node: a node as it is, ``"START"`` as :data:`START`, a function
    as a :class:`FunctionNode`, an agent or a tool as the node that runs it.

    Raises:
        WorkflowConfigurationError: It is none of these.
    """
    if isinstance(node_like, str) and node_like == "START":
        return START
    if isinstance(node_like, BaseNode):
        return node_like
    if isinstance(node_like, BaseAgent):
        return AgentNode(node_like)
    if isinstance(node_like, FunctionTool):
        return ToolNode(node_like)
    if callable(node_like):
        return FunctionNode(func=node_like)
    raise WorkflowConfigurationError(
        f"Invalid node type: {type(node_like)}. Node must be a BaseNode, a BaseAgent, a "
        "BaseTool, or a callable."
    )


def node(
    node_like: Any = None,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
) -> Any:
    """Make a node of a function (as a decorator, with or without arguments) or of any
    node-like value, overriding what is given (ADK 2's ``node``).

    Args:
        node_like: The function, node, agent or tool (``None``: return a decorator).
        name: Overrides the node's name.
        rerun_on_resume: Overrides whether it reruns when its pause is answered.
        retry_config: Overrides its retry configuration.
        timeout: Overrides its timeout, in seconds.

    Returns:
        The node, or a decorator making one.
    """
    if node_like is None:
        return lambda func: node(
            func,
            name=name,
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
        )
    overrides: dict[str, Any] = {
        key: value
        for key, value in (
            ("name", name),
            ("rerun_on_resume", rerun_on_resume),
            ("retry_config", retry_config),
            ("timeout", timeout),
        )
        if value is not None
    }
    if (
        callable(node_like)
        and not isinstance(node_like, BaseNode)
        and not _is_agent_or_tool(node_like)
    ):
        return FunctionNode(
            func=node_like,
            name=name,
            rerun_on_resume=bool(rerun_on_resume),
            retry_config=retry_config,
            timeout=timeout,
        )
    built = build_node(node_like)
    return built.with_options(**overrides) if overrides else built


def _is_agent_or_tool(value: Any) -> bool:
    return isinstance(value, BaseAgent | FunctionTool)
