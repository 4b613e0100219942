"""The typed boundaries decode what earlier releases recorded: a tool step's result and an
open request, each a union told apart by a tag (issue 42, item 3)."""

from __future__ import annotations

from typing import Any, cast

from pydantic import TypeAdapter

from adk_temporal.converter import AdkPayloadConverter
from adk_temporal.events import EventActions
from adk_temporal.flow.messages import (
    CarriedRequest,
    InlineResult,
    PendingConfirmation,
    PendingInput,
    PendingRequest,
    StagedResult,
    ToolCallResult,
)

RESULTS: TypeAdapter[Any] = TypeAdapter(ToolCallResult)
REQUESTS: TypeAdapter[Any] = TypeAdapter(PendingRequest)

FLAT_CONFIRMATION = {
    "kind": "confirmation",
    "id": "adk-1",
    "function_call_id": "call-1",
    "tool": "buy",
    "args": {"city": "Oslo"},
    "hint": "Buy it?",
    "payload": {"price": 2},
    "message": "",
    "input_schema": None,
    "call_digest": "d1",
    "agent": "a",
    "branch": "",
    "expires_at": None,
    "long_running": False,
    "opened_at": 1.0,
    "edit_schema": None,
}
"""An open confirmation as releases before the union recorded it: every field of both kinds."""


def test_recorded_tool_results_decode_into_their_arms() -> None:
    """A staged id makes a staged result; a null one (the legacy inline shape) an inline
    result with its response; actions come along either way."""
    staged = RESULTS.validate_python(
        {"response": None, "staged": "e-1/call-1", "actions": {"state_delta": {"k": 1}}}
    )
    assert staged == StagedResult(staged="e-1/call-1", actions=EventActions(state_delta={"k": 1}))
    inline = RESULTS.validate_python({"response": {"ok": True}, "staged": None, "actions": {}})
    assert inline == InlineResult(response={"ok": True})


def test_a_result_round_trips_through_the_payload_converter_without_the_other_arm() -> None:
    """What a step returns crosses history as its own arm: no null fields of the other."""
    converter = AdkPayloadConverter()
    [payload] = converter.to_payloads([StagedResult(staged="~/c1")])
    assert b'"response"' not in payload.data
    # As an activity's declared return type reaches the converter: the union alias itself.
    [back] = converter.from_payloads([payload], [cast(type, ToolCallResult)])
    assert back == StagedResult(staged="~/c1")


def test_a_flat_recorded_request_decodes_into_its_kind() -> None:
    """A confirmation recorded with every field of both kinds becomes a confirmation (the
    input fields dropped), and an input request an input request; carried requests too."""
    confirmation = REQUESTS.validate_python(FLAT_CONFIRMATION)
    assert isinstance(confirmation, PendingConfirmation)
    assert (confirmation.hint, confirmation.call_digest) == ("Buy it?", "d1")
    flat_input = {**FLAT_CONFIRMATION, "kind": "input", "message": "When?", "long_running": True}
    asked = REQUESTS.validate_python(flat_input)
    assert isinstance(asked, PendingInput)
    assert (asked.message, asked.long_running) == ("When?", True)
    carried = CarriedRequest.model_validate({"pending": flat_input})
    assert carried.pending == asked


def test_a_request_keeps_its_kind_through_the_payload_converter() -> None:
    """The converter leaves defaults out; the tag is required, so a listed request of either
    kind decodes as itself (queries and carried requests cross history this way)."""
    converter = AdkPayloadConverter()
    asked = [
        PendingConfirmation(kind="confirmation", id="adk-1", function_call_id="c", tool="t"),
        PendingInput(kind="input", id="i-1", function_call_id="c", tool="t"),
    ]
    [payload] = converter.to_payloads([asked])
    [back] = converter.from_payloads([payload], [cast(type, list[PendingRequest])])
    assert back == asked
