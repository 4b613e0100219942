"""SPEC §1.9 (and the history rules of §1.6): what the model sees (CTX-I)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.genai import types

from adk_temporal.confirmation import build_confirmation_request_event
from adk_temporal.events import Event, InputRequest, ToolConfirmation
from adk_temporal.history import (
    ContentsBuilder,
    build_contents,
    copy_contents,
    is_branch_visible,
)
from adk_temporal.resume import build_input_request_event

AGENT = "weather_agent"


def text_event(text: str, author: str = "user", **fields: Any) -> Event:
    """An event with one text part."""
    role = "user" if author == "user" else "model"
    return Event(
        author=author, content=types.Content(role=role, parts=[types.Part(text=text)]), **fields
    )


def call_event(call_id: str, name: str, args: dict[str, Any], author: str = AGENT) -> Event:
    """A model event with one function call."""
    call = types.FunctionCall(id=call_id, name=name, args=args)
    return Event(
        author=author, content=types.Content(role="model", parts=[types.Part(function_call=call)])
    )


def response_event(call_id: str, name: str, response: dict[str, Any], author: str = AGENT) -> Event:
    """A function-response event with one response."""
    fr = types.FunctionResponse(id=call_id, name=name, response=response)
    return Event(
        author=author,
        content=types.Content(role="user", parts=[types.Part(function_response=fr)]),
    )


def texts(contents: list[types.Content]) -> list[str]:
    """The text of every part of every content, in order."""
    return [p.text or "" for c in contents for p in c.parts or []]


@pytest.mark.parametrize(
    ("invocation_branch", "event_branch", "visible"),
    [
        ("", "a.b", True),
        ("a.b", "", True),
        ("a.b", "a.b", True),
        ("a.b.c", "a.b", True),
        ("a.b.c", "a", True),
        ("agent_00", "agent_0", False),
        ("agent_0", "agent_00", False),
        ("a.b", "a.b.c", False),
        ("a.b", "a.c", False),
    ],
    ids=[
        "empty-invocation-branch",
        "empty-event-branch",
        "equal",
        "dot-bounded-parent",
        "dot-bounded-grandparent",
        "agent_0-not-ancestor-of-agent_00",
        "agent_00-not-ancestor-of-agent_0",
        "child-invisible",
        "sibling-invisible",
    ],
)
def test_ctx_i1_branch_visibility_table(
    invocation_branch: str, event_branch: str, visible: bool
) -> None:
    """Events are visible on empty branches, equal branches and dot-bounded ancestors only."""
    assert is_branch_visible(invocation_branch, event_branch) is visible


def test_ctx_i1_branch_filter_applies_to_contents() -> None:
    """build_contents keeps ancestor and unbranched events and drops sibling/child ones."""
    events = [
        text_event("root", branch=""),
        text_event("parent", branch="p"),
        text_event("me", branch="p.a"),
        text_event("sibling", branch="p.b"),
        text_event("child", branch="p.a.x"),
        text_event("lookalike", branch="p.ab"),
    ]
    assert texts(build_contents(events, agent_name=AGENT, branch="p.a")) == [
        "root",
        "parent",
        "me",
    ]


def test_ctx_i2_isolation_scope_is_strict_equality() -> None:
    """A scoped agent sees only its scope; an unscoped agent sees only unscoped events."""
    events = [
        text_event("unscoped"),
        text_event("scope-a", isolation_scope="a"),
        text_event("scope-b", isolation_scope="b"),
    ]
    assert texts(build_contents(events, agent_name=AGENT, isolation_scope="a")) == ["scope-a"]
    assert texts(build_contents(events, agent_name=AGENT)) == ["unscoped"]


def test_ctx_i3_empty_events_are_dropped() -> None:
    """Events without content, without parts or with only empty text are dropped."""
    events = [
        Event(author="user"),
        Event(author=AGENT, content=types.Content(role="model", parts=[])),
        text_event("", author=AGENT),
        text_event("kept"),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert texts(contents) == ["kept"]
    assert [c.role for c in contents] == ["user"]


def test_ctx_i4_runtime_request_calls_and_answers_are_dropped() -> None:
    """Confirmation, input and credential request calls and answers never reach the model."""
    buy = types.FunctionCall(id="call-1", name="buy_report", args={"city": "Hangzhou"})
    confirmation = build_confirmation_request_event(
        [buy],
        {"call-1": ToolConfirmation(hint="Buy?")},
        ["adk-c1"],
        event_id="ev",
        invocation_id="e",
        author=AGENT,
    )
    input_request = build_input_request_event(
        [InputRequest(interrupt_id="call-1/input-1", function_call_id="call-1")],
        event_id="ev2",
        invocation_id="e",
        author=AGENT,
    )
    events = [
        call_event("call-1", "buy_report", {"city": "Hangzhou"}),
        confirmation,
        input_request,
        call_event("adk-cred", "adk_request_credential", {}),
        response_event("adk-c1", "adk_request_confirmation", {"confirmed": True}, author="user"),
        response_event("call-1/input-1", "adk_request_input", {"value": 1}, author="user"),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert len(contents) == 1
    [part] = contents[0].parts or []
    assert part.function_call is not None and part.function_call.name == "buy_report"


def test_ctx_i5_other_agents_become_user_context() -> None:
    """Other agents' text, calls and results are retold as user-role context with exact texts."""
    events = [
        text_event("It rains.", author="forecaster"),
        call_event("c9", "get_weather", {"city": "Hangzhou"}, author="forecaster"),
        response_event("c9", "get_weather", {"sky": "rain"}, author="forecaster"),
        text_event("Thanks", author=AGENT),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert [c.role for c in contents] == ["user", "user", "user", "model"]
    assert texts(contents) == [
        "[forecaster] said: It rains.",
        '[forecaster] called tool `get_weather` with parameters: {"city": "Hangzhou"}',
        '[forecaster] `get_weather` tool returned result: {"sky": "rain"}',
        "Thanks",
    ]
    assert all(p.function_call is None for c in contents for p in c.parts or [])


def test_ctx_i5_other_agents_thoughts_are_not_retold() -> None:
    """Another agent's thought parts are not passed on as context."""
    thought = types.Part(text="private reasoning", thought=True)
    event = Event(author="forecaster", content=types.Content(role="model", parts=[thought]))
    assert build_contents([event, text_event("hi")], agent_name=AGENT) == [
        types.Content(role="user", parts=[types.Part(text="hi")])
    ]


def test_ctx_i6_runtime_ids_are_blanked() -> None:
    """Function-call and response ids starting with "adk-" are blanked; others are kept."""
    events = [
        call_event("adk-123", "get_weather", {}),
        response_event("adk-123", "get_weather", {"sky": "sun"}),
        call_event("model-id", "get_weather", {}),
    ]
    contents = build_contents(events, agent_name=AGENT)
    parts = [p for c in contents for p in c.parts or []]
    assert parts[0].function_call is not None and parts[0].function_call.id is None
    assert parts[1].function_response is not None and parts[1].function_response.id is None
    assert parts[2].function_call is not None and parts[2].function_call.id == "model-id"


def test_ctx_i7_only_final_response_is_sent() -> None:
    """A placeholder response is replaced by the resumed one, in the placeholder's place."""
    events = [
        call_event("call-1", "buy_report", {}),
        response_event("call-1", "buy_report", {"status": "waiting"}),
        text_event("yes, buy it"),
        response_event("call-1", "buy_report", {"report": "done"}),
    ]
    contents = build_contents(events, agent_name=AGENT)
    responses = [
        p.function_response for c in contents for p in c.parts or [] if p.function_response
    ]
    assert [r.response for r in responses] == [{"report": "done"}]
    assert contents[1].parts is not None and contents[1].parts[0].function_response is not None
    assert texts(contents)[2] == "yes, buy it"
    assert len(contents) == 3


def test_ctx_i7_input_events_are_not_mutated() -> None:
    """build_contents never changes the events it is given."""
    events = [
        call_event("adk-1", "get_weather", {"city": "Hangzhou"}),
        response_event("adk-1", "get_weather", {"status": "waiting"}),
        response_event("adk-1", "get_weather", {"sky": "sun"}),
        text_event("hi", author="forecaster"),
    ]
    before = [e.model_dump() for e in events]
    build_contents(events, agent_name=AGENT)
    assert [e.model_dump() for e in events] == before


def test_ctx_i7_missing_role_is_inferred() -> None:
    """Contents without a role get "user" for user events and responses, else "model"."""
    fr = types.FunctionResponse(id="c", name="t", response={})
    events = [
        Event(author="user", content=types.Content(parts=[types.Part(text="q")])),
        Event(author=AGENT, content=types.Content(parts=[types.Part(text="a")])),
        Event(author=AGENT, content=types.Content(parts=[types.Part(function_response=fr)])),
    ]
    assert [c.role for c in build_contents(events, agent_name=AGENT)] == ["user", "model", "user"]


def _random_event(rng: random.Random, i: int) -> Event:
    """An event mixing what build_contents treats specially: runtime calls, adk- ids,
    repeated responses, thoughts, blobs, other authors, branches and scopes."""
    parts: list[types.Part] = []
    for _ in range(rng.randint(0, 3)):
        kind = rng.random()
        call_id = rng.choice(["a", "b", "adk-c", None])
        if kind < 0.3:
            parts.append(types.Part(text=rng.choice(["hi", "", "yo"]), thought=rng.random() < 0.1))
        elif kind < 0.55:
            name = rng.choice(["t", "adk_request_confirmation"])
            call = types.FunctionCall(id=call_id, name=name, args={"x": i})
            parts.append(types.Part(function_call=call))
        elif kind < 0.9:
            name = rng.choice(["t", "adk_request_input"])
            response = types.FunctionResponse(id=call_id, name=name, response={"r": i})
            parts.append(types.Part(function_response=response))
        else:
            parts.append(types.Part(inline_data=types.Blob(data=b"x", mime_type="text/plain")))
    return Event(
        author=rng.choice(["user", AGENT, "other"]),
        branch=rng.choice(["", "p", "p.a", "q"]),
        isolation_scope=rng.choice(["", "s"]),
        content=types.Content(role=rng.choice([None, "user", "model"]), parts=parts),
    )


@pytest.mark.parametrize("seed", range(64))
def test_contents_built_step_by_step_equal_contents_built_at_once(seed: int) -> None:
    """A builder extended as a session grows gives what one pass over the whole session
    gives, whatever lands between steps (a later response replaces an earlier one)."""
    rng = random.Random(seed)
    events = [_random_event(rng, i) for i in range(rng.randint(1, 30))]
    scope = {"branch": rng.choice(["", "p.a", "q"]), "isolation_scope": rng.choice(["", "s"])}
    builder = ContentsBuilder(agent_name=AGENT, **scope)
    seen = 0
    while seen < len(events):
        seen = min(len(events), seen + rng.randint(1, 5))
        assert builder.follows(events[:seen])
        builder.extend(events[:seen])
    once = build_contents(events, agent_name=AGENT, **scope)
    assert [c.model_dump() for c in builder.contents()] == [c.model_dump() for c in once]


def test_a_step_converts_only_its_new_events() -> None:
    """Contents of events already seen are the same objects at the next step, except the
    one whose placeholder response a final response replaced."""
    events = [
        text_event("q", author="user"),
        call_event("c1", "get_weather", {"city": "Paris"}),
        response_event("c1", "get_weather", {"status": "waiting"}),
        text_event("meanwhile", author="other"),
    ]
    builder = ContentsBuilder(agent_name=AGENT)
    builder.extend(events)
    before = builder.contents()
    events.append(response_event("c1", "get_weather", {"sky": "sun"}))
    builder.extend(events)
    after = builder.contents()
    assert len(after) == 4
    assert [a is b for a, b in zip(before, after, strict=True)] == [True, True, False, True]
    assert after[2].parts is not None and after[2].parts[0].function_response is not None
    assert after[2].parts[0].function_response.response == {"sky": "sun"}


def test_events_overtaken_by_others_do_not_follow() -> None:
    """Events a failed step saw but never stored, overtaken by another branch's append."""
    stored = [text_event("q", author="user", id="e1")]
    unstored = text_event("lost", id="e2")
    builder = ContentsBuilder(agent_name=AGENT)
    builder.extend([*stored, unstored])
    assert not builder.follows([*stored, text_event("other branch", id="e3"), unstored])
    assert builder.follows([*stored, unstored, text_event("next", id="e4")])


def test_copied_contents_share_nothing_changeable_with_the_events() -> None:
    """What copy_contents returns may be changed without touching the stored events."""
    events = [
        call_event("c1", "get_weather", {"city": "Paris"}),
        response_event("c1", "get_weather", {"sky": "sun"}),
    ]
    before = [e.model_dump() for e in events]
    builder = ContentsBuilder(agent_name=AGENT)
    builder.extend(events)
    for content in copy_contents(builder.contents()):
        for part in content.parts or []:
            if part.function_call is not None and part.function_call.args is not None:
                part.function_call.args["city"] = "Rome"
            if part.function_response is not None and part.function_response.response:
                part.function_response.response["sky"] = "rain"
        content.parts = []
    assert [e.model_dump() for e in events] == before
    assert [len(c.parts or []) for c in builder.contents()] == [1, 1]
