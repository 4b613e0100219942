"""The two apps the A2A tests run in worker and gateway processes, on the offline model.

``far_app``: the ``payments`` agent, served over A2A: ``weather in X`` (a streamed reply),
``pay 5`` (a payment behind approval, counted in ``$A2A_TEST_RUNS`` each time its body
runs), ``login`` (asks for credentials: ``auth-required``), ``slow`` (a tool that waits
until the file ``$A2A_TEST_GATE`` exists).

``near_app``: the ``assistant`` agent, which calls the far agent over A2A as an agent tool
(``desk: …``) or hands the conversation to it as a sub-agent (``transfer …``); the far
agent's card is at ``$A2A_TEST_FAR``, its token in ``$A2A_TEST_FAR_TOKEN``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from adk_temporal import AgentTool, App, FunctionTool, LlmAgent, ToolContext
from adk_temporal.a2a import RemoteA2aAgent, request_credential
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule

RUNS_ENV = "A2A_TEST_RUNS"
GATE_ENV = "A2A_TEST_GATE"
FAR_ENV = "A2A_TEST_FAR"
FAR_TOKEN_ENV = "A2A_TEST_FAR_TOKEN"
FAR_APP = "far"
NEAR_APP = "near"


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city.
    """
    return {"city": city, "forecast": "sunny"}


def pay(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Pay an amount; a human approves first.

    Args:
        amount: How much.
    """
    with Path(os.environ[RUNS_ENV]).open("a") as ledger:
        ledger.write(f"{tool_context.function_call_id} {amount}\n")
    return {"status": "paid", "amount": amount}


def login(tool_context: ToolContext) -> dict[str, Any]:
    """Log in to the bank; asks for an API key."""
    asked = request_credential(
        tool_context, "The bank's API key, please.", {"type": "object", "required": ["key"]}
    )
    given = tool_context.resumed_input(asked)
    if given is None:
        return {"status": "waiting for credentials"}
    return {"status": "logged in", "key_length": len(given.value["key"])}


async def slow(tool_context: ToolContext) -> dict[str, Any]:
    """Work until the gate opens."""
    gate = Path(os.environ[GATE_ENV])
    while not gate.exists():
        await asyncio.sleep(0.05)
    return {"status": "done"}


def _far_model(name: str) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedRule(
                r"weather in (?P<city>\w+)", [ScriptedCall("get_weather", {"city": "{city}"})]
            ),
            ScriptedRule(r"pay 5", [ScriptedCall("pay", {"amount": 5})]),
            ScriptedRule(r"login", [ScriptedCall("login", {})]),
            ScriptedRule(r"slow", [ScriptedCall("slow", {})]),
        ],
        name=name,
        summaries={
            "get_weather": "It is {forecast} in {city}.",
            "pay": "Paid {amount}.",
            "login": "Logged in ({key_length} characters).",
            "slow": "Slow work {status}.",
        },
        stream_chunk_chars=8,
        stream_delay_seconds=0.05,
    )


def far_app() -> App:
    """The far side: the payments agent."""
    models = ModelRegistry()
    models.register("scripted:far", _far_model)
    payments = LlmAgent(
        name="payments",
        model="scripted:far",
        description="Weather and payments, approved by a human.",
        tools=[get_weather, FunctionTool(pay, require_confirmation=True), login, slow],
    )
    return App(agents=[payments], name=FAR_APP, models=models)


def _near_model(name: str) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedRule(r"desk: (?P<ask>.+)", [ScriptedCall("desk", {"request": "{ask}"})]),
            ScriptedRule(r"transfer", [ScriptedCall("transfer_to_agent", {"agent_name": "desk"})]),
        ],
        name=name,
        summaries={"desk": "The desk says: {result}"},
    )


def near_app() -> App:
    """The near side: an assistant that asks the far payments agent, over A2A."""
    models = ModelRegistry()
    models.register("scripted:near", _near_model)
    desk = RemoteA2aAgent(
        "desk",
        os.environ[FAR_ENV],
        description="The payments desk of another app.",
        token_env=FAR_TOKEN_ENV,
    )
    assistant = LlmAgent(
        name="assistant",
        model="scripted:near",
        description="Helps, asking the payments desk when money is involved.",
        tools=[AgentTool(desk)],
    )
    return App(agents=[assistant], name=NEAR_APP, models=models)
