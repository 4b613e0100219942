"""The app ADK's client and dev UI drive in the tests: ADK's quickstart shape on the offline
model, with a paid tool behind approval whose every run is counted.

``root_agent`` (an ``LlmAgent`` with the model) answers weather questions and pays with
``pay`` after approval; its two sub-agents (``greeter``, ``farewell``) name no model and use
the root's. ``pay`` appends a line to the file ``$ADK_WEB_RUNS`` each time its body runs,
so a test can see it ran exactly once; it saves ``receipt.txt``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from google.genai import types

from adk_temporal import App, FunctionTool, LlmAgent, ToolContext
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule

RUNS_ENV = "ADK_WEB_RUNS"
"""The file ``pay`` appends a line to on each run."""
MODEL = "scripted:adk-web"
APP_NAME = "adkweb"


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city.
    """
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny"}


async def pay(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Pay an amount; a human approves first.

    Args:
        amount: How much.
    """
    runs = os.environ.get(RUNS_ENV)
    if runs:
        with Path(runs).open("a") as ledger:
            ledger.write(f"{tool_context.function_call_id} {amount}\n")
    assert tool_context.artifacts is not None
    await tool_context.artifacts.save("receipt.txt", types.Part(text=f"paid {amount}"))
    tool_context.state["paid"] = amount
    return {"status": "paid", "amount": amount}


def _model(name: str) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedRule(
                r"weather in (?P<city>\w+)", [ScriptedCall("get_weather", {"city": "{city}"})]
            ),
            ScriptedRule(r"pay (?P<amount>\d+)", [ScriptedCall("pay", {"amount": 5})]),
        ],
        name=name,
        summaries={"get_weather": "It is {forecast} in {city}.", "pay": "Paid {amount}."},
        # A streamed run's reply comes in pieces of eight characters, as partial events, a
        # fifth of a second apart so a follower sees them before the whole reply.
        stream_chunk_chars=8,
        stream_delay_seconds=0.2,
    )


greeter = LlmAgent(name="greeter", description="Says hello.", instruction="Greet the user.")
farewell = LlmAgent(name="farewell", description="Says goodbye.", instruction="Say goodbye.")
root_agent = LlmAgent(
    name="assistant",
    model=MODEL,
    description="Weather and payments.",
    instruction="Help {user_name?} with the weather.",
    tools=[get_weather, FunctionTool(pay, require_confirmation=True)],
    sub_agents=[greeter, farewell],
)


def _models() -> ModelRegistry:
    models = ModelRegistry()
    models.register(MODEL, _model)
    return models


app = App(agents=[root_agent], name=APP_NAME, models=_models())
