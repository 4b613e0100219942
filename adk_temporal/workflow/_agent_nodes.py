"""Agents and tools as graph nodes.

An LLM agent in a graph runs as ADK 2 runs it there: its model calls and tools are the
steps today's agents make, its final answer is the node's output. A tool in a graph is
called with the node's input as its arguments, and its response is the node's output
(ADK 2's ``_ToolNode``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._nodes import BaseNode

if TYPE_CHECKING:
    from ..agents import BaseAgent
    from ..tools import FunctionTool

__all__ = ["AgentNode", "ToolNode"]


class AgentNode(BaseNode):
    """Runs an agent as a node; it reruns when its pause is answered (ADK's default).

    Args:
        agent: The agent.
    """

    def __init__(self, agent: BaseAgent) -> None:
        super().__init__(agent.name, description=agent.description, rerun_on_resume=True)
        self.agent = agent


class ToolNode(BaseNode):
    """Calls a tool with the node's input (a dict of arguments) as a node.

    Args:
        tool: The tool.
    """

    def __init__(self, tool: FunctionTool) -> None:
        super().__init__(tool.name, description=tool.description)
        self.tool = tool
