"""SPEC §1.6: tool confirmation requests, replies, call binding and the resume set (CTX-F)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from google.genai import types

from adk_temporal.confirmation import (
    ConfirmedCall,
    build_confirmation_request_event,
    call_digest,
    check_reply_digest,
    confirmation_hint,
    confirmation_required_response,
    parse_confirmation_reply,
    rejected_response,
    resume_set,
)
from adk_temporal.errors import ConfirmationMismatchError
from adk_temporal.events import Event, InputRequest, ToolConfirmation
from adk_temporal.resume import build_input_request_event

AGENT = "report_agent"
BUY = types.FunctionCall(id="call-1", name="buy_report", args={"city": "Hangzhou", "price": 3})
WEATHER = types.FunctionCall(id="call-2", name="get_weather", args={"city": "Hangzhou"})
SEND = types.FunctionCall(id="call-3", name="send_email", args={"to": "li@example.com"})


def model_event(*calls: types.FunctionCall, author: str = AGENT) -> Event:
    """The model's event making ``calls``."""
    parts = [types.Part(function_call=c) for c in calls]
    return Event(author=author, content=types.Content(role="model", parts=parts))


def response_event(*pairs: tuple[str, dict[str, Any]], author: str = AGENT) -> Event:
    """A function-response event with one response per ``(call id, response)``."""
    parts = [
        types.Part(function_response=types.FunctionResponse(id=i, name="tool", response=r))
        for i, r in pairs
    ]
    return Event(author=author, content=types.Content(role="user", parts=parts))


def request_event(
    calls: list[types.FunctionCall], ids: list[str], author: str = AGENT, hint: str = "ok?"
) -> Event:
    """The confirmation-request event for ``calls`` with confirmation ``ids``."""
    requested = {c.id or "": ToolConfirmation(hint=hint) for c in calls}
    event = build_confirmation_request_event(
        calls, requested, ids, event_id="ev-req", invocation_id="e-1", author=author
    )
    assert event is not None
    return event


def reply_event(*replies: tuple[str, dict[str, Any] | None]) -> Event:
    """The user's event answering confirmation ids with the given response objects."""
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=cid, name="adk_request_confirmation", response=body
            )
        )
        for cid, body in replies
    ]
    return Event(author="user", content=types.Content(role="user", parts=parts))


def signed(call: types.FunctionCall, body: dict[str, Any]) -> dict[str, Any]:
    """A reply ``body`` bound to ``call`` by its digest, as every accepted reply must be."""
    return {**body, "callDigest": call_digest(call.name, call.args)}


WAITING = {"status": "waiting for approval"}
YES = {"confirmed": True, "payload": None}


def test_ctx_f2_static_gate_texts() -> None:
    """The static gate's hint and pending error are ADK's exact texts."""
    assert confirmation_hint("buy_report") == "Please approve or reject the tool call buy_report()."
    assert confirmation_required_response("buy_report") == {
        "error": "tool buy_report requires confirmation, please approve or reject"
    }


def test_ctx_f3_rejected_text() -> None:
    """A rejected call answers the model with ADK's exact rejection error."""
    assert rejected_response("buy_report") == {"error": "tool buy_report call is rejected"}


def test_ctx_f4_call_digest_is_canonical_sha256() -> None:
    """call_digest hashes sorted-key, space-free JSON of name and args; key order is irrelevant."""
    expected = hashlib.sha256(b'{"args":{"a":1,"b":[2,3]},"name":"t"}').hexdigest()
    assert call_digest("t", {"b": [2, 3], "a": 1}) == expected
    assert call_digest("t", None) == call_digest("t", {})
    assert call_digest("t", {"a": 1}) != call_digest("t", {"a": 2})
    assert call_digest("t", {"a": 1}) != call_digest("u", {"a": 1})


def test_ctx_f5_request_event_carries_original_call_and_digest() -> None:
    """Each request call carries the original call, the requested confirmation and a digest."""
    requested = {"call-1": ToolConfirmation(hint="Buy?", payload={"price": 3})}
    event = build_confirmation_request_event(
        [BUY],
        requested,
        ["adk-c1"],
        event_id="ev-9",
        invocation_id="e-1",
        author=AGENT,
        branch="root",
        timestamp=12.5,
    )
    assert event is not None
    (call,) = event.function_calls()
    assert call.id == "adk-c1"
    assert call.name == "adk_request_confirmation"
    assert call.args == {
        "originalFunctionCall": {"id": "call-1", "name": "buy_report", "args": BUY.args},
        "toolConfirmation": {"hint": "Buy?", "confirmed": False, "payload": {"price": 3}},
        "callDigest": call_digest("buy_report", BUY.args),
    }
    assert (event.id, event.invocation_id, event.author) == ("ev-9", "e-1", AGENT)
    assert (event.branch, event.timestamp) == ("root", 12.5)
    assert event.long_running_tool_ids == ["adk-c1"]


def test_ctx_f6_request_calls_follow_model_call_order() -> None:
    """One request per requesting call, in the model's call order, with the given ids."""
    requested = {"call-3": ToolConfirmation(), "call-1": ToolConfirmation()}
    event = build_confirmation_request_event(
        [BUY, WEATHER, SEND],
        requested,
        ["adk-a", "adk-b"],
        event_id="ev",
        invocation_id="e-1",
        author=AGENT,
    )
    assert event is not None
    calls = event.function_calls()
    assert [c.id for c in calls] == ["adk-a", "adk-b"]
    assert [(c.args or {})["originalFunctionCall"]["id"] for c in calls] == ["call-1", "call-3"]
    assert event.long_running_tool_ids == ["adk-a", "adk-b"]


@pytest.mark.parametrize(
    ("requested", "ids", "message"),
    [
        ({"call-1": ToolConfirmation()}, ["adk-a", "adk-b"], "expected 1 confirmation ids"),
        ({"call-1": ToolConfirmation()}, ["c-a"], "must start with 'adk-'"),
    ],
)
def test_ctx_f6_request_event_refuses_bad_ids(
    requested: dict[str, ToolConfirmation], ids: list[str], message: str
) -> None:
    """A wrong number of confirmation ids or unprefixed ids are refused."""
    with pytest.raises(ValueError, match=message):
        build_confirmation_request_event(
            [BUY], requested, ids, event_id="ev", invocation_id="e", author=AGENT
        )


@pytest.mark.parametrize(
    "requested",
    [{}, {"call-9": ToolConfirmation()}],
    ids=["nothing-requested", "unknown-call-id"],
)
def test_ctx_f6_no_requesting_call_builds_no_event(requested: dict[str, ToolConfirmation]) -> None:
    """Nothing requested, or only for calls the step did not make: no event, no error."""
    event = build_confirmation_request_event(
        [BUY], requested, [], event_id="ev", invocation_id="e", author=AGENT
    )
    assert event is None


def test_ctx_f6_unknown_call_ids_are_ignored_beside_known_ones() -> None:
    """A request for a call the step did not make is left out; the step's own calls ask."""
    requested = {"call-9": ToolConfirmation(), "call-1": ToolConfirmation(hint="Buy?")}
    event = build_confirmation_request_event(
        [BUY], requested, ["adk-a"], event_id="ev", invocation_id="e", author=AGENT
    )
    assert event is not None
    assert [(c.args or {})["originalFunctionCall"]["id"] for c in event.function_calls()] == [
        "call-1"
    ]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            {"confirmed": True, "payload": {"n": 1}},
            ToolConfirmation(confirmed=True, payload={"n": 1}),
        ),
        (
            {"response": json.dumps({"confirmed": True, "hint": "h", "payload": [1]})},
            ToolConfirmation(hint="h", confirmed=True, payload=[1]),
        ),
        ({"confirmed": False}, ToolConfirmation(confirmed=False)),
        ({"confirmed": "yes"}, ToolConfirmation(confirmed=False)),
    ],
    ids=["object", "json-string", "rejected", "non-bool"],
)
def test_ctx_f13_reply_formats(response: dict[str, Any], expected: ToolConfirmation) -> None:
    """Replies parse in both formats; only confirmed=True approves."""
    assert parse_confirmation_reply(response) == expected


@pytest.mark.parametrize("response", [None, {}, {"response": ""}, {"response": "{not json"}])
def test_ctx_f14_empty_or_unreadable_reply_is_rejection(response: dict[str, Any] | None) -> None:
    """An empty or unreadable reply means rejected (fail closed)."""
    assert parse_confirmation_reply(response) == ToolConfirmation(confirmed=False)


def test_ctx_f15_approved_call_resumes_with_same_id_and_decision() -> None:
    """An approval re-dispatches the original call with its own id and the user's decision."""
    events = [
        model_event(BUY),
        response_event(("call-1", WAITING)),
        request_event([BUY], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, {"confirmed": True, "payload": {"price": 2}}))),
    ]
    assert resume_set(events, AGENT) == [
        ConfirmedCall(BUY, ToolConfirmation(confirmed=True, payload={"price": 2}))
    ]


def test_ctx_f15_rejected_call_is_dispatched_with_confirmed_false() -> None:
    """A rejection is dispatched too, so the tool or gate answers the model with an error."""
    reply = reply_event(("adk-c1", signed(BUY, {"confirmed": False})))
    events = [model_event(BUY), request_event([BUY], ["adk-c1"]), reply]
    [(call, decision)] = resume_set(events, AGENT)
    assert call.id == "call-1"
    assert decision.confirmed is False


def test_ctx_f7_conflicting_confirmation_fails_closed() -> None:
    """A confirmation id pointing at two different original calls is never resumed."""
    events = [
        model_event(BUY, SEND),
        request_event([BUY], ["adk-c1"]),
        request_event([SEND], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, YES))),
    ]
    assert resume_set(events, AGENT) == []


def test_ctx_f7_repeated_identical_request_is_not_a_conflict() -> None:
    """The same request recorded twice (a retried append) still resumes its call."""
    events = [
        model_event(BUY),
        request_event([BUY], ["adk-c1"]),
        request_event([BUY], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, YES))),
    ]
    assert [c.call.id for c in resume_set(events, AGENT)] == ["call-1"]


def test_ctx_f8_other_agents_requests_are_skipped() -> None:
    """Requests authored by another agent are never resumed by this one."""
    events = [
        model_event(BUY, author="other_agent"),
        request_event([BUY], ["adk-c1"], author="other_agent"),
        reply_event(("adk-c1", signed(BUY, YES))),
    ]
    assert resume_set(events, AGENT) == []
    assert [c.call.id for c in resume_set(events, "other_agent")] == ["call-1"]


def test_ctx_f8_id_claimed_by_several_authors_fails_closed() -> None:
    """A confirmation id that several agents requested is not resumed by either."""
    events = [
        request_event([BUY], ["adk-c1"], author="other_agent"),
        request_event([BUY], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, YES))),
    ]
    assert resume_set(events, AGENT) == []


def test_ctx_f9_already_answered_call_is_not_rerun() -> None:
    """A call with a response after its confirmation request is not dispatched again."""
    events = [
        model_event(BUY, SEND),
        request_event([BUY, SEND], ["adk-c1", "adk-c3"]),
        response_event(("call-1", {"report": "done"})),
        reply_event(("adk-c1", signed(BUY, YES)), ("adk-c3", signed(SEND, YES))),
    ]
    assert [c.call.id for c in resume_set(events, AGENT)] == ["call-3"]


def test_ctx_f10_several_confirmations_dispatch_once() -> None:
    """Two confirmations for one call dispatch it once, with the latest request's answer."""
    events = [
        model_event(BUY),
        request_event([BUY], ["adk-old"], hint="first"),
        request_event([BUY], ["adk-new"], hint="again"),
        reply_event(
            ("adk-new", signed(BUY, {"confirmed": True, "payload": "new"})),
            ("adk-old", signed(BUY, {"confirmed": True, "payload": "old"})),
        ),
    ]
    assert resume_set(events, AGENT) == [
        ConfirmedCall(BUY, ToolConfirmation(confirmed=True, payload="new"))
    ]


def test_ctx_f11_dispatch_keeps_request_order() -> None:
    """Calls are re-dispatched in the order their requests were made, not reply order."""
    events = [
        model_event(BUY, WEATHER, SEND),
        request_event([BUY, SEND], ["adk-c1", "adk-c3"]),
        request_event([WEATHER], ["adk-c2"]),
        reply_event(
            ("adk-c2", signed(WEATHER, YES)),
            ("adk-c3", signed(SEND, YES)),
            ("adk-c1", signed(BUY, YES)),
        ),
    ]
    assert [c.call.id for c in resume_set(events, AGENT)] == ["call-1", "call-3", "call-2"]


def test_ctx_f11_only_latest_user_event_counts() -> None:
    """Replies in an older user event, or requests made after the reply, are not resumed."""
    events = [
        request_event([BUY], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, YES))),
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")])),
    ]
    assert resume_set(events, AGENT) == []
    late = [reply_event(("adk-c1", signed(BUY, YES))), request_event([BUY], ["adk-c1"])]
    assert resume_set(late, AGENT) == []


def test_ctx_f12_reply_for_different_call_is_refused() -> None:
    """A reply whose digest or original call differs from the request's is refused."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    forged_call = {"id": "call-1", "name": "buy_report", "args": {"city": "Paris", "price": 3}}
    with pytest.raises(ConfirmationMismatchError, match="callDigest 'abc' does not match"):
        check_reply_digest(request, {"confirmed": True, "callDigest": "abc"})
    with pytest.raises(ConfirmationMismatchError, match="names a different originalFunctionCall"):
        check_reply_digest(request, signed(BUY, {"originalFunctionCall": forged_call}))
    with pytest.raises(ConfirmationMismatchError, match="approves a different call"):
        check_reply_digest(
            request, {"response": json.dumps({"confirmed": True, "callDigest": "abc"})}
        )


def test_ctx_f12_matching_reply_passes_digest_check() -> None:
    """A reply carrying the request's own digest, with or without its original call, passes."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    digest = call_digest("buy_report", BUY.args)
    original = {"id": "call-1", "name": "buy_report", "args": dict(BUY.args or {})}
    check_reply_digest(request, {"confirmed": True, "callDigest": digest})
    check_reply_digest(
        request, {"confirmed": True, "callDigest": digest, "originalFunctionCall": original}
    )
    check_reply_digest(
        request, {"response": json.dumps({"confirmed": False, "callDigest": digest})}
    )


@pytest.mark.parametrize(
    "reply",
    [None, {}, {"confirmed": True}, {"response": json.dumps({"confirmed": True})}],
    ids=["none", "empty", "no-digest", "json-string-no-digest"],
)
def test_ctx_f12_reply_without_digest_is_refused(reply: dict[str, Any] | None) -> None:
    """Leaving the digest out of a reply does not skip the binding: the reply is refused."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    with pytest.raises(ConfirmationMismatchError, match="carries no callDigest"):
        check_reply_digest(request, reply)
    events = [model_event(BUY), request_event([BUY], ["adk-c1"]), reply_event(("adk-c1", reply))]
    assert resume_set(events, AGENT) == []


def test_ctx_f12_request_without_digest_is_refused() -> None:
    """A request event without a digest binds nothing, so no reply to it is accepted."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    args = {k: v for k, v in (request.args or {}).items() if k != "callDigest"}
    bare = request.model_copy(update={"args": args})
    with pytest.raises(ConfirmationMismatchError, match="'adk-c1' carries no callDigest"):
        check_reply_digest(bare, signed(BUY, YES))
    event = Event(
        author=AGENT, content=types.Content(role="model", parts=[types.Part(function_call=bare)])
    )
    reply = reply_event(("adk-c1", signed(BUY, YES)))
    assert resume_set([model_event(BUY), event, reply], AGENT) == []


def test_ctx_f12_tampered_request_is_refused() -> None:
    """A request whose stored digest no longer matches its original call is refused."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    args = dict(request.args or {})
    args["originalFunctionCall"] = {**args["originalFunctionCall"], "args": {"price": 0}}
    tampered = request.model_copy(update={"args": args})
    with pytest.raises(ConfirmationMismatchError, match="'adk-c1' is inconsistent"):
        check_reply_digest(tampered, signed(BUY, YES))


def test_ctx_f12_resume_set_skips_mismatched_reply() -> None:
    """resume_set skips (does not resume) a reply bound to a different call."""
    events = [
        model_event(BUY, SEND),
        request_event([BUY, SEND], ["adk-c1", "adk-c3"]),
        reply_event(
            ("adk-c1", {"confirmed": True, "callDigest": call_digest("buy_report", {})}),
            ("adk-c3", signed(SEND, YES)),
        ),
    ]
    assert [c.call.id for c in resume_set(events, AGENT)] == ["call-3"]


def test_ctx_f16_reentered_tool_may_request_again() -> None:
    """After a re-entered call asks again, the answer to the new request resumes it."""
    events = [
        model_event(BUY),
        response_event(("call-1", WAITING)),
        request_event([BUY], ["adk-c1"]),
        reply_event(("adk-c1", signed(BUY, YES))),
        response_event(("call-1", WAITING)),
        request_event([BUY], ["adk-c2"]),
        reply_event(("adk-c2", signed(BUY, {"confirmed": True, "payload": "second"}))),
    ]
    assert resume_set(events, AGENT) == [
        ConfirmedCall(BUY, ToolConfirmation(confirmed=True, payload="second"))
    ]


def test_ctx_f18_confirmation_reply_cannot_answer_input_request() -> None:
    """A confirmation reply addressed to an input request's id resumes nothing."""
    input_event = build_input_request_event(
        [InputRequest(interrupt_id="call-1/input-1", function_call_id="call-1")],
        event_id="ev",
        invocation_id="e-1",
        author=AGENT,
    )
    events = [model_event(BUY), input_event, reply_event(("call-1/input-1", YES))]
    assert resume_set(events, AGENT) == []
