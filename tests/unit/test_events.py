"""SPEC §1.2 (wire format of EventActions, CTX-B8…B10) and the Event helpers."""

from __future__ import annotations

import json

from google.genai import types

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
