"""The weather example with its short steps local: ``get_weather``'s calls and the model
steps run inside the workflow task (``worker --app tests.local_steps_app:app``)."""

from __future__ import annotations

from adk_temporal.app import App
from adk_temporal.dispatch import LocalSteps
from adk_temporal.examples.weather import APP_NAME, build_weather_agent

LOCAL = LocalSteps(tools={"get_weather"})
"""The app's local steps: model steps while short, and ``get_weather``'s calls."""

app = App(agents=[build_weather_agent("scripted:weather")], name=APP_NAME, local_steps=LOCAL)
