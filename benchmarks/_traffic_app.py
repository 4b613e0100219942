"""The agent of ``model_traffic.py``: one Gemini model behind a fake server, served by real
``adk-temporal worker`` processes (``--app _traffic_app:app``, run from ``benchmarks/``).

Mirrors ``tests/traffic_app.py``; kept apart so the benchmark does not import the tests.
"""

from __future__ import annotations

import os

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.models import GeminiModel, ModelRegistry

GEMINI_ENV = "BENCH_TRAFFIC_GEMINI_URL"
"""Where the app's Gemini models send requests (a ``FakeGeminiServer``)."""

APP_NAME = "bench_traffic"
AGENT = "chatty"


def _gemini(name: str) -> GeminiModel:
    return GeminiModel(name, api_key="bench", base_url=os.environ.get(GEMINI_ENV, ""))


def _app() -> App:
    models = ModelRegistry()
    models.register("gemini-*", _gemini)
    return App(agents=[Agent(AGENT, "gemini-2.5-flash")], models=models, name=APP_NAME)


app = _app()
"""What ``adk-temporal worker --app _traffic_app:app`` serves."""
