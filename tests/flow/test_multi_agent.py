"""Multi-agent invocations: transfer, escalation, parallel, sequence, agent tools."""

from __future__ import annotations

import asyncio
import uuid

from adk_temporal.agents import Agent, LoopAgent
from adk_temporal.artifacts import VersionsRequest
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedModel

from ..multi_agents import multi_agent_app, recorded
from .conftest import LocalFactory, LocalRuntime

APP = "multi"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    return session.events


def _texts(request_contents: list) -> str:  # type: ignore[type-arg]
    return " ".join(p.text or "" for c in request_contents for p in c.parts or ())


async def test_transfer_to_a_sub_agent_and_back(run_local: LocalFactory) -> None:
    """coordinator hands over to forecaster, which calls a tool and hands back."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "coordinator", "weather please")
        result = await handle.result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
    assert result.status == "completed"
    assert result.final_text == "Coordinator: done."
    calls = [(e.author, c.name) for e in events for c in e.function_calls()]
    assert calls == [
        ("coordinator", "transfer_to_agent"),
        ("forecaster", "get_weather"),
        ("forecaster", "transfer_to_agent"),
    ]
    assert state["last_city"] == "Hangzhou"
    # The forecaster saw the coordinator's turn as user context, not as its own.
    forecaster_first = recorded(models, "forecaster")[0].contents
    assert "[coordinator] called tool `transfer_to_agent`" in _texts(forecaster_first)
    assert all(c.role == "user" for c in forecaster_first)
    coordinator_last = recorded(models, "coordinator")[-1].contents
    assert "[forecaster] `get_weather` tool returned result" in _texts(coordinator_last)


async def test_parallel_branches_write_state_and_artifacts_merged_in_order(
    run_local: LocalFactory,
) -> None:
    """left and right run concurrently on their own branches; deltas merge in sub-agent order."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "fanout", "write notes")
        result = await handle.result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
        versions = await rt.artifacts.versions(
            VersionsRequest(
                app_name=APP, user_id=USER, session_id=session_id, file_name="notes.txt"
            )
        )
    assert result.status == "completed"
    assert result.final_text == "left done\nright done"
    assert {e.branch for e in events if e.author == "left"} == {"fanout.left"}
    assert {e.branch for e in events if e.author == "right"} == {"fanout.right"}
    [merge] = [e for e in events if e.author == "fanout"]
    assert merge.actions.state_delta == {
        "left_key": "left",
        "right_key": "right",
        "last_writer": "right",  # sub-agent order, whichever branch finished first
    }
    assert merge.actions.artifact_delta == {"notes.txt": 2}
    assert versions.versions == [1, 2]
    assert state["last_writer"] == "right"
    # Each branch's model saw only its own branch (and the shared user message).
    for name, other in (("left", "right"), ("right", "left")):
        for request in recorded(models, name):
            assert f"write_{other}" not in str(request.contents)


async def test_a_branch_pauses_for_approval_while_the_other_finishes(
    run_local: LocalFactory,
) -> None:
    """buyer waits for approval (listed with its branch) while reporter completes."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "mixed", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        assert (request.agent, request.branch, request.tool) == (
            "buyer",
            "mixed.buyer",
            "buy_weather_report",
        )
        async with asyncio.timeout(30):
            while not any(e.text() == "reporter done" for e in await _events(rt, session_id)):
                await asyncio.sleep(0.1)
        await handle.confirm(request.id, True)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert result.final_text == "buyer done\nreporter done"
    bought = [
        r.response for e in events for r in e.function_responses() if r.name == "buy_weather_report"
    ]
    assert [b["status"] for b in bought] == ["waiting for approval", "purchased"]  # type: ignore[index]
    assert {e.branch for e in events if e.author == "buyer"} == {"mixed.buyer"}


async def test_sequential_agent_runs_sub_agents_in_order(run_local: LocalFactory) -> None:
    """drafter then reviewer; the reviewer sees the draft as another agent's words."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "pipeline", "draft")).result()
        events = await _events(rt, session_id)
    assert result.final_text == "review: the draft looks right"
    assert [e.author for e in events] == ["user", "drafter", "reviewer"]
    reviewer_request = recorded(models, "reviewer")[0].contents
    assert "[drafter] said: draft: sunny all week" in _texts(reviewer_request)


async def test_agent_tool_runs_isolated_from_the_caller(run_local: LocalFactory) -> None:
    """The researcher's request holds only the call's argument; the caller never sees its events."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "caller", "which city is rainiest?")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.final_text == "caller: got it"
    [researcher_request] = recorded(models, "researcher")
    assert _texts(researcher_request.contents) == "find the rainiest city"
    assert "rainiest?" not in str(researcher_request.contents)
    [call] = [c for e in events for c in e.function_calls() if c.name == "researcher"]
    scoped = [e for e in events if e.isolation_scope]
    assert {e.isolation_scope for e in scoped} == {call.id}
    assert [e.author for e in scoped] == ["user", "researcher"]
    [response] = [r for e in events for r in e.function_responses() if r.name == "researcher"]
    assert response.response == {"result": "Bergen is the rainiest city."}
    caller_last = recorded(models, "caller")[-1].contents
    assert "Bergen is the rainiest city." in str(caller_last)  # only through the response
    assert "find the rainiest city" not in _texts(caller_last)


async def test_an_agent_transferred_to_escalates_sums_up_and_ends_the_run(
    run_local: LocalFactory,
) -> None:
    """checker escalates: under ADK's rule it sums up and, with no loop around it, its
    answer ends the invocation; escalator takes no further step."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "escalator", "check it")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert result.final_text == "Checker: all good."
    assert [e.author for e in events] == [
        "user",
        "escalator",
        "escalator",
        "checker",
        "checker",
        "checker",
    ]
    assert len(recorded(models, "escalator")) == 1


async def test_escalation_stop_returns_control_to_the_parent(run_local: LocalFactory) -> None:
    """``escalation="stop"``: checker stops at its escalation; its parent escalator takes
    the next step and answers."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(
            APP, USER, session_id, "escalator", "check it", escalation="stop"
        )
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert result.final_text == "Escalator: checked."
    assert [e.author for e in events] == [
        "user",
        "escalator",
        "escalator",
        "checker",
        "checker",
        "escalator",
    ]
    [escalated] = [e for e in events if e.actions.escalate]
    assert escalated.author == "checker"
    escalator_last = recorded(models, "escalator")[-1].contents
    assert "[checker] `escalate` tool returned result" in _texts(escalator_last)


async def test_loop_agent_ends_at_its_limit(run_local: LocalFactory) -> None:
    """ticking runs ticker three times, its max_iterations, and answers with the last pass."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "ticking", "tick")
        result = await handle.result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
    assert result.status == "completed"
    assert result.final_text == "tick 3"
    assert state["passes"] == 3
    assert [e.text() for e in events if e.author == "ticker" and e.text()] == [
        "tick 1",
        "tick 2",
        "tick 3",
    ]


async def test_loop_agent_ends_on_escalation_and_the_enclosing_sequence_goes_on(
    run_local: LocalFactory,
) -> None:
    """judge escalates on the second pass: the loop ends there, and summarizer still runs."""
    agents, models = multi_agent_app()
    session_id = _session()
    async with run_local(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "editing", "polish it")
        result = await handle.result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
    assert result.status == "completed"
    assert result.final_text == "summary: polished twice, judged good"
    assert state["passes"] == 2
    authors = [e.author for e in events if e.author != "user"]
    assert authors.count("summarizer") == 1
    assert [e for e in events if e.actions.escalate][-1].author == "judge"
    # The judge saw the polisher's passes retold as context.
    assert "[polisher] said: polished twice" in _texts(recorded(models, "judge")[-1].contents)


async def test_loop_agent_without_a_limit_or_escalation_ends_at_the_step_limit(
    run_local: LocalFactory,
) -> None:
    """A loop that never ends by itself is stopped by the invocation's step limit."""
    ticker = Agent("ticker", "scripted:forever")
    models = ModelRegistry()
    models.register("scripted:forever", lambda n: ScriptedModel(name=n, script=[]))
    session_id = _session()
    async with run_local([LoopAgent("forever", sub_agents=[ticker])], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "forever", "go", max_steps=4)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "failed"
    assert result.error == "step limit of 4 model steps reached"
    assert len([e for e in events if e.author == "ticker" and e.text()]) == 4
    assert events[-1].error_code == "StepLimitExceeded"
