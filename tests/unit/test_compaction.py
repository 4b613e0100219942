"""Events compaction: which events a compaction may cover, the model's view with summaries
in place of ranges, and the engine-neutral compaction step against a real session store.

Ported from ADK-Python's tests/unittests/apps/test_compaction.py (sliding window over
invocations with an overlap, token threshold with retained events) and
tests/unittests/flows/llm_flows/test_contents.py (compaction events replace the raw events
in the model's contents); the pause rules are this runtime's own (ADK #4740, #5602).
"""

from __future__ import annotations

import pytest
from google.genai import types
from pydantic import ValidationError

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.compaction import (
    COMPACTION_FAILED,
    MAX_BACKOFF_INVOCATIONS,
    EventsCompactionConfig,
    compaction_backoff,
    open_boundary,
    plan_compaction,
)
from adk_temporal.events import (
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    Event,
    EventActions,
    EventCompaction,
)
from adk_temporal.flow.compacting import CompactionInput
from adk_temporal.flow.messages import InvocationRef
from adk_temporal.history import ContentsBuilder, build_contents, model_view
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.steps import StepServices
from adk_temporal.steps.compaction import compact_events
from adk_temporal.steps.ref import SessionRef
from adk_temporal.usage import TokenBudgets
from tests.adk_models import queue_registry

KEY = SessionKey("app", "u", "s")


def _turn(n: int, *, calls: bool = False) -> list[Event]:
    """Invocation ``i-n``: a user message and the agent's reply (optionally via a tool)."""
    call = types.Part(function_call=types.FunctionCall(id=f"c{n}", name="tool", args={}))
    done = types.Part(
        function_response=types.FunctionResponse(id=f"c{n}", name="tool", response={})
    )
    parts = [("u", "user", "user", types.Part(text=f"question {n}"))]
    if calls:
        parts += [("c", "agent", "model", call), ("r", "agent", "user", done)]
    parts.append(("a", "agent", "model", types.Part(text=f"answer {n}")))
    return [
        Event(
            id=f"i-{n}-{suffix}",
            invocation_id=f"i-{n}",
            author=author,
            content=types.Content(role=role, parts=[part]),
            timestamp=n,
        )
        for suffix, author, role, part in parts
    ]


def _session(turns: int) -> list[Event]:
    return [e for n in range(1, turns + 1) for e in _turn(n)]


def _compaction(event_id: str, first: str, last: str, text: str) -> Event:
    summary = types.Content(role="model", parts=[types.Part(text=text)])
    compaction = EventCompaction(
        start_timestamp=0,
        end_timestamp=0,
        compacted_content=summary,
        start_event_id=first,
        end_event_id=last,
    )
    return Event(
        id=event_id,
        invocation_id=event_id,
        author="user",
        actions=EventActions(compaction=compaction),
    )


def _texts(contents: list[types.Content]) -> list[str]:
    return [p.text or "" for c in contents for p in c.parts or []]


def _failed(n: int) -> Event:
    """The note a failed compaction at the end of invocation ``i-n`` leaves."""
    return Event(id=f"f-{n}", invocation_id=f"i-{n}", author="user", error_code=COMPACTION_FAILED)


def test_failed_compactions_back_off_doubling_per_failure() -> None:
    """After k failures in a row, 2**(k-1) invocations begin before the next try; a
    compaction that succeeds starts the count again."""
    events: list[Event] = []
    tried = []
    for n in range(1, 13):
        events += _turn(n)
        if not compaction_backoff(events):
            tried.append(n)
            events.append(_failed(n))
    assert tried == [1, 2, 4, 8]
    events.append(_compaction("c-1", "i-1-u", "i-12-a", "summary"))
    assert not compaction_backoff(events)


def test_the_back_off_is_capped() -> None:
    """However many failures, at most MAX_BACKOFF_INVOCATIONS invocations wait."""
    events = [_failed(0)] * 20
    for n in range(1, MAX_BACKOFF_INVOCATIONS):
        events += _turn(n)
        assert compaction_backoff(events)
    events += _turn(MAX_BACKOFF_INVOCATIONS)
    assert not compaction_backoff(events)


def test_a_config_needs_a_trigger() -> None:
    """Neither an interval nor a threshold is refused, naming both options."""
    with pytest.raises(ValidationError, match="compaction_interval or token_threshold"):
        EventsCompactionConfig()


def test_the_sliding_window_waits_for_the_interval_then_covers_from_the_start() -> None:
    """ADK's test_run_compaction_for_sliding_window: nothing before ``compaction_interval``
    invocations; then the range is the session from its start to the last invocation."""
    config = EventsCompactionConfig(compaction_interval=3)
    assert plan_compaction(config, _session(2)) is None
    plan = plan_compaction(config, _session(3))
    assert plan is not None
    assert (plan.start_event_id, plan.end_event_id) == ("i-1-u", "i-3-a")
    assert plan.inputs[0].id == "i-1-u"


def test_the_next_window_reads_the_previous_summary_and_the_overlap() -> None:
    """After a compaction, the next one waits for ``compaction_interval`` new invocations;
    its summarizer reads the previous summary, then ``overlap_size`` invocations again."""
    config = EventsCompactionConfig(compaction_interval=2, overlap_size=1)
    events = [*_session(2), _compaction("k1", "i-1-u", "i-2-a", "S1")]
    events += _turn(3)
    assert plan_compaction(config, events) is None
    events += _turn(4)
    plan = plan_compaction(config, events)
    assert plan is not None
    assert (plan.start_event_id, plan.end_event_id) == ("i-1-u", "i-4-a")
    assert [e.id for e in plan.inputs] == [
        "k1",
        "i-2-u",
        "i-2-a",
        "i-3-u",
        "i-3-a",
        "i-4-u",
        "i-4-a",
    ]


def test_the_token_threshold_keeps_the_retained_events_out() -> None:
    """ADK's token-threshold compaction: once the last model input reached the threshold,
    everything but the last ``event_retention_size`` events is covered, ending with an
    invocation (never between a call and its response)."""
    config = EventsCompactionConfig(token_threshold=100, event_retention_size=2)
    events = [e for n in range(1, 4) for e in _turn(n, calls=True)]
    assert plan_compaction(config, events) is None
    events[-1] = events[-1].model_copy(
        update={
            "usage_metadata": types.GenerateContentResponseUsageMetadata(prompt_token_count=150)
        }
    )
    plan = plan_compaction(config, events)
    assert plan is not None
    assert plan.end_event_id == "i-2-a"


def _pending_approval(n: int) -> list[Event]:
    """Invocation ``i-n`` paused: a call with its placeholder response and an open
    confirmation request."""
    events = _turn(n, calls=True)[:-1]
    ask = types.FunctionCall(
        id=f"adk-{n}", name=REQUEST_CONFIRMATION_FUNCTION_NAME, args={"originalFunctionCall": {}}
    )
    events.append(
        Event(
            id=f"i-{n}-ask",
            invocation_id=f"i-{n}",
            author="agent",
            content=types.Content(role="model", parts=[types.Part(function_call=ask)]),
            long_running_tool_ids=[f"adk-{n}"],
        )
    )
    return events


def test_an_open_confirmation_is_never_compacted_away() -> None:
    """The invocation waiting for an approval, and everything after it, stays raw: the
    re-entered tool still finds its call (ADK #4740)."""
    events = [*_session(2), *_pending_approval(3)]
    assert open_boundary(events) == 4
    plan = plan_compaction(EventsCompactionConfig(compaction_interval=2), events)
    assert plan is not None and plan.end_event_id == "i-2-a"
    # The paused invocation counts towards the interval but is held back.
    held = plan_compaction(EventsCompactionConfig(compaction_interval=3), events)
    assert held is not None and held.end_event_id == "i-2-a"
    assert plan_compaction(EventsCompactionConfig(compaction_interval=4), events) is None


def test_a_long_running_call_stays_until_its_final_response() -> None:
    """A long-running call's intermediate result does not close it (ADK #5602); its final
    response, in a later invocation, does."""
    events = _turn(1, calls=True)[:-1]
    events[1] = events[1].model_copy(update={"long_running_tool_ids": ["c1"]})
    assert open_boundary(events) == 0
    final = types.FunctionResponse(id="c1", name="tool", response={"done": True})
    answer = Event(
        id="i-2-u",
        invocation_id="i-2",
        author="user",
        content=types.Content(role="user", parts=[types.Part(function_response=final)]),
    )
    assert open_boundary([*events, answer]) == 4


def test_the_model_view_puts_the_summary_in_place_of_its_range() -> None:
    """ADK's test_contents compaction cases: covered events are left out, the summary stands
    where the last of them was; a later compaction over the same start subsumes the earlier
    one; the builder, extended across a compaction, agrees with a fresh build."""
    events = [*_session(2), _compaction("k1", "i-1-u", "i-2-a", "S1"), *_turn(3)]
    assert _texts(build_contents(events, agent_name="agent")) == ["S1", "question 3", "answer 3"]
    builder = ContentsBuilder(agent_name="agent")
    builder.extend(events)
    events += [_compaction("k2", "i-1-u", "i-3-a", "S2"), *_turn(4)]
    builder.extend(events)
    assert _texts(builder.contents()) == ["S2", "question 4", "answer 4"]
    assert model_view(events)[0].id == "k2"
    assert len(events) == 10  # the raw events stay in the session


def _step_of_third_invocation() -> tuple[SessionRef, CompactionInput]:
    """The compaction step of invocation i-3, every 3 invocations, storing event k-1."""
    ref = SessionRef(key=KEY, agent_name="agent", invocation_id="i-3", workflow_id="adk/app/u/s")
    inp = CompactionInput(
        ref=InvocationRef(agent_name="agent", invocation_id="i-3"),
        config=EventsCompactionConfig(compaction_interval=3),
        event_id="k-1",
        timestamp=9.0,
    )
    return ref, inp


async def test_the_step_stores_one_compaction_and_a_retry_stores_no_second() -> None:
    """The step summarises with the agent's model (the prompt, then the conversation), stores
    the compaction event under the given id, and a retry with that id calls no model."""
    sessions = InMemorySessionService()
    await sessions.get_or_create(KEY)
    await sessions.append_events(KEY, _session(3))
    registry, model = queue_registry("summ", ["the user asked three questions"])
    services = StepServices.build(
        App([Agent(name="agent", model="summ")], models=registry), Stores(sessions)
    )
    ref, inp = _step_of_third_invocation()
    result = await compact_events(services, inp, ref)
    assert (result.compacted, result.covered_events) == (True, 6)
    again = await compact_events(services, inp, ref)
    assert again.compacted and len(model.requests) == 1
    prompt = _texts(model.requests[0].contents)[0]
    assert "[user] said: question 1" in prompt and "[agent] said: answer 3" in prompt
    stored = (await sessions.get(KEY)).events
    assert [e.id for e in stored if e.actions.compaction] == ["k-1"]
    assert _texts(build_contents(stored, agent_name="agent")) == ["the user asked three questions"]


class _PricedSummarizer:
    """Summarises for a fixed 40 tokens."""

    name = "priced-summ"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        usage = types.GenerateContentResponseUsageMetadata(total_token_count=40)
        content = types.Content(role="model", parts=[types.Part(text="a summary")])
        return LlmResponse(content=content, usage=usage)


async def test_the_summary_counts_towards_token_budgets_once() -> None:
    """With cumulative budgets on, the summarizer's tokens are in the ledger under the
    compaction event's id: a retry that finds the event stored counts nothing twice."""
    sessions = InMemorySessionService()
    await sessions.get_or_create(KEY)
    await sessions.append_events(KEY, _session(3))
    registry = ModelRegistry()
    registry.register("priced-summ", lambda _: _PricedSummarizer())
    services = StepServices.build(
        App(
            [Agent(name="agent", model="priced-summ")],
            models=registry,
            token_budgets=TokenBudgets(session=1000),
        ),
        Stores(sessions),
    )
    ref, inp = _step_of_third_invocation()
    first = await compact_events(services, inp, ref)
    again = await compact_events(services, inp, ref)
    assert first.usage is not None and again.usage is not None
    assert (first.usage.total_tokens, again.usage.total_tokens) == (40, 40)
    assert (await sessions.token_totals(KEY)).used["session"] == 40
