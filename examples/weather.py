"""The weather agent of the demo: state, a paid report behind approval, artifacts, input.

``weather_agent`` answers weather questions (``get_weather`` remembers ``last_city``),
sells a weather report that a human must approve first (``buy_weather_report`` saves
``report.txt`` and records the purchase in the user-scoped ledger ``user:purchases.json``),
revises the report (``update_report`` saves a new version) and asks for travel dates
(``ask_travel_dates`` pauses for input with a JSON schema).

It runs offline on the scripted model; set ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``) and
it uses Gemini instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.context import ToolContext
from adk_temporal.errors import ArtifactNotFoundError
from adk_temporal.faults import fault_point

from .payments import gateway_from_env

__all__ = [
    "APP_NAME",
    "REPORT_PRICE_USD",
    "TRAVEL_DATES_SCHEMA",
    "app",
    "ask_travel_dates",
    "build_weather_agent",
    "buy_weather_report",
    "default_model",
    "get_weather",
    "update_report",
    "weather_agent",
]

APP_NAME = "weather"
"""The app name the demo runs under."""

REPORT_PRICE_USD = 2.0
"""What one weather report costs; shown in the approval request."""

TRAVEL_DATES_SCHEMA: dict[str, Any] = {
    # null is allowed: the traveller may decline to give dates.
    "type": ["object", "null"],
    "properties": {
        "start": {"type": "string", "format": "date"},
        "end": {"type": "string", "format": "date"},
    },
    "required": ["start", "end"],
    "additionalProperties": False,
}
"""The JSON schema an answer to ``ask_travel_dates`` must satisfy."""

_SKIES = ("sunny", "cloudy, clearing later", "light rain", "overcast", "clear and windy")


def _forecast(city: str) -> dict[str, Any]:
    """A made-up but stable forecast: the same city always gets the same weather."""
    digest = hashlib.sha256(city.lower().encode()).digest()
    sky = _SKIES[digest[0] % len(_SKIES)]
    high, low = 12 + digest[1] % 18, 2 + digest[2] % 10
    return {"city": city, "forecast": f"{sky}, high {high}°C, low {low}°C"}


def get_weather(city: str, ctx: ToolContext) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city to look up, e.g. "Hangzhou".
    """
    ctx.state["last_city"] = city
    return _forecast(city)


async def buy_weather_report(city: str, ctx: ToolContext) -> dict[str, Any]:
    """Buy a detailed weather report for a city. Costs money, so a human must approve.

    Args:
        city: The city the report is about.
    """
    confirmation = ctx.tool_confirmation
    if confirmation is None:
        ctx.request_confirmation(
            hint=f"Buy the weather report for {city} for ${REPORT_PRICE_USD:.2f}?",
            payload={"city": city, "price_usd": REPORT_PRICE_USD},
        )
        return {"status": "waiting for approval", "city": city}
    if not confirmation.confirmed:
        return {"status": "rejected", "city": city}
    if ctx.artifacts is None:
        return {"status": "failed", "error": "no artifact service configured"}
    fault_point("tool.before_side_effect")
    gateway = gateway_from_env()
    if gateway is not None:
        # The key is the same on every re-run of this call, so a crash can't charge twice.
        gateway.charge(ctx.idempotency_key, REPORT_PRICE_USD, f"weather report for {city}")
    forecast = _forecast(city)
    text = f"Weather report for {city}\nToday: {forecast['forecast']}.\n"
    version = await ctx.artifacts.save("report.txt", types.Part(text=text))
    await _record_purchase(ctx, city)
    ctx.state["last_report_city"] = city
    return {"status": "purchased", "city": city, "artifact": "report.txt", "version": version}


async def _record_purchase(ctx: ToolContext, city: str) -> None:
    """Append the purchase to the user's ledger once, keyed by the call's idempotency key.

    A worker that crashes after saving but before reporting back re-runs this tool; the key
    is the same on every re-run, so the ledger (and a real payment API given the same key)
    records the purchase exactly once.
    """
    assert ctx.artifacts is not None
    try:
        part = await ctx.artifacts.load("user:purchases.json")
        ledger: list[dict[str, Any]] = json.loads(_part_text(part))
    except ArtifactNotFoundError:
        ledger = []
    if any(entry["key"] == ctx.idempotency_key for entry in ledger):
        return
    ledger.append({"key": ctx.idempotency_key, "city": city, "price_usd": REPORT_PRICE_USD})
    data = json.dumps(ledger, indent=2).encode()
    await ctx.artifacts.save(
        "user:purchases.json", types.Part.from_bytes(data=data, mime_type="application/json")
    )


def _part_text(part: types.Part) -> str:
    if part.text is not None:
        return part.text
    return (part.inline_data.data or b"").decode() if part.inline_data else ""


async def update_report(city: str, advice: str, ctx: ToolContext) -> dict[str, Any]:
    """Add advice to the latest weather report, saving it as a new version.

    Args:
        city: The city the report is about.
        advice: The advice to add, e.g. "take an umbrella".
    """
    if ctx.artifacts is None:
        return {"status": "failed", "error": "no artifact service configured"}
    try:
        text = _part_text(await ctx.artifacts.load("report.txt"))
    except ArtifactNotFoundError:
        return {"status": "failed", "error": "no report yet; buy one first"}
    version = await ctx.artifacts.save("report.txt", types.Part(text=f"{text}Advice: {advice}\n"))
    return {"status": "updated", "city": city, "artifact": "report.txt", "version": version}


def ask_travel_dates(ctx: ToolContext) -> dict[str, Any]:
    """Ask the traveller for their travel dates before planning a trip."""
    answer = ctx.resumed_input()
    if answer is None:
        ctx.request_input("When do you travel? Give start and end dates.", TRAVEL_DATES_SCHEMA)
        return {"status": "waiting for travel dates"}
    if answer.value is None:
        return {"status": "no dates given"}
    return {"status": "dates received", "dates": answer.value}


def default_model() -> str:
    """Gemini when an API key is set, else the offline scripted model."""
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return os.environ.get("ADK_GEMINI_MODEL", "gemini-2.5-flash")
    return "scripted:weather"


def build_weather_agent(model: str | None = None) -> Agent:
    """The weather agent on ``model`` (default: :func:`default_model`)."""
    return Agent(
        name="weather_agent",
        model=model or default_model(),
        instruction=(
            "You are a weather assistant. Use get_weather for weather questions, "
            "buy_weather_report when the user wants a paid report, update_report to add "
            "advice to it, and ask_travel_dates before planning a trip."
        ),
        description="Answers weather questions and sells weather reports.",
        tools=[get_weather, buy_weather_report, update_report, ask_travel_dates],
    )


weather_agent = build_weather_agent()
"""The demo's agent, on the default model."""

app = App(agents=[weather_agent], name=APP_NAME)
"""The example app: ``adk-temporal worker --app adk_temporal.examples.weather:app``."""
