"""SPEC §1.7: resume inputs — the holder, schema checks and the request event (CTX-G)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from pydantic import ValidationError

from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.events import InputRequest
from adk_temporal.resume import (
    Resumed,
    build_input_request_event,
    build_request_event,
    check_input_schema,
    check_resume_input,
    default_interrupt_id,
)

SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
    "required": ["amount"],
}


def _request(schema: dict[str, Any] | None = SCHEMA) -> InputRequest:
    return InputRequest(
        interrupt_id="call-1/input-1",
        function_call_id="call-1",
        message="How many reports?",
        input_schema=schema,
    )


def test_ctx_g1_default_interrupt_id_format() -> None:
    """Default interrupt ids are "<function_call_id>/input-<n>", never the call id itself."""
    assert default_interrupt_id("call-1", 1) == "call-1/input-1"
    assert default_interrupt_id("call-1", 2) == "call-1/input-2"
    assert default_interrupt_id("call-1", 1) != "call-1"


def test_ctx_g1_input_request_event() -> None:
    """The request event has one adk_request_input call per request, id = interrupt id."""
    second = InputRequest(interrupt_id="city", function_call_id="call-2", message="Which city?")
    event = build_input_request_event(
        [_request(), second],
        event_id="ev-1",
        invocation_id="e-1",
        author="report_agent",
        branch="root",
        isolation_scope="s",
        timestamp=3.0,
    )
    calls = event.function_calls()
    assert [(c.id, c.name) for c in calls] == [
        ("call-1/input-1", "adk_request_input"),
        ("city", "adk_request_input"),
    ]
    assert calls[0].args == {
        "message": "How many reports?",
        "schema": SCHEMA,
        "functionCallId": "call-1",
    }
    assert event.long_running_tool_ids == ["call-1/input-1", "city"]
    assert (event.id, event.author, event.branch, event.isolation_scope) == (
        "ev-1",
        "report_agent",
        "root",
        "s",
    )
    assert event.timestamp == 3.0


def test_ctx_g1_request_event_needs_calls_with_ids() -> None:
    """A request event without calls, or with a call lacking an id, is refused."""
    with pytest.raises(ValueError, match="at least one request call"):
        build_input_request_event([], event_id="e", invocation_id="i", author="a")
    with pytest.raises(ValueError, match="every request call needs an id"):
        build_request_event(
            [types.FunctionCall(name="adk_request_input")],
            event_id="e",
            invocation_id="i",
            author="a",
        )


def test_ctx_g2_resumed_holder_distinguishes_none() -> None:
    """Resumed(value=None) is a real answer, frozen, and differs from no answer."""
    answered = Resumed(value=None)
    assert answered.value is None
    assert answered is not None
    assert answered == Resumed(value=None)
    assert answered != Resumed(value=0)
    with pytest.raises(ValidationError, match="frozen"):
        answered.value = 1
    with pytest.raises(ValidationError, match="value"):
        Resumed()  # type: ignore[call-arg]


def test_ctx_g3_valid_input_is_accepted() -> None:
    """An answer satisfying the schema passes; a request without schema accepts anything."""
    check_resume_input(_request(), {"amount": 2, "note": "asap"})
    check_resume_input(_request(None), None)
    check_resume_input(_request(None), {"anything": [1, 2]})


def test_ctx_g3_invalid_input_names_path_and_reason() -> None:
    """A violating answer raises InvalidResumeInputError naming each path and reason."""
    with pytest.raises(InvalidResumeInputError) as caught:
        check_resume_input(_request(), {"amount": "ten", "note": 5})
    assert str(caught.value) == (
        "input for interrupt 'call-1/input-1' does not satisfy its schema: "
        "$.amount: 'ten' is not of type 'integer'; $.note: 5 is not of type 'string'"
    )
    assert isinstance(caught.value, ValueError)


def test_ctx_g3_missing_required_field_is_reported_at_root() -> None:
    """A missing required property is reported at the object's path."""
    with pytest.raises(InvalidResumeInputError, match=r"\$: 'amount' is a required property"):
        check_resume_input(_request(), {})
    with pytest.raises(InvalidResumeInputError, match=r"\$.amount: 0 is less than the minimum"):
        check_resume_input(_request(), {"amount": 0})


def test_ctx_g4_invalid_schema_is_refused() -> None:
    """check_input_schema refuses a schema that is not valid JSON schema."""
    check_input_schema(SCHEMA)
    with pytest.raises(ValueError, match=r"^invalid input schema for request_input: 'x' is not"):
        check_input_schema({"type": "object", "required": "x"})
