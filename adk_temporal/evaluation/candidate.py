"""The candidate of a replay: an app's agents, changed as asked, with tools served.

The candidate is a copy of the app's agent tree (the app itself is not changed): each LLM
agent's ``before_tool_callback`` is the replay's :class:`~.served.ToolServer` and its
``after_tool_callback`` is removed (the recorded response already holds what both did);
``--model`` gives every LLM agent that names its own model another one, an instruction
file replaces one agent's instruction, and a seed becomes every model request's
``generate_content_config.seed`` (Gemini samples reproducibly with it; scripted models are
deterministic anyway). Token budgets, notifications and model limits are left out: a
replay asks nobody for anything and posts nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace

from google.genai import types

from ..agents import Agent, AgentTool, BaseAgent, BeforeToolCallback
from ..app import App
from ..tools import BaseToolset, FunctionTool
from ..usage import TokenBudgets

__all__ = ["CandidateChange", "candidate_app"]


class CandidateChange:
    """What to change in the app's agents for the candidate.

    Args:
        model: The model every LLM agent with a model of its own calls instead.
        instructions: New instruction text by agent name.
        seed: The ``generate_content_config.seed`` of every model request.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        instructions: Mapping[str, str] | None = None,
        seed: int | None = None,
    ) -> None:
        self.model = model
        self.instructions = dict(instructions or {})
        self.seed = seed

    def apply(self, agent: Agent) -> None:
        """Change the (copied) ``agent`` in place."""
        if self.model and agent.model:
            agent.model = self.model
        if agent.name in self.instructions:
            agent.instruction = self.instructions[agent.name]
        if self.seed is not None:
            config = agent.generate_content_config or types.GenerateContentConfig()
            agent.generate_content_config = config.model_copy(update={"seed": self.seed})
            request = agent.request_config or types.GenerateContentConfig()
            agent.request_config = request.model_copy(update={"seed": self.seed})


def _copy_tree(
    agent: BaseAgent,
    memo: dict[int, BaseAgent],
    change: CandidateChange,
    serve: BeforeToolCallback,
) -> BaseAgent:
    """A copy of ``agent``'s tree; an agent met twice is copied once (the registry wants
    one object per name)."""
    if id(agent) in memo:
        return memo[id(agent)]
    clone = copy.copy(agent)
    memo[id(agent)] = clone
    clone.sub_agents = [_copy_tree(a, memo, change, serve) for a in agent.sub_agents]
    if isinstance(clone, Agent):
        tools: list[FunctionTool] = []
        for tool in clone.tools:
            if isinstance(tool, AgentTool):
                tool = copy.copy(tool)
                tool.agent = _copy_tree(tool.agent, memo, change, serve)
            tools.append(tool)
        clone.tools = tools
        clone.toolsets = list[BaseToolset](clone.toolsets)
        clone.before_tool_callback = serve
        clone.after_tool_callback = None
        change.apply(clone)
    return clone


def candidate_app(app: App, change: CandidateChange, serve: BeforeToolCallback) -> App:
    """``app`` as the replay runs it (see the module).

    Raises:
        ValueError: An instruction names an agent the app does not have.
    """
    memo: dict[int, BaseAgent] = {}
    agents = [_copy_tree(a, memo, change, serve) for a in app.agents]
    names = {a.name for a in memo.values()}
    unknown = sorted(set(change.instructions) - names)
    if unknown:
        raise ValueError(
            f"no agent {', '.join(map(repr, unknown))} to give the instruction to; the app "
            f"has {', '.join(sorted(names))}"
        )
    return replace(
        app, agents=agents, token_budgets=TokenBudgets(), notifications=None, model_limits=()
    )
