"""The agents of the model-traffic tests: Gemini models behind a fake server, served by real
``adk-temporal worker`` processes (``--app tests.traffic_app:app``)."""

from __future__ import annotations

import os

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.models import GeminiModel, ModelRegistry

GEMINI_ENV = "TRAFFIC_GEMINI_URL"
"""Where the app's Gemini models send requests (a ``FakeGeminiServer``)."""


def _gemini(name: str) -> GeminiModel:
    return GeminiModel(name, api_key="test", base_url=os.environ.get(GEMINI_ENV, ""))


def _app() -> App:
    models = ModelRegistry()
    models.register("gemini-*", _gemini)
    return App(
        agents=[Agent("chatty", "gemini-2.5-flash"), Agent("quick", "gemini-2.0-flash-lite")],
        models=models,
        name="traffic",
    )


app = _app()
"""What ``adk-temporal worker --app tests.traffic_app:app`` serves."""
