"""Agents and tools as graph nodes.

An LLM agent in a graph runs as ADK 2 runs a ``single_turn`` agent node there
(``google/adk/workflow/_llm_agent_wrapper.py``): its model calls and tools are the steps
today's agents make (the invocation's own step loop, ``flow.invocation``), its events are
authored by the agent on the node's path, its final answer is the node's output. A tool in a
graph is called with the node's input as its arguments, the node's context as its tool
context, and what it returns is the node's output (ADK 2's ``_tool_node.py``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel

from ._nodes import BaseNode

if TYPE_CHECKING:
    from ..agents import BaseAgent
    from ..tools import FunctionTool

__all__ = ["AgentNode", "ToolNode", "tool_arguments"]


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


def _loose(node_input: Any) -> Any:
    """The input as a tool may take it: a message as its text, a model dumped, a string
    holding a JSON object parsed (``None`` when blank)."""
    if isinstance(node_input, types.Content):
        node_input = "".join(p.text for p in node_input.parts or [] if p.text)
    if isinstance(node_input, BaseModel):
        return node_input.model_dump()
    if not isinstance(node_input, str):
        return node_input
    text = node_input.strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def tool_arguments(tool: FunctionTool, ctx: Any, node_input: Any) -> dict[str, Any]:
    """A tool node's arguments from its input, as ADK's ``_ToolNode`` makes them: a dict as
    it is, another value for the tool's only (or only required) parameter, and a missing
    required parameter read from state.

    Raises:
        TypeError: The input is no dict and the tool has no single parameter to take it.
    """
    schema = tool.parameters_schema() or {}
    params = list(schema.get("properties") or ())
    required = list(schema.get("required") or ())
    args = _loose(node_input)
    if args is None:
        args = {}
    elif isinstance(args, dict):
        args = dict(args)
    elif len(params) == 1:
        args = {params[0]: args}
    elif len(required) == 1:
        args = {required[0]: args}
    else:
        raise TypeError(
            "The input to ToolNode must be a dictionary of tool arguments or None, but got "
            f"{type(args)}."
        )
    for name in required:
        if name not in args and name in ctx.state:
            args[name] = ctx.state[name]
    return args
