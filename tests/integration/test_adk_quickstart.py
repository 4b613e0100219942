"""ADK's quickstart agent team, ported by its imports only, on Temporal (SPEC §1.14; issue
43): the session is created with initial state through the client, and the same three
turns as in-process give the same answers."""

from __future__ import annotations

import pytest

from adk_temporal.errors import SessionExistsError
from adk_temporal.ids import SessionKey

from .. import adk_quickstart as quickstart
from .conftest import WorkerFactory

APP, USER, SESSION = "weather_tutorial_app", "user_1", "session_001"


async def test_the_quickstart_team_runs_on_temporal_with_initial_state(
    run_worker: WorkerFactory,
) -> None:
    """The client creates the session with the preferred unit; the root reports London in
    Fahrenheit and stores its answer; the sub-agents, on the root's model, greet and say
    goodbye; a second create of the same session is refused."""
    async with run_worker([quickstart.root_agent], models=quickstart.offline_models()) as rt:
        created = await rt.adk.create_session(
            app_name=APP,
            user_id=USER,
            session_id=SESSION,
            state={"user_preference_temperature_unit": "Fahrenheit"},
        )
        assert created.state == {"user_preference_temperature_unit": "Fahrenheit"}
        with pytest.raises(SessionExistsError):
            await rt.adk.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        root = quickstart.root_agent.name
        answers = []
        for message in ("What is the weather in London?", "Hello!", "Bye!"):
            handle = await rt.adk.start(APP, USER, SESSION, root, message)
            answers.append((await handle.result()).final_text)
        stored = await rt.sessions.get(SessionKey(APP, USER, SESSION))
    assert answers == [
        "The weather in London is 59°F.",
        "Hello, Ada!",
        "Goodbye! Have a great day.",
    ]
    assert stored.state["last_weather_report"] == answers[0]
    assert {"greeting_agent", "farewell_agent"} <= {e.author for e in stored.events if e.text()}
