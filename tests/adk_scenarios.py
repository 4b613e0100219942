"""Agent trees ported from ADK's tests, shared by the in-process and the Temporal tests.

- :func:`escalating_loop`: ADK-Go ``loopagent/agent_test.go``'s tree — an LLM agent whose
  tool escalates, then another agent, in a loop.
- :func:`failing_fan`: a parallel agent whose one branch fails while the other is busy in a
  tool that only a cancellation ends (ADK-Go ``parallelagent/agent_test.go``).
- :func:`long_running_agent`: ADK-Go ``long_running_function_test.go``'s agent.
- :func:`run_config_reader`: an agent whose callback and tool report ``ctx.run_config``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from google.genai import types

from adk_temporal.agents import Agent, LoopAgent, ParallelAgent
from adk_temporal.context import CallbackContext, ReadonlyContext, ToolContext
from adk_temporal.errors import ModelRequestError
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.run_config import RunOptions
from adk_temporal.tools import LongRunningFunctionTool, tool

from .adk_models import queue_registry

__all__ = [
    "OPTIONS",
    "QUEUE_MODEL",
    "FailingFan",
    "LongRunning",
    "escalating_loop",
    "example_function",
    "example_function_that_skips",
    "expected_run_config",
    "failing_fan",
    "long_running_agent",
    "run_config_reader",
]

QUEUE_MODEL = "scripted:queue"
"""The model name of the trees that take replies from one shared queue."""


def example_function(ctx: ToolContext) -> dict[str, Any]:
    """Escalate, as ADK-Go's exampleFunctionThatEscalates does."""
    ctx.actions.escalate = True
    return {}


def example_function_that_skips(ctx: ToolContext) -> dict[str, Any]:
    """Escalate and skip the summarising model call."""
    ctx.actions.escalate = True
    ctx.actions.skip_summarization = True
    return {}


def escalating_loop(escalating_tool: Any) -> LoopAgent:
    """``test_agent``: ``custom_agent_0`` (with the escalating tool), then
    ``custom_agent_1``, at most twice."""
    first = Agent("custom_agent_0", QUEUE_MODEL, tools=[escalating_tool])
    return LoopAgent(
        "test_agent", sub_agents=[first, Agent("custom_agent_1", QUEUE_MODEL)], max_iterations=2
    )


@dataclass
class FailingFan:
    """The ``fan`` tree, its models, and what its busy branch did."""

    agent: ParallelAgent
    models: ModelRegistry
    busy_calls: int = 0
    ticks: int = 0
    busy_waiting: asyncio.Event = field(default_factory=asyncio.Event)


def failing_fan(*, raises: bool) -> FailingFan:
    """``fan`` runs ``failing`` and ``busy`` in parallel. busy's model always calls
    ``tick``; its first tick returns, its second never does unless cancelled. failing's
    model waits for that second tick, then answers with an error (``raises=False``) or
    raises one no retry can help."""
    never = asyncio.Event()

    @tool(heartbeat_timeout=timedelta(seconds=2))
    async def tick() -> dict[str, int]:
        """Count a tick."""
        fan.ticks += 1
        if fan.ticks == 2:
            fan.busy_waiting.set()
            await never.wait()
        return {"ticks": fan.ticks}

    async def busy(request: LlmRequest) -> LlmResponse:
        fan.busy_calls += 1
        call = types.FunctionCall(name="tick", args={})
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )

    async def failing(request: LlmRequest) -> LlmResponse:
        await fan.busy_waiting.wait()
        if raises:
            raise ModelRequestError(403, "bad key")
        return LlmResponse(error_code="SAFETY", error_message="blocked by the safety filter")

    models = ModelRegistry()
    models.register("scripted:busy", lambda name: _Model(name, busy))
    models.register("scripted:failing", lambda name: _Model(name, failing))
    agent = ParallelAgent(
        "fan",
        sub_agents=[
            Agent("failing", "scripted:failing"),
            Agent("busy", "scripted:busy", tools=[tick]),
        ],
    )
    fan = FailingFan(agent, models)
    return fan


@dataclass
class _Model:
    """A model answering with ``reply``."""

    name: str
    reply: Any

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The reply to ``request``."""
        return await self.reply(request)  # type: ignore[no-any-return]


def run_config_reader() -> tuple[Agent, ModelRegistry, list[dict[str, Any]]]:
    """``reader``: its before-model callback and its tool each record what
    ``ctx.run_config`` says; the third item collects what they saw."""
    seen: list[dict[str, Any]] = []

    def options(ctx: ReadonlyContext, where: str) -> dict[str, Any]:
        config = ctx.run_config
        return {
            "where": where,
            "max_steps": config.max_steps,
            "token_budget": config.token_budget,
            "tool_timeout_seconds": config.tool_timeout_seconds,
        }

    def before_model(ctx: CallbackContext, request: LlmRequest) -> None:
        seen.append(options(ctx, "before_model"))

    def read_options(ctx: ToolContext) -> dict[str, Any]:
        """Say what the invocation's options are."""
        seen.append(options(ctx, "tool"))
        return {"ok": True}

    replies: list[str | types.FunctionCall] = [types.FunctionCall(name="read_options"), "done"]
    models, _ = queue_registry(QUEUE_MODEL, replies)
    agent = Agent("reader", QUEUE_MODEL, tools=[read_options], before_model_callback=before_model)
    return agent, models, seen


OPTIONS: RunOptions = {"max_steps": 7, "token_budget": 5000, "tool_timeout_seconds": 42.0}
"""Options :func:`run_config_reader` is started with in the tests."""


def expected_run_config(config: Mapping[str, object]) -> list[dict[str, object]]:
    """What the reader's callback (twice) and tool (once) see under ``config``."""
    return [{"where": where, **config} for where in ("before_model", "tool", "before_model")]


@dataclass
class LongRunning:
    """``long_running_agent`` and what its long-running tool and model saw."""

    agent: Agent
    models: ModelRegistry
    model: Any
    calls: list[str] = field(default_factory=list)


def long_running_agent(replies: list[str | types.FunctionCall]) -> LongRunning:
    """ADK-Go ``long_running_function_test.go``'s agent: ``increaseByOne`` is a
    long-running tool that returns ``{"status": "pending"}`` at once and counts its calls."""

    def increaseByOne(ctx: ToolContext) -> dict[str, str]:
        """increaseByOne"""
        found.calls.append(ctx.function_call_id or "")
        return {"status": "pending"}

    models, model = queue_registry(QUEUE_MODEL, replies)
    agent = Agent("long_running_agent", QUEUE_MODEL, tools=[LongRunningFunctionTool(increaseByOne)])
    found = LongRunning(agent, models, model)
    return found
