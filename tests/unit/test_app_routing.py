"""A worker of a named app never takes another app's step for good: the model step sends
it back untouched, tool calls and appends fail retryably."""

from __future__ import annotations

import pytest

from adk_temporal.app import App, Stores
from adk_temporal.errors import AdkRunError, UnknownAppError
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.flow.messages import InvocationRef, ModelStepInput, RouteStep
from adk_temporal.ids import SessionKey, app_task_queue
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.steps import SessionRef, StepServices, model_step

REF = SessionRef(
    key=SessionKey("streamy", "u", "s"),
    agent_name="weather_agent",
    invocation_id="e-1",
    workflow_id="adk/streamy/u/s",
)


def _services(sessions: InMemorySessionService, app: str | None) -> StepServices:
    agents = [build_weather_agent("scripted:weather")]
    return StepServices.build(App(agents, name=app), Stores(sessions))


async def test_another_apps_model_step_is_routed_back_and_touches_nothing() -> None:
    """A step of app "streamy" on a worker of "expenses" answers a route to streamy's own
    queue and creates no session."""
    sessions = InMemorySessionService()
    inp = ModelStepInput(
        ref=InvocationRef(agent_name="weather_agent", invocation_id="e-1"),
        step=1,
        model_event_id="m-1",
    )
    reply = await model_step(_services(sessions, "expenses"), inp, REF)
    assert reply == RouteStep(kind="route", group=None, app="streamy")
    assert await sessions.list("streamy", "u") == []
    assert app_task_queue("adk-temporal", "streamy") == "adk-temporal/apps/streamy"


def test_other_steps_of_another_app_fail_retryably_after_a_pause() -> None:
    """``check_app`` raises a retryable run error with a bounded wait; an unnamed app (or
    the same app) serves the step."""
    sessions = InMemorySessionService()
    with pytest.raises(UnknownAppError, match="'expenses', not 'streamy'") as raised:
        _services(sessions, "expenses").check_app(REF)
    assert isinstance(raised.value, AdkRunError) and raised.value.retryable
    assert raised.value.retry_after == 2.0
    _services(sessions, None).check_app(REF)
    _services(sessions, "streamy").check_app(REF)
