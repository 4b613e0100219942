"""What approvers and operators read: chat cards, waiting times, published request previews,
artifact kinds."""

from __future__ import annotations

import json

from google.genai import types
from rich.console import Console

from adk_temporal.confirmation import confirmation_reply, confirmation_request_call
from adk_temporal.events import Event, EventActions, ToolConfirmation
from adk_temporal.flow.messages import (
    PREVIEW_BYTES,
    InvocationStatus,
    PendingConfirmation,
    PendingInput,
    PendingRequest,
)
from adk_temporal.render import summary_lines
from adk_temporal.web.chat import chat_cards
from adk_temporal.web.humantime import ago, duration, waiting_for
from adk_temporal.web.stored import artifact_content
from adk_temporal.workflows.details import render_details, waiting_line


def _asking_event() -> Event:
    original = types.FunctionCall(id="f-1", name="charge_card", args={"amount": 12})
    asked = ToolConfirmation(hint="Charge $12?", payload={"amount": 12, "currency": "EUR"})
    call = confirmation_request_call("adk-1", original, asked)
    return Event(
        author="billing",
        invocation_id="e-1",
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
    )


def _answer_event(confirmed: bool) -> Event:
    reply = types.FunctionResponse(
        id="adk-1",
        name="adk_request_confirmation",
        response=confirmation_reply(confirmed, None, call_digest="d"),
    )
    return Event(
        author="user",
        invocation_id="e-1",
        content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
    )


def test_an_approval_is_a_card_and_the_runtime_call_shows_only_when_raw() -> None:
    """The chat shows "Approval asked" with the call and payload, then "Approved"; the
    ``adk_request_confirmation`` call itself appears only with raw events on."""
    asked, answered = _asking_event(), _answer_event(True)
    cards = chat_cards(asked) + chat_cards(answered)
    assert [(c.kind, c.title) for c in cards] == [
        ("approval", "Approval asked: Charge $12?"),
        ("answer", "Approved"),
    ]
    assert cards[0].body.startswith("charge_card(amount=12)\n")
    assert json.loads(cards[0].body.split("\n", 1)[1]) == {"amount": 12, "currency": "EUR"}
    shown = " ".join(c.title + c.body for c in cards)
    assert "adk_request_confirmation" not in shown and "callDigest" not in shown
    raw = chat_cards(asked, raw=True) + chat_cards(answered, raw=True)
    assert [c.kind for c in raw] == ["approval", "raw", "answer", "raw"]
    assert "callDigest" in raw[1].body
    assert chat_cards(_answer_event(False))[0].title == "Rejected"


def test_turns_tool_calls_results_and_saves_are_their_own_cards() -> None:
    """A user turn, an agent turn, a tool call with its arguments, its result and the
    artifact it saved each get a card of their kind."""
    user = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")]))
    call = types.FunctionCall(id="f", name="get_weather", args={"city": "Oslo"})
    reply = types.FunctionResponse(id="f", name="get_weather", response={"sky": "clear"})
    agent = Event(
        author="weather_agent",
        content=types.Content(
            role="model",
            parts=[types.Part(text="Looking"), types.Part(function_call=call)],
        ),
    )
    tool = Event(
        author="weather_agent",
        content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
        actions=EventActions(artifact_delta={"report.txt": 2}),
    )
    cards = [c for e in (user, agent, tool) for c in chat_cards(e)]
    assert [(c.kind, c.title) for c in cards] == [
        ("user", "user"),
        ("agent", "weather_agent"),
        ("call", "Tool call: get_weather"),
        ("result", "Tool result: get_weather"),
        ("saved", "Saved report.txt (version 2)"),
    ]
    assert json.loads(cards[2].body) == {"city": "Oslo"}


def test_times_read_as_people_say_them() -> None:
    """Seconds to days in the largest whole unit; an unknown opening time says "waiting"."""
    assert [duration(s) for s in (5, 59, 60, 3 * 3600 + 59, 2 * 86_400)] == [
        "5 s",
        "59 s",
        "1 min",
        "3 h",
        "2 d",
    ]
    assert waiting_for(1000.0, 1000.0 + 3 * 3600) == "waiting 3 h"
    assert waiting_for(None, 5.0) == "waiting"
    assert ago("1970-01-01T00:00:00+00:00", 300.0) == "5 min ago"
    assert ago("not a time", 0.0) == "not a time"


def _request(payload: object, args: dict[str, object]) -> PendingRequest:
    return PendingConfirmation(
        kind="confirmation",
        id="adk-1",
        function_call_id="f-1",
        tool="charge_card",
        args=args,
        hint="Charge?",
        payload=payload,
        opened_at=1234.5,
    )


def test_a_published_request_carries_its_arguments_and_a_bounded_payload() -> None:
    """The memo's summary has the arguments whole, the payload's indented JSON (cut after
    2 KB with "…"), and when the request opened; larger arguments are left to ``call``."""
    small = _request({"amount": 12}, {"amount": 12}).summary()
    assert small.args == {"amount": 12}
    assert small.payload_preview == json.dumps({"amount": 12}, indent=2)
    assert small.opened_at == 1234.5
    big = _request({"lines": ["x" * 100] * 100}, {"blob": "y" * 3000}).summary()
    assert big.args is None
    assert big.payload_preview.endswith("…")
    assert len(big.payload_preview.encode()) <= PREVIEW_BYTES + len("…".encode())
    assert big.payload_size > PREVIEW_BYTES


def test_pending_prints_the_arguments_and_payload_an_approver_approves() -> None:
    """``adk-temporal pending --workflow-id`` shows the arguments and the payload's preview,
    not only its digest."""
    summary = _request({"amount": 12, "currency": "EUR"}, {"amount": 12}).summary()
    console = Console(width=200, record=True)
    for line in summary_lines("adk/a/u/s", summary, "localhost:7233"):
        console.print(line)
    text = console.export_text()
    assert 'args     {"amount": 12}' in text
    assert '"currency": "EUR"' in text


def test_artifacts_are_opened_by_what_they_hold() -> None:
    """Text and valid JSON are shown, a PNG is an image, SVG and other bytes are downloads."""

    def kind(part: types.Part) -> str:
        return artifact_content("a", 1, part).kind

    def blob(data: bytes, mime: str) -> types.Part:
        return types.Part.from_bytes(data=data, mime_type=mime)

    assert kind(types.Part(text="hello")) == "text"
    assert kind(blob(b'{"a": 1}', "application/json")) == "json"
    assert artifact_content("a", 1, blob(b'{"a":1}', "application/json")).shown() == (
        '{\n  "a": 1\n}'
    )
    assert kind(blob(b"{oops", "application/json")) == "text"
    assert kind(blob(b"\x89PNG\r\n", "image/png")) == "image"
    assert kind(blob(b"<svg onload=alert(1)/>", "image/svg+xml")) == "binary"
    assert kind(blob(b"\xff\xfe\x00", "application/octet-stream")) == "binary"


def test_the_details_first_line_says_what_the_run_waits_for() -> None:
    """The Temporal UI's current details open with one scannable line naming the tools."""
    approval = _request({"amount": 12}, {"amount": 12})
    asked = PendingInput(kind="input", id="adk-2", function_call_id="f-1", tool="ask_dates")
    now = InvocationStatus(
        status="awaiting_confirmation", invocation_id="e-1", agent="billing", step=1
    )
    details = render_details("adk/a/u/s", now, [approval, approval, asked])
    assert details.split("\n")[0] == ("### waiting for approval: charge_card; input: ask_dates")
    assert waiting_line([asked]) == "waiting for input: ask_dates"


def test_an_answer_card_says_who_answered_through_what_and_when() -> None:
    """The run's record of an answer (principal, channel, the workflow's time) and any
    edited arguments are on the answer's card; older answers without one show none."""
    event = _answer_event(True)
    assert event.content is not None and event.content.parts
    reply = event.content.parts[0].function_response
    assert reply is not None and reply.response is not None
    reply.response["answered"] = {"by": "alice", "channel": "console", "at": 0.0}
    reply.response["editedArgs"] = {"amount": 10}
    [card] = chat_cards(event)
    assert card.title == "Approved"
    assert card.body.splitlines()[0] == "by alice via console at 1970-01-01 00:00:00 UTC"
    assert "with edited arguments" in card.body and '"amount": 10' in card.body
    assert chat_cards(_answer_event(True))[0].body == ""
