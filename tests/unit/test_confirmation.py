"""SPEC §1.6: tool confirmation requests, replies and call binding (CTX-F).

Which calls the runtime re-dispatches is the flow's rule: tests/unit/test_request_book.py
and tests/flow/test_confirmation_dispatch.py prove it against the real implementation.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from google.genai import types

from adk_temporal.confirmation import (
    build_confirmation_request_event,
    call_digest,
    check_reply_digest,
    confirmation_hint,
    confirmation_reply,
    confirmation_required_response,
    rejected_response,
)
from adk_temporal.errors import ConfirmationMismatchError
from adk_temporal.events import Event, ToolConfirmation

AGENT = "report_agent"
BUY = types.FunctionCall(id="call-1", name="buy_report", args={"city": "Hangzhou", "price": 3})
WEATHER = types.FunctionCall(id="call-2", name="get_weather", args={"city": "Hangzhou"})
SEND = types.FunctionCall(id="call-3", name="send_email", args={"to": "li@example.com"})


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


def signed(call: types.FunctionCall, body: dict[str, Any]) -> dict[str, Any]:
    """A reply ``body`` bound to ``call`` by its digest, as every accepted reply must be."""
    return {**body, "callDigest": call_digest(call.name, call.args)}


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


def test_ctx_f13_reply_shape() -> None:
    """The reply the runtime records is {confirmed, payload, callDigest}, in that key order."""
    reply = confirmation_reply(True, {"price": 2}, call_digest="d1")
    assert reply == {"confirmed": True, "payload": {"price": 2}, "callDigest": "d1"}
    assert list(reply) == ["confirmed", "payload", "callDigest"]
    assert json.dumps(confirmation_reply(False, None, call_digest="d2")) == (
        '{"confirmed": false, "payload": null, "callDigest": "d2"}'
    )


@pytest.mark.parametrize("confirmed", [True, False])
def test_ctx_f13_expired_reply_shape(confirmed: bool) -> None:
    """An expired request's reply is a rejection marked expired, without a payload."""
    reply = confirmation_reply(confirmed, {"price": 2}, call_digest="d1", expired=True)
    assert json.dumps(reply) == '{"confirmed": false, "expired": true, "callDigest": "d1"}'


def test_ctx_f13_recorded_reply_passes_its_digest_check() -> None:
    """A reply shaped by confirmation_reply with the request's digest is bound to its call."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    digest = (request.args or {})["callDigest"]
    check_reply_digest(request, confirmation_reply(True, None, call_digest=digest))
    check_reply_digest(request, confirmation_reply(False, None, call_digest=digest, expired=True))
    with pytest.raises(ConfirmationMismatchError, match="approves a different call"):
        check_reply_digest(request, confirmation_reply(True, None, call_digest="abc"))


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


def test_ctx_f12_request_without_digest_is_refused() -> None:
    """A request event without a digest binds nothing, so no reply to it is accepted."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    args = {k: v for k, v in (request.args or {}).items() if k != "callDigest"}
    bare = request.model_copy(update={"args": args})
    with pytest.raises(ConfirmationMismatchError, match="'adk-c1' carries no callDigest"):
        check_reply_digest(bare, signed(BUY, YES))


def test_ctx_f12_tampered_request_is_refused() -> None:
    """A request whose stored digest no longer matches its original call is refused."""
    request = request_event([BUY], ["adk-c1"]).function_calls()[0]
    args = dict(request.args or {})
    args["originalFunctionCall"] = {**args["originalFunctionCall"], "args": {"price": 0}}
    tampered = request.model_copy(update={"args": args})
    with pytest.raises(ConfirmationMismatchError, match="'adk-c1' is inconsistent"):
        check_reply_digest(tampered, signed(BUY, YES))
