"""Escalation as ADK runs it, on the in-process runner (issue 28).

Ported from ADK-Go ``agent/workflowagents/loopagent/agent_test.go`` (``TestNewLoopAgent``,
both "loop with escalate function returns sumarization" cases): the escalating agent finishes
its turn (it summarises what its tool did, unless the tool skipped summarisation), then the
loop stops — the next sub-agent never runs. ``sequentialagent/agent.go`` ignores escalations:
a sequence runs on, while every loop around the escalating agent stops. ``escalation="stop"``
keeps the earlier rule.
"""

from __future__ import annotations

import uuid
from typing import Any

import pydantic
import pytest

from adk_temporal.agents import Agent, BaseAgent, LoopAgent, SequentialAgent
from adk_temporal.events import Event
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ids import SessionKey

from ..adk_models import call, queue_registry
from ..adk_scenarios import (
    QUEUE_MODEL,
    escalating_loop,
    example_function,
    example_function_that_skips,
)
from .conftest import LocalFactory

APP = "escalate"
USER = "u-1"
MODEL = QUEUE_MODEL


def _story(events: list[Event]) -> list[tuple[str, object]]:
    """Author and text, call name or response name of each event after the user's."""
    told: list[tuple[str, object]] = []
    for event in events:
        for part in (event.content.parts if event.content else None) or []:
            if event.author == "user":
                continue
            if part.text:
                told.append((event.author, part.text))
            elif part.function_call is not None:
                told.append((event.author, ("call", part.function_call.name)))
            elif part.function_response is not None:
                told.append((event.author, ("response", part.function_response.name)))
    return told


async def _run(
    run_local: LocalFactory, root: BaseAgent, replies: list[Any], **options: Any
) -> tuple[InvocationResult, list[Event]]:
    models, _ = queue_registry(MODEL, replies)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([root], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, root.name, "user input", **options)
        result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    return result, session.events


async def test_an_escalating_agent_summarises_then_the_loop_stops(
    run_local: LocalFactory,
) -> None:
    """Call, escalating response, the agent's summary — and custom_agent_1 never runs."""
    result, events = await _run(
        run_local, escalating_loop(example_function), [call("example_function"), "hello 0"]
    )
    assert result.status == "completed", result.error
    assert result.final_text == "hello 0"
    assert _story(events) == [
        ("custom_agent_0", ("call", "example_function")),
        ("custom_agent_0", ("response", "example_function")),
        ("custom_agent_0", "hello 0"),
    ]
    [escalated] = [e for e in events if e.actions.escalate]
    assert escalated.function_responses()


async def test_an_escalation_that_skips_summarisation_stops_the_loop_after_its_response(
    run_local: LocalFactory,
) -> None:
    """With skip_summarization the model is not called again: the response ends the loop."""
    result, events = await _run(
        run_local,
        escalating_loop(example_function_that_skips),
        [call("example_function_that_skips")],
    )
    assert result.status == "completed", result.error
    assert _story(events) == [
        ("custom_agent_0", ("call", "example_function_that_skips")),
        ("custom_agent_0", ("response", "example_function_that_skips")),
    ]


async def test_a_sequence_runs_on_after_an_escalation_but_the_loop_around_it_stops(
    run_local: LocalFactory,
) -> None:
    """loop(sequence(escalating, next), after): the sequence ignores the escalation, so
    ``next`` runs; the loop around it stops, so no second pass; the outer sequence goes on."""
    inner = SequentialAgent(
        "inner",
        sub_agents=[
            Agent("escalating", MODEL, tools=[example_function]),
            Agent("next", MODEL),
        ],
    )
    loop = LoopAgent("rounds", sub_agents=[inner], max_iterations=3)
    root = SequentialAgent("root", sub_agents=[loop, Agent("after", MODEL)])
    replies = [call("example_function"), "escalated", "next ran", "after ran"]
    result, events = await _run(run_local, root, replies)
    assert result.status == "completed", result.error
    assert result.final_text == "after ran"
    assert [text for _, text in _story(events) if isinstance(text, str)] == [
        "escalated",
        "next ran",
        "after ran",
    ]


async def test_escalation_stop_keeps_the_earlier_rule(run_local: LocalFactory) -> None:
    """``escalation="stop"``: the escalating agent stops at its response (no summary) and
    the sequence around it ends too."""
    inner = SequentialAgent(
        "inner",
        sub_agents=[
            Agent("escalating", MODEL, tools=[example_function]),
            Agent("next", MODEL),
        ],
    )
    result, events = await _run(run_local, inner, [call("example_function")], escalation="stop")
    assert result.status == "completed", result.error
    assert _story(events) == [
        ("escalating", ("call", "example_function")),
        ("escalating", ("response", "example_function")),
    ]


async def test_an_unknown_escalation_rule_is_refused(run_local: LocalFactory) -> None:
    """A rule other than "adk" or "stop" is a typed error naming the field."""
    with pytest.raises(pydantic.ValidationError, match="escalation"):
        await _run(run_local, escalating_loop(example_function), [], escalation="later")
