"""SPEC §1.2 (wire format of EventActions, CTX-B8…B10) and the Event helpers."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from adk_temporal.errors import InvocationErrorCode
from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation


def test_ctx_b8_event_actions_json_keys() -> None:
    """EventActions serialises with ADK's snake_case keys (plus requested_inputs)."""
    keys = set(json.loads(EventActions().model_dump_json()))
    assert keys == {
        "state_delta",
        "artifact_delta",
        "requested_tool_confirmations",
        "requested_inputs",
        "skip_summarization",
        "transfer_to_agent",
        "escalate",
        "end_invocation",
        "rewind_before_invocation_id",
        "compaction",
        "route",
    }


def test_ctx_b9_empty_maps_serialise_as_empty_objects() -> None:
    """Empty maps serialise as {} — including maps given as None — never as null."""
    given_none = EventActions.model_validate({"state_delta": None, "requested_inputs": None})
    for actions in (EventActions(), given_none):
        data = json.loads(actions.model_dump_json())
        for key in (
            "state_delta",
            "artifact_delta",
            "requested_tool_confirmations",
            "requested_inputs",
        ):
            assert data[key] == {}
    event = Event.model_validate({"actions": None})
    assert json.loads(event.model_dump_json())["actions"]["state_delta"] == {}


def test_ctx_b10_event_actions_round_trip() -> None:
    """Actions with deltas and requests survive a JSON round trip unchanged."""
    actions = EventActions(
        state_delta={"user:name": "Li", "nested": {"a": [1, None]}},
        artifact_delta={"report.txt": 2},
        requested_tool_confirmations={"call-1": ToolConfirmation(hint="ok?", payload={"p": 1})},
        requested_inputs={
            "call-2/input-1": InputRequest(interrupt_id="call-2/input-1", function_call_id="call-2")
        },
        skip_summarization=True,
        transfer_to_agent="billing",
    )
    assert EventActions.model_validate_json(actions.model_dump_json()) == actions
    assert not actions.is_empty()
    assert EventActions().is_empty()


def test_event_helpers_split_parts() -> None:
    """Event exposes its calls, responses and non-thought text; pauses count as final."""
    event = Event(
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="thinking", thought=True),
                types.Part(text="Checking. "),
                types.Part(function_call=types.FunctionCall(id="c1", name="get_weather")),
                types.Part(function_response=types.FunctionResponse(id="c0", name="t")),
            ],
        )
    )
    assert event.text() == "Checking. "
    assert [c.id for c in event.function_calls()] == ["c1"]
    assert [r.id for r in event.function_responses()] == ["c0"]
    assert not event.is_final_response()
    assert event.model_copy(update={"long_running_tool_ids": ["c1"]}).is_final_response()
    assert Event().parts() == []


# Ported from ADK-Python tests/unittests/events/test_event.py (the is_final_response and
# has_trailing_code_execution_result cases); the rule is ADK-Go's Event.IsFinalResponse
# (session/session.go), which has no unit test of its own.


def _model_event(parts: list[types.Part] | None = None, **fields: Any) -> Event:
    content = types.Content(role="model", parts=parts) if parts is not None else None
    return Event(author="agent", content=content, **fields)


def _code_result(output: str = "42") -> types.Part:
    result = types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output=output)
    return types.Part(code_execution_result=result)


_TEXT = types.Part(text="hello")
_CALL = types.Part(function_call=types.FunctionCall(name="my_func", args={"x": 1}))
_RESPONSE = types.Part(function_response=types.FunctionResponse(name="my_func", response={}))


@pytest.mark.parametrize(
    ("event", "final"),
    [
        (_model_event([_TEXT]), True),
        (_model_event(), True),
        (_model_event([_TEXT, _CALL]), False),
        (_model_event([_RESPONSE]), False),
        (_model_event([_TEXT], partial=True), False),
        (_model_event([_TEXT, _code_result()]), False),
        (_model_event([_code_result(), _TEXT]), True),
        (_model_event([_RESPONSE], actions=EventActions(skip_summarization=True)), True),
        (_model_event([_CALL], long_running_tool_ids=["tool-1"]), True),
    ],
    ids=[
        "plain_text_event_is_final",
        "empty_event_is_final",
        "with_function_call_is_not_final",
        "with_function_response_is_not_final",
        "partial_event_is_not_final",
        "with_trailing_code_result_is_not_final",
        "code_result_before_text_is_final",
        "skip_summarization_overrides_function_response",
        "long_running_tool_ids_overrides_function_call",
    ],
)
def test_is_final_response(event: Event, final: bool) -> None:
    """A reply is final unless it calls, answers, is partial or ends in a code result;
    a pause (skip_summarization, long-running calls) is always final."""
    assert event.is_final_response() is final


@pytest.mark.parametrize(
    ("event", "trailing"),
    [
        (_model_event([_TEXT, _code_result()]), True),
        (_model_event([_code_result(), _TEXT]), False),
        (_model_event(), False),
        (_model_event([]), False),
    ],
    ids=["true_when_last", "false_when_not_last", "false_no_content", "false_empty_parts"],
)
def test_has_trailing_code_execution_result(event: Event, trailing: bool) -> None:
    """Only a code-execution result in the last part counts as trailing."""
    assert event.has_trailing_code_execution_result() is trailing


def test_the_flow_ends_invocations_only_with_codes_of_the_register() -> None:
    """Every error code the flow stores for its own reasons is an InvocationErrorCode: no
    string literal stands in for one (they drifted apart before)."""
    flow = Path(__file__).resolve().parents[2] / "adk_temporal" / "flow"
    literals = {
        node.value
        for path in flow.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert literals & {code.value for code in InvocationErrorCode} == set()
