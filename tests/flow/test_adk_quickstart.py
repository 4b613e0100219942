"""ADK's quickstart agent team, ported by its imports only, in-process (SPEC §1.14; issue
43): a session created with initial state, the root's weather tool reading it, greetings and
farewells handed to the two sub-agents, which run on the root's model."""

from __future__ import annotations

from adk_temporal import App, InMemorySessionService, Runner, Stores
from adk_temporal.ids import SessionKey

from .. import adk_quickstart as quickstart

APP, USER, SESSION = "weather_tutorial_app", "user_1", "session_001"


async def test_the_quickstart_team_runs_in_process_with_initial_state() -> None:
    """The root reports London in Fahrenheit (the initial state's unit) and stores its
    answer under output_key; "Hello!" and "Bye!" go to the sub-agents, which call their own
    tools on the root's model."""
    sessions = InMemorySessionService()
    app = App([quickstart.root_agent], models=quickstart.offline_models())
    runner = Runner(app, stores=Stores(sessions))
    created = await runner.create_session(
        app_name=APP,
        user_id=USER,
        session_id=SESSION,
        state={"user_preference_temperature_unit": "Fahrenheit"},
    )
    assert created.state == {"user_preference_temperature_unit": "Fahrenheit"}
    root = quickstart.root_agent.name
    weather = await runner.run(APP, USER, SESSION, root, "What is the weather in London?")
    hello = await runner.run(APP, USER, SESSION, root, "Hello!")
    bye = await runner.run(APP, USER, SESSION, root, "Bye!")
    stored = await sessions.get(SessionKey(APP, USER, SESSION))
    assert weather.final_text == "The weather in London is 59°F."
    assert hello.final_text == "Hello, Ada!"
    assert bye.final_text == "Goodbye! Have a great day."
    assert stored.state["last_weather_report"] == "The weather in London is 59°F."
    assert stored.state["last_city_checked_stateful"] == "London"
    authors = {e.author for e in stored.events if e.text()}
    assert {"greeting_agent", "farewell_agent", root} <= authors
