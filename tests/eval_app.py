"""A travel app for the evaluation tests: tools that log every run, and a model whose
behaviour an instruction changes, so a replay has divergences to find.

Every tool appends one line to the side-effect log (``EVAL_TOOL_LOG``, a file), so a test
counts the tools' executions across processes. ``get_weather`` reads a forecast, ``book``
needs approval (a static gate) and ``ask_dates`` asks for input.

The model (``scripted:travel``) answers from rules; an instruction line
``Answer from memory for: Rome, Lima`` makes it answer those cities' weather questions
without calling ``get_weather`` — the planted change a replay must report.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.context import ToolContext
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry, ScriptedModel
from adk_temporal.models.scripted import ScriptedCall, ScriptedRule
from adk_temporal.tools import FunctionTool

__all__ = ["BERLIN_MODEL", "INSTRUCTION", "LOG_ENV", "MODEL", "app", "executions", "travel_agent"]

LOG_ENV = "EVAL_TOOL_LOG"
MODEL = "scripted:travel"
BERLIN_MODEL = "scripted:berlin"
"""A candidate model asking for Berlin's weather whatever the city asked."""
INSTRUCTION = "You help travellers: weather, bookings and dates."
_FROM_MEMORY = re.compile(r"Answer from memory for: (?P<cities>[^\n]+)")


def _log(line: str) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(line + "\n")


def executions(path: Path) -> list[str]:
    """The tool runs the side-effect log holds."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def get_weather(city: str, ctx: ToolContext) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city.
    """
    _log(f"get_weather {city}")
    ctx.state["last_city"] = city
    return {"city": city, "forecast": f"mild in {city}"}


def book(city: str) -> dict[str, Any]:
    """Book a trip to a city (a human approves first).

    Args:
        city: The city.
    """
    _log(f"book {city}")
    return {"status": "booked", "city": city}


def ask_dates(ctx: ToolContext) -> dict[str, Any]:
    """Ask the traveller for dates."""
    answer = ctx.resumed_input()
    if answer is None:
        _log("ask_dates asked")
        ctx.request_input("When do you travel?", {"type": "string"})
        return {"status": "waiting for dates"}
    _log("ask_dates answered")
    return {"status": "dates received", "dates": answer.value}


class TravelModel:
    """The scripted travel model, answering from memory for the cities its instruction
    names."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._rules = ScriptedModel(
            [
                ScriptedRule(
                    r"book (?:a trip to )?(?P<city>\w+)", [ScriptedCall("book", {"city": "{city}"})]
                ),
                ScriptedRule(r"when|dates", [ScriptedCall("ask_dates")]),
                ScriptedRule(
                    r"weather in (?P<city>\w+)", [ScriptedCall("get_weather", {"city": "{city}"})]
                ),
            ],
            name=name,
            summaries={
                "get_weather": "It is {forecast}.",
                "book": "Booked {city}.",
                "ask_dates": "Dates noted: {dates}.",
            },
        )

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Reply as the rules say, unless the instruction says to answer from memory."""
        found = _FROM_MEMORY.search(request.system_instruction or "")
        last = request.contents[-1] if request.contents else None
        text = "".join(p.text or "" for p in (last.parts or [])) if last else ""
        if found and last is not None and last.role == "user":
            for city in (c.strip() for c in found["cities"].split(",")):
                if f"weather in {city}".lower() in text.lower():
                    return await ScriptedModel(script=[f"I recall {city} is sunny."]).generate(
                        request.model_copy(update={"contents": []})
                    )
        return await self._rules.generate(request)


def _models() -> ModelRegistry:
    models = ModelRegistry()
    models.register(MODEL, TravelModel)
    models.register(
        BERLIN_MODEL,
        lambda name: ScriptedModel(
            [ScriptedRule("weather", [ScriptedCall("get_weather", {"city": "Berlin"})])],
            name=name,
        ),
    )
    return models


travel_agent = Agent(
    "travel_agent",
    MODEL,
    INSTRUCTION,
    tools=[get_weather, FunctionTool(book, require_confirmation=True), ask_dates],
)

app = App([travel_agent], name="travel", models=_models())
"""The app: ``tests.eval_app:app``."""
