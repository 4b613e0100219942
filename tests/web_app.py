"""The weather app with notifications for the gateway tests' worker processes.

Worker processes load it with ``--app tests.web_app:app``; where the notices go, the secret
and the gateway's URL come from the environment the test gives them.
"""

from __future__ import annotations

import os
from datetime import timedelta

from adk_temporal.app import App
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.notifications import Notifications

WEBHOOK_ENV = "ADK_TEST_WEBHOOK"
GATEWAY_ENV = "ADK_TEST_GATEWAY"
SECRET_ENV = "ADK_TEST_LINK_SECRET"


def app() -> App:
    """The weather agent, notifying pauses to the test's receiver."""
    return App(
        agents=[build_weather_agent("scripted:weather")],
        name=APP_NAME,
        notifications=Notifications(
            endpoints=[os.environ[WEBHOOK_ENV]],
            secret=os.environ[SECRET_ENV].encode(),
            answer_base_url=os.environ[GATEWAY_ENV],
            retry_initial=timedelta(milliseconds=200),
            retry_maximum=timedelta(seconds=1),
        ),
    )
