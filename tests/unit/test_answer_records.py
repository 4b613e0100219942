"""Answers carry who and how: the run stamps its own time, the audit reads it back."""

from __future__ import annotations

from google.genai import types

from adk_temporal.audit import audit_entries
from adk_temporal.budgets import Budgets
from adk_temporal.events import Event
from adk_temporal.flow.messages import ConfirmInput, ResumeInput
from adk_temporal.flow.requests import ANSWERED_KEY, answer_record, parse_answer, stamped


def test_an_answer_without_who_or_channel_is_still_accepted() -> None:
    """A signal shaped before answers were stamped parses, with nothing claimed."""
    parsed = parse_answer(
        "confirmation", {"confirmation_id": "adk-1", "confirmed": True}, Budgets()
    )
    assert isinstance(parsed, ConfirmInput)
    assert (parsed.answered_by, parsed.channel, parsed.answered_at) == (None, None, None)


def test_the_run_stamps_its_time_over_the_senders_and_keeps_a_named_channel() -> None:
    """``stamped`` replaces the sender's time with the run's; a named channel is kept, a
    missing one becomes the way the answer came."""
    sent = ConfirmInput(confirmation_id="adk-1", confirmed=True, answered_at=1.0, channel="cli")
    assert stamped(sent, now=50.0, channel="update").model_dump(
        include={"answered_at", "channel"}
    ) == {"answered_at": 50.0, "channel": "cli"}
    bare = ResumeInput(interrupt_id="i-1", input=None)
    assert stamped(bare, now=7.0, channel="signal").channel == "signal"
    assert answer_record(bare) is None


def _request(request_id: str, tool: str) -> Event:
    call = types.FunctionCall(
        id=request_id,
        name="adk_request_confirmation",
        args={"originalFunctionCall": {"id": "c-1", "name": tool, "args": {}}},
    )
    return Event(
        author="agent", content=types.Content(role="model", parts=[types.Part(function_call=call)])
    )


def _reply(request_id: str, response: dict[str, object]) -> Event:
    reply = types.FunctionResponse(
        id=request_id, name="adk_request_confirmation", response=response
    )
    return Event(
        id="e-reply",
        invocation_id="e-inv",
        author="user",
        content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
    )


def test_the_audit_lists_each_reply_with_its_tool_decision_and_record() -> None:
    """A stamped reply lists who, channel, when and digest; an expired one says so; one
    recorded before stamping lists no principal."""
    who = {"by": "alice", "channel": "cli", "at": 10.0}
    events = [
        _request("adk-1", "pay"),
        _reply(
            "adk-1", {"confirmed": True, "payload": None, "callDigest": "d1", ANSWERED_KEY: who}
        ),
        _request("adk-2", "pay"),
        _reply("adk-2", {"confirmed": False, "expired": True, "callDigest": "d2"}),
    ]
    first, second = audit_entries(events)
    assert first.model_dump(exclude={"event_id", "invocation_id"}) == {
        "request_id": "adk-1",
        "kind": "confirmation",
        "tool": "pay",
        "decision": "approved",
        "answered_by": "alice",
        "channel": "cli",
        "answered_at": 10.0,
        "call_digest": "d1",
        "vote": False,
        "assignee": None,
        "grant_id": None,
        "resolution": None,
        "edited_args": None,
        "edited_call_digest": "",
    }
    assert (second.decision, second.answered_by, second.call_digest) == ("expired", None, "d2")
