"""Agent definitions: an LLM agent, its tools and its callbacks.

An :class:`Agent` is configuration that lives on the worker. Workflows refer to it by name
only; the activities look it up to build the model request and run its tools and callbacks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from google.genai import types

from .context import CallbackContext, ReadonlyContext, ToolContext
from .errors import UnknownAgentError
from .models import LlmRequest, LlmResponse
from .tools import FunctionTool, as_tool

__all__ = [
    "AfterAgentCallback",
    "AfterModelCallback",
    "AfterToolCallback",
    "Agent",
    "AgentRegistry",
    "BeforeAgentCallback",
    "BeforeModelCallback",
    "BeforeToolCallback",
    "Instruction",
]

_Maybe: TypeAlias = Any  # a value or an awaitable of it; callbacks may be sync or async

Instruction: TypeAlias = str | Callable[[ReadonlyContext], str]
"""A system instruction, fixed or computed from the read-only context."""

BeforeAgentCallback: TypeAlias = Callable[[CallbackContext], _Maybe]
"""Runs before the agent's first step; returning ``types.Content`` ends the invocation with it."""

AfterAgentCallback: TypeAlias = Callable[[CallbackContext], _Maybe]
"""Runs after the agent's final answer; returning ``types.Content`` adds it as a last event."""

BeforeModelCallback: TypeAlias = Callable[[CallbackContext, LlmRequest], _Maybe]
"""Runs before each model call; returning an ``LlmResponse`` skips the model."""

AfterModelCallback: TypeAlias = Callable[[CallbackContext, LlmResponse], _Maybe]
"""Runs after each model call; returning an ``LlmResponse`` replaces the model's."""

BeforeToolCallback: TypeAlias = Callable[[ToolContext, FunctionTool, dict[str, Any]], _Maybe]
"""Runs before a tool; returning a dict skips the tool and uses the dict as its response."""

AfterToolCallback: TypeAlias = Callable[
    [ToolContext, FunctionTool, dict[str, Any], dict[str, Any]], _Maybe
]
"""Runs after a tool; returning a dict replaces the tool's response."""


class Agent:
    """An LLM agent: a model name, an instruction, tools and callbacks.

    Args:
        name: Unique name; also the author of the agent's events.
        model: Model name resolved through the worker's ``ModelRegistry`` (e.g.
            ``gemini-2.5-flash`` or ``scripted:weather``). Only the name crosses into
            workflow history; the model object lives on the worker.
        instruction: System instruction, or a function of the read-only context.
        description: One line other agents (and the UI) see.
        tools: Plain Python functions (sync or async) or ``FunctionTool`` objects.
        before_agent_callback: See :data:`BeforeAgentCallback`.
        after_agent_callback: See :data:`AfterAgentCallback`.
        before_model_callback: See :data:`BeforeModelCallback`.
        after_model_callback: See :data:`AfterModelCallback`.
        before_tool_callback: See :data:`BeforeToolCallback`.
        after_tool_callback: See :data:`AfterToolCallback`.
        generate_content_config: Extra generation settings passed to the model.
    """

    def __init__(
        self,
        name: str,
        model: str,
        instruction: Instruction = "",
        *,
        description: str = "",
        tools: Iterable[Callable[..., Any] | FunctionTool] = (),
        before_agent_callback: BeforeAgentCallback | None = None,
        after_agent_callback: AfterAgentCallback | None = None,
        before_model_callback: BeforeModelCallback | None = None,
        after_model_callback: AfterModelCallback | None = None,
        before_tool_callback: BeforeToolCallback | None = None,
        after_tool_callback: AfterToolCallback | None = None,
        generate_content_config: types.GenerateContentConfig | None = None,
    ) -> None:
        if not name or not name.isidentifier():
            raise ValueError(f"agent name must be a Python identifier, got {name!r}")
        if name == "user":
            raise ValueError("agent name 'user' is reserved for the user's events")
        self.name = name
        self.model = model
        self.instruction = instruction
        self.description = description
        self.tools: list[FunctionTool] = [as_tool(t) for t in tools]
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent {name!r} has duplicate tool names: {', '.join(duplicates)}")
        self.before_agent_callback = before_agent_callback
        self.after_agent_callback = after_agent_callback
        self.before_model_callback = before_model_callback
        self.after_model_callback = after_model_callback
        self.before_tool_callback = before_tool_callback
        self.after_tool_callback = after_tool_callback
        self.generate_content_config = generate_content_config

    def tool(self, name: str) -> FunctionTool | None:
        """The tool called ``name``, or ``None``."""
        return next((t for t in self.tools if t.name == name), None)

    def system_instruction(self, ctx: ReadonlyContext) -> str:
        """The instruction text for this context."""
        return self.instruction(ctx) if callable(self.instruction) else self.instruction

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model!r}, tools={len(self.tools)})"


class AgentRegistry(Mapping[str, Agent]):
    """The agents a worker serves, by name."""

    def __init__(self, agents: Sequence[Agent]) -> None:
        self._agents: dict[str, Agent] = {}
        for agent in agents:
            if agent.name in self._agents:
                raise ValueError(f"two agents are named {agent.name!r}")
            self._agents[agent.name] = agent

    def __getitem__(self, name: str) -> Agent:
        try:
            return self._agents[name]
        except KeyError:
            known = ", ".join(sorted(self._agents)) or "none"
            raise UnknownAgentError(
                f"unknown agent {name!r}; this worker serves: {known}"
            ) from None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._agents)

    def __len__(self) -> int:
        return len(self._agents)


async def maybe_await(value: Awaitable[Any] | Any) -> Any:
    """Await ``value`` if it is awaitable, so callbacks may be sync or async."""
    if isinstance(value, Awaitable):
        return await value
    return value
