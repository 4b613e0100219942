"""An agent whose every model reply costs a fixed number of tokens, for the budget tests.

The model asks for its ``tally`` tool ``calls`` times in each turn, then answers; each
reply reports :data:`TOKENS_PER_REPLY` tokens, as a real model's usage metadata would. The
tool counts its runs, so a test can tell that nothing ran twice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.tools import tool

__all__ = ["PRICED_MODEL", "TOKENS_PER_REPLY", "Priced", "priced_agent"]

PRICED_MODEL = "scripted:priced"
TOKENS_PER_REPLY = 100


@dataclass
class Priced:
    """The agent, the registry resolving its model, and what ran."""

    agent: Agent
    models: ModelRegistry
    model_calls: int = 0
    tool_runs: list[str] = field(default_factory=list)


class _PricedModel:
    def __init__(self, priced: Priced, calls: int, latency: float) -> None:
        self._priced = priced
        self._calls = calls
        self._latency = latency

    @property
    def name(self) -> str:
        return PRICED_MODEL

    async def generate(self, request: LlmRequest) -> LlmResponse:
        self._priced.model_calls += 1
        # A real model takes a while to answer: steps started together overlap.
        await asyncio.sleep(self._latency)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=TOKENS_PER_REPLY - 10,
            candidates_token_count=10,
            total_token_count=TOKENS_PER_REPLY,
        )
        # Tool responses since the turn's user message say how far this turn has come.
        done = 0
        for content in reversed(request.contents):
            if any(p.text for p in content.parts or []) and content.role == "user":
                break
            done += sum(1 for p in content.parts or [] if p.function_response)
        part = (
            types.Part(function_call=types.FunctionCall(name="tally", args={"n": done + 1}))
            if done < self._calls
            else types.Part(text=f"answer {self._priced.model_calls}")
        )
        return LlmResponse(content=types.Content(role="model", parts=[part]), usage=usage)


def priced_agent(
    calls: int = 0, max_output_tokens: int | None = None, latency: float = 0.0
) -> Priced:
    """An agent calling ``tally`` ``calls`` times a turn, each reply costing 100 tokens
    after ``latency`` seconds (and asking for at most ``max_output_tokens``, which bounds
    what a step reserves)."""
    priced = Priced(agent=Agent(name="assistant", model=PRICED_MODEL), models=ModelRegistry())

    @tool
    def tally(n: int) -> dict[str, int]:
        """Counts."""
        priced.tool_runs.append(str(n))
        return {"n": n}

    config = (
        types.GenerateContentConfig(max_output_tokens=max_output_tokens)
        if max_output_tokens is not None
        else None
    )
    priced.agent = Agent(
        name="assistant",
        model=PRICED_MODEL,
        instruction="Tally, then answer.",
        tools=[tally],
        generate_content_config=config,
    )
    model = _PricedModel(priced, calls, latency)
    priced.models.register(PRICED_MODEL, lambda _: model)
    return priced
