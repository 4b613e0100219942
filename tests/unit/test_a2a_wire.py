"""The A2A shapes (issue 45): request and answer data parts, content parts both ways, the
reading of a client's answers, task ids, and agent cards."""

from __future__ import annotations

import json

import jsonschema
import pytest
from a2a.types import Part, TaskState
from google.genai import types

from adk_temporal.a2a.answers import desk_answers
from adk_temporal.a2a.card import SECURITY_SCHEME, agent_card
from adk_temporal.a2a.client import _card_location
from adk_temporal.a2a.tasks import TaskRef, TaskView, invocation_for
from adk_temporal.a2a.wire import (
    ANSWER_KEY,
    AnswerPart,
    AskedRequest,
    a2a_parts,
    answer_parts,
    asked_requests,
    data_of,
    data_part,
    genai_parts,
    plain,
)
from adk_temporal.agents import Agent, AgentTool
from adk_temporal.confirmation import call_digest
from adk_temporal.ids import SessionKey

from ..a2a_sample import PAY_REQUEST

CONFIRM = PAY_REQUEST
ASK = AskedRequest(kind="input", request_id="call-2/input-1", message="How many?")


def test_integral_numbers_come_back_as_integers_so_digests_hold() -> None:
    """A data part's doubles are read back as integers where integral: the arguments of a
    call keep their digest across the wire."""
    assert plain({"a": 5.0, "b": [1.5, 2.0], "c": "x"}) == {"a": 5, "b": [1.5, 2], "c": "x"}
    [back] = asked_requests([CONFIRM.part()])
    assert call_digest(back.tool, back.args) == CONFIRM.call_digest


def test_a_request_part_carries_the_schema_its_answer_satisfies() -> None:
    """The answer schema of a request part accepts the answer part that answers it and
    refuses one without the digest, or of the other kind."""
    [confirm, ask] = asked_requests([CONFIRM.part(), ASK.part(), Part(text="hello")])
    good = {
        ANSWER_KEY: {"request_id": "r-pay", "confirmed": True, "call_digest": CONFIRM.call_digest}
    }
    jsonschema.validate(good, confirm.answer_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({ANSWER_KEY: {"confirmed": True}}, confirm.answer_schema)
    jsonschema.validate({ANSWER_KEY: {"input": 4}}, ask.answer_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({ANSWER_KEY: {"confirmed": True}}, ask.answer_schema)


def test_answer_parts_refuse_what_is_not_an_answer() -> None:
    """An answer part with an unknown or mistyped field is refused, naming the part; other
    parts are not answers."""
    fine = AnswerPart(request_id="r-pay", confirmed=True, call_digest="d").part()
    assert [a.confirmed for a in answer_parts([Part(text="x"), fine])] == [True]
    with pytest.raises(ValueError, match=r"part 1 is not an answer.*approve"):
        answer_parts([Part(text="x"), data_part({ANSWER_KEY: {"approve": True}})])
    with pytest.raises(ValueError, match="confirmed"):
        answer_parts([data_part({ANSWER_KEY: {"confirmed": "maybe"}})])
    assert AnswerPart.model_validate({"input": None}).has_input
    assert not AnswerPart.model_validate({"confirmed": True}).has_input


def test_desk_answers_match_each_answer_to_one_open_request() -> None:
    """An answer without a request id goes to the only open request; text answers the one
    open input request; each answer must have its kind's fields."""
    text = desk_answers([ASK], [Part(text="four")])
    assert [(r.request_id, a.input) for r, a in text] == [("call-2/input-1", "four")]
    digest = CONFIRM.call_digest
    both = desk_answers(
        [CONFIRM, ASK],
        [
            AnswerPart(request_id="r-pay", confirmed=False, call_digest=digest).part(),
            AnswerPart(request_id="call-2/input-1", input=None).part(),
        ],
    )
    assert [(r.kind, a.confirmed, a.has_input) for r, a in both] == [
        ("confirmation", False, False),
        ("input", None, True),
    ]


@pytest.mark.parametrize(
    ("requests", "parts", "why"),
    [
        ([CONFIRM], [Part(text="yes")], "answer with a data part"),
        ([CONFIRM, ASK], [AnswerPart(input=1).part()], "give request_id"),
        ([ASK], [AnswerPart(request_id="nope", input=1).part()], "no request 'nope'"),
        ([CONFIRM], [AnswerPart(confirmed=True).part()], "call_digest"),
        ([CONFIRM], [AnswerPart(input=1, call_digest="d").part()], "needs 'confirmed'"),
        ([ASK], [AnswerPart(confirmed=True).part()], "needs 'input'"),
        ([ASK], [AnswerPart(input=1).part(), AnswerPart(input=2).part()], "answered twice"),
    ],
)
def test_desk_answers_refuse_a_message_that_answers_wrongly(
    requests: list[AskedRequest], parts: list[Part], why: str
) -> None:
    """Every way a message can fail to answer is refused before anything is sent."""
    with pytest.raises(ValueError, match=why):
        desk_answers(requests, parts)


def test_content_parts_cross_both_ways() -> None:
    """Text, bytes and URIs cross as themselves; calls as data parts; data comes back as its
    JSON text for a model to read; thoughts stay home."""
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="hi"),
            types.Part(text="hmm", thought=True),
            types.Part(inline_data=types.Blob(data=b"\x00\x01", mime_type="image/png")),
            types.Part(file_data=types.FileData(file_uri="gs://b/o", mime_type="text/plain")),
            types.Part(function_call=types.FunctionCall(name="f", args={"x": 1})),
        ],
    )
    parts = a2a_parts(content)
    assert [p.WhichOneof("content") for p in parts] == ["text", "raw", "url", "data"]
    assert data_of(parts[3]) == {"function_call": {"name": "f", "args": {"x": 1}}}
    back = genai_parts(parts)
    assert back[0].text == "hi"
    assert back[1].inline_data is not None and back[1].inline_data.data == b"\x00\x01"
    assert back[2].file_data is not None and back[2].file_data.file_uri == "gs://b/o"
    assert json.loads(back[3].text or "") == {"function_call": {"name": "f", "args": {"x": 1}}}


def test_a_task_id_names_its_invocation_and_session() -> None:
    """A task id is read back into its invocation and session for the caller's user; ids
    of another shape name no task; one message id starts one invocation per session."""
    key = SessionKey("far", "a2a-u", "ctx-1")
    invocation = invocation_for(key, "m-1")
    assert invocation == invocation_for(key, "m-1") != invocation_for(key, "m-2")
    ref = TaskRef(key, invocation)
    assert TaskRef.parse(ref.task_id, "far", "a2a-u") == ref
    assert ref.context_id == "ctx-1"
    assert TaskRef.parse("e-nothex.ctx", "far", "a2a-u") is None
    assert TaskRef.parse("ctx-1", "far", "a2a-u") is None


def test_answered_requests_leave_the_view_while_the_run_catches_up() -> None:
    """A view that still lists only answered requests reads as working; one that lists
    others keeps asking those."""
    ref = TaskRef(SessionKey("a", "u", "s"), invocation_for(SessionKey("a", "u", "s"), "m"))
    view = TaskView(ref, TaskState.TASK_STATE_INPUT_REQUIRED, requests=[CONFIRM, ASK])
    assert view.without(frozenset({"r-pay"})).requests == [ASK]
    gone = view.without(frozenset({"r-pay", "call-2/input-1"}))
    assert gone.state == TaskState.TASK_STATE_WORKING and not gone.interrupted


def test_a_card_lists_the_agent_its_tools_and_the_bearer_scheme() -> None:
    """The card has a skill for the agent and for each tool below it, streaming, and the
    gateway's bearer tokens as its one security scheme."""

    def lookup(city: str) -> dict[str, str]:
        """Look a city up."""
        return {"city": city}

    helper = Agent(name="helper", model="m", description="Helps.", tools=[lookup])
    root = Agent(name="root", model="m", description="Root.", tools=[AgentTool(helper)])
    card = agent_card(root, "https://gw.example/a2a/root")
    assert [s.id for s in card.skills] == ["root", "helper", "lookup"]
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert card.security_schemes[SECURITY_SCHEME].http_auth_security_scheme.scheme == "bearer"
    assert card.supported_interfaces[0].url == "https://gw.example/a2a/root"


def test_a_card_url_or_a_base_url_finds_the_card() -> None:
    """A remote agent may be given its card's URL or the base URL its card is under."""
    assert _card_location("http://h:1/a2a/x/.well-known/agent-card.json") == (
        "http://h:1/a2a/x",
        "/.well-known/agent-card.json",
    )
    assert _card_location("http://h:1/a2a/x/") == (
        "http://h:1/a2a/x",
        "/.well-known/agent-card.json",
    )
    assert _card_location("http://h:1/card.json") == ("http://h:1", "/card.json")
