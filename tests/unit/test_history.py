"""SPEC §1.9 (and the history rules of §1.6): what the model sees (CTX-I)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

from adk_temporal.confirmation import build_confirmation_request_event
from adk_temporal.errors import UnmatchedFunctionResponseError
from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation
from adk_temporal.history import (
    ContentsBuilder,
    build_contents,
    copy_contents,
    current_turn,
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
    assert confirmation is not None
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
    """Other agents' text, calls and results are retold as user-role context with ADK's
    exact texts: "For context:" first, compact JSON."""
    events = [
        text_event("It rains.", author="forecaster"),
        call_event("c9", "get_weather", {"city": "Hangzhou", "days": [1, 2]}, author="forecaster"),
        response_event("c9", "get_weather", {"sky": "rain"}, author="forecaster"),
        text_event("Thanks", author=AGENT),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert [c.role for c in contents] == ["user", "user", "user", "model"]
    assert [[p.text for p in c.parts or []] for c in contents] == [
        ["For context:", "[forecaster] said: It rains."],
        [
            "For context:",
            "[forecaster] called tool `get_weather` with parameters: "
            '{"city":"Hangzhou","days":[1,2]}',
        ],
        ["For context:", '[forecaster] `get_weather` tool returned result: {"sky":"rain"}'],
        ["Thanks"],
    ]
    assert all(p.function_call is None for c in contents for p in c.parts or [])


def test_ctx_i5_one_event_retells_each_part_and_null_for_none() -> None:
    """Several parts of one event make one content; a call without arguments and a response
    without a result read null; a blob is passed on as it is."""
    blob = types.Part(inline_data=types.Blob(data=b"png", mime_type="image/png"))
    parts = [
        types.Part(text="Two things.", thought=True),
        types.Part(text="Two things."),
        types.Part(function_call=types.FunctionCall(id="c1", name="now")),
        types.Part(function_response=types.FunctionResponse(id="c1", name="now")),
        blob,
    ]
    event = Event(author="clock", content=types.Content(role="model", parts=parts))
    [content] = build_contents([event], agent_name=AGENT)
    assert content.role == "user"
    assert [p.text for p in content.parts or []] == [
        "For context:",
        "[clock] said: Two things.",
        "[clock] called tool `now` with parameters: null",
        "[clock] `now` tool returned result: null",
        None,
    ]
    assert content.parts is not None and content.parts[-1].inline_data == blob.inline_data


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
        text_event("Bought.", author=AGENT),
    ]
    contents = build_contents(events, agent_name=AGENT)
    responses = [
        p.function_response for c in contents for p in c.parts or [] if p.function_response
    ]
    assert [r.response for r in responses] == [{"report": "done"}]
    assert contents[1].parts is not None and contents[1].parts[0].function_response is not None
    assert texts(contents)[2:] == ["yes, buy it", "Bought."]
    assert len(contents) == 4


def test_ctx_i8_a_late_response_follows_its_call_and_what_came_between_is_dropped() -> None:
    """The latest event answers a call further back: the model sees that call, then the
    final response; the model's and the user's words in between are dropped (ADK's
    rearrangement for long-running calls)."""
    events = [
        text_event("Render the video."),
        call_event("call-1", "render", {"id": 7}),
        response_event("call-1", "render", {"status": "started"}),
        text_event("Rendering has started.", author=AGENT),
        text_event("How long will it take?"),
        text_event("A few minutes.", author=AGENT),
        response_event("call-1", "render", {"status": "done", "url": "v.mp4"}),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert texts(contents)[:1] == ["Render the video."]
    assert [c.role for c in contents] == ["user", "model", "user"]
    [call] = contents[1].parts or []
    assert call.function_call is not None and call.function_call.name == "render"
    [answer] = contents[2].parts or []
    assert answer.function_response is not None
    assert answer.function_response.response == {"status": "done", "url": "v.mp4"}


def test_ctx_i8_responses_to_one_call_event_merge_into_one_content() -> None:
    """Several calls in one event, answered in separate events with text between: one
    content holds their responses, in the order they came, with the text parts of those
    response events."""
    calls = [
        types.Part(text="Starting both."),
        types.Part(function_call=types.FunctionCall(id="a", name="job", args={"n": 1})),
        types.Part(function_call=types.FunctionCall(id="b", name="job", args={"n": 2})),
    ]
    first = types.FunctionResponse(id="a", name="job", response={"done": 1})
    second = types.FunctionResponse(id="b", name="job", response={"done": 2})
    events = [
        Event(author=AGENT, content=types.Content(role="model", parts=calls)),
        Event(
            author=AGENT,
            content=types.Content(
                role="user", parts=[types.Part(function_response=first), types.Part(text="1/2")]
            ),
        ),
        text_event("One is done.", author=AGENT),
        response_event("b", "job", {"done": 2}),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert len(contents) == 2
    assert contents[0].parts is not None and len(contents[0].parts) == 3
    merged = contents[1].parts or []
    assert [p.function_response for p in merged if p.function_response] == [first, second]
    assert [p.text for p in merged if p.text] == ["1/2"]


def test_ctx_i8_a_response_without_its_call_is_an_error_naming_the_id() -> None:
    """The latest response answers a call that is nowhere in history."""
    events = [text_event("hi"), response_event("ghost-7", "render", {"status": "done"})]
    with pytest.raises(UnmatchedFunctionResponseError, match="ghost-7"):
        build_contents(events, agent_name=AGENT)


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
    fc = types.FunctionCall(id="c", name="t", args={})
    fr = types.FunctionResponse(id="c", name="t", response={})
    events = [
        Event(author="user", content=types.Content(parts=[types.Part(text="q")])),
        Event(author=AGENT, content=types.Content(parts=[types.Part(function_call=fc)])),
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
    assert _outcome(builder.contents) == _outcome(
        lambda: build_contents(events, agent_name=AGENT, **scope)
    )


def _outcome(build: Callable[[], list[types.Content]]) -> list[dict[str, Any]] | str:
    """The contents as plain data, or the error building them raised."""
    try:
        return [c.model_dump() for c in build()]
    except UnmatchedFunctionResponseError as err:
        return str(err)


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
    events += [
        response_event("c1", "get_weather", {"sky": "sun"}),
        text_event("Sunny.", author=AGENT),
    ]
    builder.extend(events)
    after = builder.contents()
    assert len(after) == 5
    assert [a is b for a, b in zip(before, after[:4], strict=True)] == [True, True, False, True]
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


def test_include_contents_none_starts_at_the_latest_user_message() -> None:
    """The current turn is what follows the user's latest message, that message included."""
    events = [
        text_event("first question"),
        text_event("first answer", author=AGENT),
        text_event("second question"),
        call_event("c-1", "get_weather", {"city": "Oslo"}),
        response_event("c-1", "get_weather", {"temp": 3}),
    ]
    turn = current_turn(events, agent_name=AGENT)
    assert list(turn) == events[2:]
    assert texts(build_contents(turn, agent_name=AGENT))[0] == "second question"


def test_include_contents_none_starts_at_another_agents_latest_event() -> None:
    """In a pipeline, the turn starts at the previous agent's output, retold as context."""
    events = [text_event("draft it"), text_event("the draft", author="drafter")]
    turn = current_turn(events, agent_name=AGENT)
    assert list(turn) == events[1:]
    assert texts(build_contents(turn, agent_name=AGENT)) == [
        "For context:",
        "[drafter] said: the draft",
    ]


def test_include_contents_none_skips_answers_and_other_branches_as_turn_starts() -> None:
    """A confirmation reply, another branch's or scope's event, or a thought starts no turn."""
    reply = types.FunctionResponse(id="adk-1", name="adk_request_confirmation", response={})
    events = [
        text_event("buy it"),
        call_event("c-1", "buy", {}),
        Event(
            author="user",
            content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
        ),
        text_event("elsewhere", author="other", branch="root.other"),
        text_event("scoped", isolation_scope="call-9"),
        Event(
            author="planner",
            content=types.Content(role="model", parts=[types.Part(text="hm", thought=True)]),
        ),
        response_event("c-1", "buy", {"ok": True}),
    ]
    assert list(current_turn(events, agent_name=AGENT, branch="root.me")) == events


def test_include_contents_none_without_a_turn_start_keeps_every_event() -> None:
    """With no event by the user or another agent, the whole history is the turn (as in Go)."""
    events = [text_event("alone", author=AGENT)]
    assert list(current_turn(events, agent_name=AGENT)) == events


# --- empty parts of kept events (SPEC §1.9) ----------------------------------------------


def _content(role: str, *parts: types.Part) -> types.Content:
    return types.Content(role=role, parts=list(parts))


def _dumped(contents: list[types.Content]) -> list[dict[str, Any]]:
    return [c.model_dump(exclude_none=True) for c in contents]


def test_empty_text_parts_of_kept_events_reach_the_model_unchanged() -> None:
    """Events without content, with no parts or only empty text are dropped; a kept event
    keeps its empty text parts; blobs, file data, code and code results are content
    (ADK-Python tests/unittests/flows/llm_flows/test_contents.py,
    test_events_with_empty_content_are_skipped)."""
    blob = types.Part(inline_data=types.Blob(data=b"test", mime_type="image/png"))
    file = types.Part(file_data=types.FileData(file_uri="gs://b/f.png", mime_type="image/png"))
    code = types.Part(
        executable_code=types.ExecutableCode(code="print(1)", language=types.Language.PYTHON)
    )
    result = types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_OK, output="1"
        )
    )
    mixed = _content("user", types.Part(text=""), types.Part(text="Mixed content"))
    events = [
        text_event("Hello"),
        Event(author=AGENT, actions=EventActions(state_delta={"key": "val"})),
        Event(author=AGENT, content=types.Content(role="model", parts=[])),
        text_event("How are you?"),
        Event(author="user", content=_content("model", types.Part(text=""))),
        Event(author="user", content=_content("model", types.Part(text=""), types.Part(text=""))),
        Event(author="user", content=_content("user", blob)),
        Event(author="user", content=_content("user", file)),
        Event(author="user", content=mixed),
        Event(author=AGENT, content=_content("model", code)),
        Event(author=AGENT, content=_content("model", result)),
    ]
    assert _dumped(build_contents(events, agent_name=AGENT)) == _dumped(
        [
            _content("user", types.Part(text="Hello")),
            _content("user", types.Part(text="How are you?")),
            _content("user", blob),
            _content("user", file),
            mixed,
            _content("model", code),
            _content("model", result),
        ]
    )


def test_a_code_result_after_an_empty_text_part_is_kept_with_it() -> None:
    """A code-execution result in a later part keeps its event, empty text part included
    (ADK-Python test_contents.py, test_code_execution_result_not_in_first_part_is_not_skipped)."""
    result = types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_OK, output="42"
        )
    )
    reply = _content("model", types.Part(text=""), result)
    events = [text_event("Run some code."), Event(author=AGENT, content=reply)]
    contents = build_contents(events, agent_name=AGENT)
    assert _dumped(contents[1:]) == _dumped([reply])


def test_parts_with_nothing_set_are_dropped_and_thought_signatures_kept() -> None:
    """A part with no field set (a stream may close with one) is dropped, as ADK-Go's
    buildContentsDefault drops zero parts; a part carrying only a thought signature is
    kept for the model to get back (ADK-Go internal/llminternal/base_flow_test.go,
    TestIsThoughtOnlyTurn "thought_plus_signature_only_part")."""
    signed = types.Part(thought_signature=b"sig")
    reply = _content("model", types.Part(text="Sunny."), types.Part(), signed)
    [content] = build_contents([Event(author=AGENT, content=reply)], agent_name=AGENT)
    assert _dumped([content]) == _dumped([_content("model", types.Part(text="Sunny."), signed)])


def test_other_agents_empty_text_and_thoughts_are_not_retold() -> None:
    """Another agent's event of thoughts and empty text is no context at all (ADK-Python
    test_contents.py, test_other_agent_empty_content)."""
    events = [
        text_event("Hello"),
        Event(
            author="other_agent1",
            content=_content(
                "model",
                types.Part(text="This is a private thought", thought=True),
                types.Part(text="Another private thought", thought=True),
            ),
        ),
        Event(
            author="other_agent2",
            content=_content(
                "model", types.Part(text="", thought=False), types.Part(text="t", thought=True)
            ),
        ),
        text_event("World"),
    ]
    assert texts(build_contents(events, agent_name=AGENT)) == ["Hello", "World"]


# --- the rearrangement for a late response (ADK-Go contents_processor_test.go,
# TestContentsRequestProcessor_Rearrange) --------------------------------------------------


def _fc(call_id: str, name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _fr(call_id: str, name: str, **response: Any) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def _by(author: str, role: str, *parts: types.Part) -> Event:
    return Event(author=author, content=_content(role, *parts))


_LRO = ("long_call_123", "long_running_tool")
_BASIC = ("call_123", "search_tool")


def _rearrange_cases() -> dict[str, tuple[list[Event], list[types.Content]]]:
    """Each Go case by name: the events, and the contents the model must see."""
    ask = text_event("Run long process and search")
    lro_call = _content("model", _fc(*_LRO, task="process"))
    basic_call = _content("model", _fc(*_BASIC, query="test"))
    basic_answer = _content("user", _fr(*_BASIC, results=["item1", "item2"]))
    final = _fr(*_LRO, status="completed", result="done")
    inter = _fr(*_LRO, status="processing", progress=50)
    lro, normal = _fc("lro_call_456", "long_running_tool"), _fc("normal_call_789", "search_tool")
    normal_answer = _fr("normal_call_789", "search_tool", results=["item1"])
    mixed_final = _fr("lro_call_456", "long_running_tool", status="completed")
    return {
        "Basic function call no rearrangement": (
            [
                ask,
                Event(author=AGENT, content=basic_call),
                Event(author="user", content=basic_answer),
            ],
            [
                _content("user", types.Part(text="Run long process and search")),
                basic_call,
                basic_answer,
            ],
        ),
        "Rearrangement with intermediate response": (
            [
                ask,
                Event(author=AGENT, content=lro_call),
                _by("user", "user", inter),
                text_event("Still processing...", author=AGENT),
                _by("user", "user", final),
            ],
            [_content("user", *ask.parts()), lro_call, _content("user", final)],
        ),
        "Rearrangement preserves unrelated function events": (
            [
                ask,
                Event(author=AGENT, content=lro_call),
                _by("user", "user", inter),
                Event(author=AGENT, content=basic_call),
                Event(author="user", content=basic_answer),
                _by("user", "user", final),
            ],
            [
                _content("user", *ask.parts()),
                lro_call,
                _content("user", final),
                basic_call,
                basic_answer,
            ],
        ),
        "Rearrangement with mixed LRO and normal calls": (
            [
                ask,
                _by(AGENT, "model", lro, normal),
                _by(
                    "user",
                    "user",
                    _fr("lro_call_456", "long_running_tool", progress=25),
                    normal_answer,
                ),
                text_event("Analysis in progress, search completed", author=AGENT),
                _by("user", "user", mixed_final),
            ],
            [
                _content("user", *ask.parts()),
                _content("model", lro, normal),
                _content("user", mixed_final, normal_answer),
            ],
        ),
        "Rearrangement in history (non-final event)": (
            [
                ask,
                Event(author=AGENT, content=lro_call),
                _by("user", "user", inter),
                text_event("Still processing...", author=AGENT),
                _by("user", "user", final),
                text_event("Process completed successfully!", author=AGENT),
                text_event("Great! What's next?"),
            ],
            [
                _content("user", *ask.parts()),
                lro_call,
                _content("user", final),
                _content("model", types.Part(text="Still processing...")),
                _content("model", types.Part(text="Process completed successfully!")),
                _content("user", types.Part(text="Great! What's next?")),
            ],
        ),
        "Rearrangement preserves mixed text parts": (
            [
                ask,
                _by(AGENT, "model", types.Part(text="I'll process this for you"), _fc(*_LRO)),
                _by(
                    "user",
                    "user",
                    types.Part(text="Intermediate prefix"),
                    inter,
                    types.Part(text="Processing..."),
                ),
                text_event("Still working on it...", author=AGENT),
                _by(
                    "user",
                    "user",
                    types.Part(text="Final prefix"),
                    final,
                    types.Part(text="Final suffix"),
                ),
            ],
            [
                _content("user", *ask.parts()),
                _content("model", types.Part(text="I'll process this for you"), _fc(*_LRO)),
                _content(
                    "user",
                    types.Part(text="Intermediate prefix"),
                    final,
                    types.Part(text="Processing..."),
                    types.Part(text="Final prefix"),
                    types.Part(text="Final suffix"),
                ),
            ],
        ),
    }


@pytest.mark.parametrize("case", list(_rearrange_cases()))
def test_rearrangement_follows_adk_go(case: str) -> None:
    """The model sees each Go case's contents: a late response follows its call, merged
    with its earlier responses, and unrelated calls and responses in between stay after
    it (ADK-Go internal/llminternal/contents_processor_test.go,
    TestContentsRequestProcessor_Rearrange, the case of the same name)."""
    events, want = _rearrange_cases()[case]
    assert _dumped(build_contents(events, agent_name=AGENT)) == _dumped(want)


@pytest.mark.parametrize("approved", [True, False])
def test_rearrangement_after_a_confirmation_keeps_only_the_resumed_response(
    approved: bool,
) -> None:
    """A confirmed (or rejected) call's final response replaces its pending one; the
    confirmation request and answer are not shown (ADK-Go contents_processor_test.go,
    TestContentsRequestProcessor_Rearrange, "HITL confirmation approved preserves resumed
    tool response" and "... denied preserves rejected tool response")."""
    call = _fc("hitl_call", "request_vacation_days", days=5)
    final = _fr("hitl_call", "request_vacation_days", accepted=approved)
    events = [
        text_event("Request five vacation days"),
        _by(AGENT, "model", call),
        _by(AGENT, "user", _fr("hitl_call", "request_vacation_days", status="approval needed")),
        _by(AGENT, "model", _fc("hitl_confirmation", "adk_request_confirmation")),
        _by(
            "user", "user", _fr("hitl_confirmation", "adk_request_confirmation", confirmed=approved)
        ),
        _by(AGENT, "user", final),
    ]
    assert _dumped(build_contents(events, agent_name=AGENT)) == _dumped(
        [
            _content("user", types.Part(text="Request five vacation days")),
            _content("model", call),
            _content("user", final),
        ]
    )


def test_rearrangement_keeps_unrelated_pairs_and_drops_words_between() -> None:
    """Between a long-running call and its late answer, the unrelated call/response pairs
    stay (after the answer, in order) while what the user, the model and other agents said
    is dropped (SPEC §1.9 "Long-running tools"; ADK-Go's rule)."""
    weather = _content("model", _fc("w1", "get_weather", city="Oslo"))
    sky = _content("user", _fr("w1", "get_weather", sky="sun"))
    events = [
        text_event("Render the video."),
        call_event("r1", "render", {"id": 7}),
        response_event("r1", "render", {"status": "started"}),
        text_event("Rendering has started.", author=AGENT),
        text_event("And the weather in Oslo?"),
        Event(author=AGENT, content=weather),
        Event(author=AGENT, content=sky),
        text_event("Sunny.", author=AGENT),
        text_event("noted", author="other"),
        response_event("r1", "render", {"status": "done"}),
    ]
    contents = build_contents(events, agent_name=AGENT)
    assert _dumped(contents[3:]) == _dumped([weather, sky])
    [answer] = contents[2].parts or []
    assert answer.function_response is not None
    assert answer.function_response.response == {"status": "done"}
