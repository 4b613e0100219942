"""Model replies as ADK reads them, on the in-process runner (SPEC §1.9, §1.11; issue 28).

Empty replies store nothing and write no ``output_key``; a reply that is no answer (thoughts
only, a trailing code-execution result) makes the agent call the model again, within the
step limit; empty text parts reach the model; a late function response shows the model the
unrelated calls made in between.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.context import CallbackContext
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.steps.model_step import CONTINUE

from .conftest import LocalFactory, LocalRuntime

APP = "replies"
USER = "u-1"
MODEL = "replies"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _reply(*parts: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)))


def _text(text: str, *, thought: bool | None = None) -> types.Part:
    return types.Part(text=text, thought=thought)


def _call(call_id: str, name: str, /, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


class _Replies:
    """Answers each request with the next reply (the last one again once they run out) and
    keeps every request it was sent."""

    def __init__(self, *replies: LlmResponse) -> None:
        self.name = MODEL
        self.requests: list[LlmRequest] = []
        self._replies = replies

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The next reply."""
        self.requests.append(request)
        return self._replies[min(len(self.requests), len(self._replies)) - 1].model_copy()


def _models(model: _Replies) -> ModelRegistry:
    models = ModelRegistry()
    models.register(MODEL, lambda name: model)
    return models


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


async def _state(rt: LocalRuntime, session_id: str) -> dict[str, Any]:
    return dict((await rt.sessions.get(SessionKey(APP, USER, session_id))).state)


# --- item 8: empty and thought-only replies ------------------------------------------------


async def test_an_empty_reply_stores_no_event_and_writes_no_output(
    run_local: LocalFactory,
) -> None:
    """A reply without content ends the turn with no answer, stores no event and leaves the
    output_key's earlier value (ADK-Go internal/llminternal/base_flow.go runOneStep skips
    the event; agent/llmagent/llmagent_saveoutput_test.go TestLlmAgent_MaybeSaveOutputToState
    "skips when event has no content text")."""
    model = _Replies(_reply(_text("first")), LlmResponse())
    agent = Agent("writer", MODEL, output_key="answer")
    session_id = _session()
    async with run_local([agent], models=_models(model)) as rt:
        first = await rt.adk.run(APP, USER, session_id, "writer", "one")
        second = await rt.adk.run(APP, USER, session_id, "writer", "two")
        events = await _events(rt, session_id)
        state = await _state(rt, session_id)
    assert (first.status, first.final_text) == ("completed", "first")
    assert (second.status, second.final_text, second.steps) == ("completed", "", 1)
    assert [(e.author, e.text()) for e in events] == [
        ("user", "one"),
        ("writer", "first"),
        ("user", "two"),
    ]
    assert state == {"answer": "first"}
    assert len(model.requests) == 2


async def test_an_empty_reply_keeps_what_the_model_callbacks_recorded(
    run_local: LocalFactory,
) -> None:
    """The state a before-model callback wrote survives an empty reply, on an event without
    content the model never sees (a deliberate difference: ADK-Go drops it with the event)."""

    def count(ctx: CallbackContext, request: LlmRequest) -> None:
        ctx.state["calls"] = int(ctx.state.get("calls", 0)) + 1

    model = _Replies(LlmResponse(), _reply(_text("back")))
    agent = Agent("counter", MODEL, output_key="answer", before_model_callback=count)
    session_id = _session()
    async with run_local([agent], models=_models(model)) as rt:
        first = await rt.adk.run(APP, USER, session_id, "counter", "one")
        second = await rt.adk.run(APP, USER, session_id, "counter", "two")
        events = await _events(rt, session_id)
        state = await _state(rt, session_id)
    assert (first.final_text, second.final_text) == ("", "back")
    assert [(e.author, e.content is None) for e in events] == [
        ("user", False),
        ("counter", True),
        ("user", False),
        ("counter", False),
    ]
    assert events[1].actions.state_delta == {"calls": 1}
    assert state == {"calls": 2, "answer": "back"}
    assert [[p.text for c in r.contents for p in c.parts or []] for r in model.requests] == [
        ["one"],
        ["one", "two"],
    ]


async def test_a_thought_only_reply_calls_the_model_again(run_local: LocalFactory) -> None:
    """A turn of thoughts only is no answer: the thought is stored and the model called
    again, which answers; output_key holds the answer only (ADK-Go
    agent/llmagent/llmagent_test.go, TestThoughtOnlyTurnDoesNotEndInvocation)."""
    model = _Replies(_reply(_text("let me think", thought=True)), _reply(_text("the answer")))
    agent = Agent("thinker", MODEL, output_key="answer")
    session_id = _session()
    async with run_local([agent], models=_models(model)) as rt:
        result = await rt.adk.run(APP, USER, session_id, "thinker", "hi")
        events = await _events(rt, session_id)
        state = await _state(rt, session_id)
    assert (result.status, result.final_text, result.steps) == ("completed", "the answer", 2)
    assert len(model.requests) == 2
    assert [(e.author, [p.thought for p in e.parts()]) for e in events] == [
        ("user", [None]),
        ("thinker", [True]),
        ("thinker", [None]),
    ]
    assert events[1].actions.state_delta == {}
    assert state == {"answer": "the answer"}
    # The second call sees the thought, as the model's own turn, then ADK's continuation
    # turn (ADK-Go contents_processor_test.go wantWithContinuation).
    seen = model.requests[1].contents
    assert [(c.role, [p.text for p in c.parts or []]) for c in seen] == [
        ("user", ["hi"]),
        ("model", ["let me think"]),
        ("user", [CONTINUE]),
    ]


_SIGNED = types.Part(thought_signature=b"sig")


@pytest.mark.parametrize(
    ("first", "calls"),
    [
        (_reply(_text("thinking", thought=True)), 2),
        (_reply(_text("t", thought=True), _text("answer")), 1),
        (_reply(_text("answer")), 1),
        (_reply(_text("t", thought=True), _SIGNED), 1),
        (LlmResponse(content=types.Content(role="model")), 1),
        (LlmResponse(content=types.Content(role="model", parts=[])), 1),
    ],
    ids=[
        "thought_text_only",
        "thought_plus_answer",
        "answer_only",
        "thought_plus_signature_only_part",
        "empty_content",
        "empty_parts",
    ],
)
async def test_only_a_thought_only_reply_is_not_final(
    run_local: LocalFactory, first: LlmResponse, calls: int
) -> None:
    """Which first replies make the agent call the model again (ADK-Go
    internal/llminternal/base_flow_test.go, TestIsThoughtOnlyTurn, the case of the same
    name)."""
    model = _Replies(first, _reply(_text("done")))
    async with run_local([Agent("a", MODEL)], models=_models(model)) as rt:
        result = await rt.adk.run(APP, USER, _session(), "a", "hi")
    assert (result.status, result.steps, len(model.requests)) == ("completed", calls, calls)


async def test_a_model_that_only_thinks_stops_at_the_step_limit(run_local: LocalFactory) -> None:
    """Calling the model again is bounded: a model that never answers fails the invocation
    at the step limit, its thoughts stored; an always-empty model is called once."""
    thinking = _Replies(_reply(_text("hmm", thought=True)))
    empty = _Replies(LlmResponse())
    session_id = _session()
    async with run_local([Agent("a", MODEL)], models=_models(thinking)) as rt:
        result = await rt.adk.run(APP, USER, session_id, "a", "hi", max_steps=4)
        events = await _events(rt, session_id)
    async with run_local([Agent("a", MODEL)], models=_models(empty)) as rt:
        quiet = await rt.adk.run(APP, USER, _session(), "a", "hi", max_steps=4)
    assert (result.status, result.steps, len(thinking.requests)) == ("failed", 4, 4)
    assert result.error is not None and "step limit of 4" in result.error
    assert sum(1 for e in events if [p.thought for p in e.parts()] == [True]) == 4
    assert (quiet.status, quiet.steps, len(empty.requests)) == ("completed", 1, 1)


async def test_a_reply_ending_in_a_code_result_calls_the_model_again(
    run_local: LocalFactory,
) -> None:
    """A reply whose last part is a code-execution result is not final: the model reads the
    result and answers (ADK-Go session/session.go IsFinalResponse with Flow.Run; ADK-Python
    tests/unittests/events/test_event.py,
    test_is_final_response_with_trailing_code_result_is_not_final)."""
    code = types.Part(
        executable_code=types.ExecutableCode(code="print(6*7)", language=types.Language.PYTHON)
    )
    result_part = types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_OK, output="42"
        )
    )
    model = _Replies(_reply(code, result_part), _reply(_text("It is 42.")))
    async with run_local([Agent("coder", MODEL, output_key="answer")], models=_models(model)) as rt:
        session_id = _session()
        result = await rt.adk.run(APP, USER, session_id, "coder", "6*7?")
        state = await _state(rt, session_id)
    assert (result.final_text, result.steps, state) == ("It is 42.", 2, {"answer": "It is 42."})
    [_, reread, go_on] = model.requests[1].contents
    assert reread.parts is not None and reread.parts[-1].code_execution_result is not None
    assert go_on == types.Content(role="user", parts=[types.Part(text=CONTINUE)])


# --- item 9: empty text parts reach the model --------------------------------------------


async def test_empty_text_parts_of_a_message_reach_the_model(run_local: LocalFactory) -> None:
    """A message's empty text part is sent as it is; a message of empty text only is not
    sent at all (ADK-Python tests/unittests/flows/llm_flows/test_contents.py,
    test_events_with_empty_content_are_skipped)."""
    model = _Replies(_reply(_text("ok")))
    mixed = types.Content(role="user", parts=[_text(""), _text("Mixed content")])
    blank = types.Content(role="user", parts=[_text("")])
    session_id = _session()
    async with run_local([Agent("a", MODEL)], models=_models(model)) as rt:
        await rt.adk.run(APP, USER, session_id, "a", mixed)
        await rt.adk.run(APP, USER, session_id, "a", blank)
    assert [p.text for p in model.requests[0].contents[0].parts or []] == ["", "Mixed content"]
    assert [[p.text for p in c.parts or []] for c in model.requests[1].contents] == [
        ["", "Mixed content"],
        ["ok"],
        [CONTINUE],  # the blank message is not sent: the contents end on the model's turn
    ]


# --- item 10: a late response keeps the unrelated calls in view ----------------------------


def start_job(name: str) -> dict[str, Any]:
    """Start a long job; it answers at once and reports later.

    Args:
        name: The job.
    """
    return {"status": "started", "job": name}


def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sun"}


def _named(part: types.Part) -> str | None:
    """A part's text, or the name of the function it calls or answers."""
    if part.function_call is not None:
        return part.function_call.name
    if part.function_response is not None:
        return part.function_response.name
    return part.text


async def test_a_late_response_keeps_the_unrelated_calls_in_the_models_view(
    run_local: LocalFactory,
) -> None:
    """The job's result, sent later as a function response, follows the job's call in the
    model's view; the weather call and its response made in between stay, after it, while
    the words in between are dropped (ADK-Go internal/llminternal/contents_processor_test.go,
    TestContentsRequestProcessor_Rearrange "Rearrangement preserves unrelated function
    events"; SPEC §1.9 "Long-running tools")."""
    model = _Replies(
        _reply(_call("job-1", "start_job", name="render")),
        _reply(_text("Rendering started.")),
        _reply(_call("w-1", "get_weather", city="Oslo")),
        _reply(_text("Sunny in Oslo.")),
        _reply(_text("The render is done.")),
    )
    agent = Agent("helper", MODEL, tools=[start_job, get_weather])
    done = types.FunctionResponse(id="job-1", name="start_job", response={"status": "done"})
    late = types.Content(role="user", parts=[types.Part(function_response=done)])
    session_id = _session()
    async with run_local([agent], models=_models(model)) as rt:
        await rt.adk.run(APP, USER, session_id, "helper", "render it")
        await rt.adk.run(APP, USER, session_id, "helper", "and the weather in Oslo?")
        result = await rt.adk.run(APP, USER, session_id, "helper", late)
    assert result.final_text == "The render is done."
    seen = model.requests[-1].contents
    shown = [(c.role, _named(p)) for c in seen for p in c.parts or []]
    assert shown == [
        ("user", "render it"),
        ("model", "start_job"),
        ("user", "start_job"),
        ("model", "get_weather"),
        ("user", "get_weather"),
    ]
    job = seen[2].parts[0].function_response if seen[2].parts else None
    assert job is not None and job.response == {"status": "done"}
