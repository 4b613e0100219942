"""ADK's quickstart agent team (adk-docs "Build Your First Intelligent Agent Team": a
stateful weather agent with a greeting and a farewell sub-agent), ported by changing its
imports only.

In ADK the imports read ``from google.adk.agents import LlmAgent`` and ``from
google.adk.tools.tool_context import ToolContext``; the code below them is ADK's shape as
written: keyword arguments, tools as plain functions (one returning a string), the two
sub-agents naming no model and so using the root's, ``output_key``, and state the session
was created with (``user_preference_temperature_unit``).

:func:`offline_models` answers as Gemini would in the tutorial, offline: the root transfers
greetings and farewells, each agent calls its own tool, and a tool's result is summarised.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_temporal import LlmAgent, ToolContext
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry

MODEL_GEMINI_2_0_FLASH = "gemini-2.0-flash"


def say_hello(name: str = "there") -> str:
    """Provides a simple greeting, optionally addressing the user by name.

    Args:
        name: The name of the person to greet.
    """
    return f"Hello, {name}!"


def say_goodbye() -> str:
    """Provides a simple farewell message to conclude the conversation."""
    return "Goodbye! Have a great day."


def get_weather_stateful(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Retrieves weather, converts temperature unit based on session state.

    Args:
        city: The city to report on.
    """
    preferred_unit = tool_context.state.get("user_preference_temperature_unit", "Celsius")
    celsius = {"london": 15, "new york": 25, "tokyo": 18}.get(city.lower())
    if celsius is None:
        return {"status": "error", "error_message": f"Sorry, I don't have weather for '{city}'."}
    if preferred_unit == "Fahrenheit":
        temp, unit = celsius * 9 / 5 + 32, "°F"
    else:
        temp, unit = celsius, "°C"
    tool_context.state["last_city_checked_stateful"] = city
    return {"status": "success", "report": f"The weather in {city} is {temp:.0f}{unit}."}


greeting_agent = LlmAgent(
    name="greeting_agent",
    instruction="You are the Greeting Agent. Your ONLY task is to provide a friendly "
    "greeting using the 'say_hello' tool. Do nothing else.",
    description="Handles simple greetings and hellos using the 'say_hello' tool.",
    tools=[say_hello],
)

farewell_agent = LlmAgent(
    name="farewell_agent",
    instruction="You are the Farewell Agent. Your ONLY task is to provide a polite goodbye "
    "message using the 'say_goodbye' tool. Do not perform any other actions.",
    description="Handles simple farewells and goodbyes using the 'say_goodbye' tool.",
    tools=[say_goodbye],
)

root_agent = LlmAgent(
    name="weather_agent_v4_stateful",
    model=MODEL_GEMINI_2_0_FLASH,
    description="Main agent: Provides weather (state-aware unit), delegates greetings/farewells.",
    instruction="You are the main Weather Agent. Use 'get_weather_stateful' for weather "
    "requests (the user prefers {user_preference_temperature_unit}). Delegate greetings to "
    "'greeting_agent' and farewells to 'farewell_agent'.",
    tools=[get_weather_stateful],
    sub_agents=[greeting_agent, farewell_agent],
    output_key="last_weather_report",
)


def _call(tool: str, args: dict[str, Any]) -> LlmResponse:
    call = types.FunctionCall(name=tool, args=args)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class _TutorialModel:
    """What Gemini answers in the tutorial, decided from the request's tools and last turn."""

    name = MODEL_GEMINI_2_0_FLASH

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The next turn: a summary of a tool's result, a tool call, or a transfer."""
        tools = {d.name for d in request.tools or []}
        last = request.contents[-1].parts or []
        responses = [p.function_response for p in last if p.function_response]
        if responses and responses[0].name != "transfer_to_agent":
            result = responses[0].response or {}
            text = str(result.get("report") or result.get("result") or result)
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
        # Other agents' turns reach a model as user turns headed "For context:".
        said = [
            p.text
            for c in request.contents
            if c.role == "user" and (c.parts or [types.Part()])[0].text != "For context:"
            for p in c.parts or []
            if p.text
        ]
        latest = said[-1].strip().lower() if said else ""
        wanted = _WANTED.get(latest.rstrip("!").split()[-1] if latest else "")
        if wanted is not None:
            agent, tool, args = wanted
            if tool in tools:
                return _call(tool, args)
            return _call("transfer_to_agent", {"agent_name": agent})
        return _call("get_weather_stateful", {"city": latest.rstrip("?").split()[-1].title()})


_WANTED: dict[str, tuple[str, str, dict[str, Any]]] = {
    "hello": ("greeting_agent", "say_hello", {"name": "Ada"}),
    "bye": ("farewell_agent", "say_goodbye", {}),
}
"""The last word of a message that asks for a sub-agent: its name, its tool, the tool's
arguments."""


def offline_models() -> ModelRegistry:
    """A registry where the tutorial's model name is :class:`_TutorialModel`."""
    models = ModelRegistry()
    models.register(MODEL_GEMINI_2_0_FLASH, lambda name: _TutorialModel())
    return models
