"""The invocation flow end to end: state, approvals, inputs, parallel calls."""

from __future__ import annotations

import uuid
from typing import Any

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.artifacts import ListRequest
from adk_temporal.context import ToolContext
from adk_temporal.events import Event
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule
from adk_temporal.runner import LocalInvocation

from .conftest import LocalFactory, LocalRuntime

USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _agent() -> Agent:
    return build_weather_agent("scripted:weather")


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    session = await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))
    return session.events


def _responses(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    return [(r.name or "", dict(r.response or {})) for e in events for r in e.function_responses()]


async def _paused_purchase(rt: LocalRuntime, session_id: str, city: str) -> LocalInvocation:
    """Start "buy a report for <city>" and wait until it waits for approval."""
    handle = await rt.adk.start(
        APP_NAME, USER, session_id, "weather_agent", f"Buy a weather report for {city}"
    )
    await handle.wait_for_status("awaiting_confirmation")
    return handle


async def test_weather_tool_state_reaches_event_next_step_and_session(
    run_local: LocalFactory,
) -> None:
    """get_weather's state write is in the response event, seen by step 2 and persisted."""
    session_id = _session()
    async with run_local([_agent()]) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "What's the weather in Hangzhou?"
        )
        result = await handle.result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP_NAME, USER, session_id))
    assert result.status == "completed"
    assert result.steps == 2
    assert "Hangzhou" in result.final_text
    authors = [e.author for e in events]
    assert authors == ["user", "weather_agent", "weather_agent", "weather_agent"]
    call_event, response_event, final_event = events[1], events[2], events[3]
    assert [c.name for c in call_event.function_calls()] == ["get_weather"]
    assert response_event.actions.state_delta == {"last_city": "Hangzhou"}
    assert response_event.function_responses()[0].id == call_event.function_calls()[0].id
    assert final_event.text() == result.final_text
    assert state["last_city"] == "Hangzhou"
    assert len({e.id for e in events}) == len(events)


async def test_rejection_runs_no_purchase_and_tells_the_model(run_local: LocalFactory) -> None:
    """A rejected confirmation re-enters the tool with confirmed=False: nothing is bought."""
    session_id = _session()
    async with run_local([_agent()]) as rt:
        handle = await _paused_purchase(rt, session_id, "Paris")
        [request] = await handle.pending()
        await handle.confirm(request.id, False)
        result = await handle.result()
        events = await _events(rt, session_id)
        names = await rt.artifacts.list(
            ListRequest(app_name=APP_NAME, user_id=USER, session_id=session_id)
        )
    assert result.status == "completed"
    assert names.file_names == []
    responses = [r for n, r in _responses(events) if n == "buy_weather_report"]
    assert responses[-1] == {"status": "rejected", "city": "Paris"}
    assert "rejected" in result.final_text.lower()


async def test_resume_input_value_reaches_the_reentered_tool(run_local: LocalFactory) -> None:
    """A schema-valid answer is what ctx.resumed_input() returns on re-entry."""
    session_id = _session()
    dates = {"start": "2026-12-01", "end": "2026-12-05"}
    async with run_local([_agent()]) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "What are good travel dates?"
        )
        await handle.wait_for_status("awaiting_input")
        [request] = await handle.pending()
        await handle.resume(request.id, dates)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    responses = [r for n, r in _responses(events) if n == "ask_travel_dates"]
    assert responses[-1] == {"status": "dates received", "dates": dates}


def _report_writer(name: str, text: str):  # type: ignore[no-untyped-def]
    async def write(ctx: ToolContext) -> dict[str, Any]:
        assert ctx.artifacts is not None
        version = await ctx.artifacts.save("shared.txt", types.Part(text=text))
        ctx.state["writer"] = name
        ctx.state[f"wrote_{name}"] = version
        return {"version": version}

    write.__name__ = name
    write.__doc__ = f"Write shared.txt as {name}."
    return write


async def test_parallel_calls_merge_state_and_artifact_deltas(run_local: LocalFactory) -> None:
    """Two concurrent tool calls: responses in call order, later state wins, max version."""
    session_id = _session()
    models = ModelRegistry()
    models.register(
        "scripted:parallel",
        lambda name: ScriptedModel(
            [ScriptedRule("write both", [ScriptedCall("writer_a"), ScriptedCall("writer_b")])],
            name=name,
        ),
    )
    agent = Agent(
        "parallel_agent",
        "scripted:parallel",
        tools=[_report_writer("writer_a", "A"), _report_writer("writer_b", "B")],
    )
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(APP_NAME, USER, session_id, "parallel_agent", "write both")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    [merged] = [e for e in events if e.function_responses()]
    responses = merged.function_responses()
    assert [r.name for r in responses] == ["writer_a", "writer_b"]
    versions = sorted(r.response["version"] for r in responses)  # type: ignore[index]
    assert versions == [1, 2]
    assert merged.actions.artifact_delta == {"shared.txt": 2}
    delta = merged.actions.state_delta
    assert delta["writer"] == "writer_b"
    assert {delta["wrote_writer_a"], delta["wrote_writer_b"]} == {1, 2}
