"""SPEC §1.10: merging a step's parallel tool results (CTX-J)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation
from adk_temporal.merge import merge_actions, merge_function_response_events


def response_event(event_id: str, call_id: str, actions: EventActions | None = None) -> Event:
    """A function-response event for one call."""
    fr = types.FunctionResponse(id=call_id, name="tool", response={"call": call_id})
    return Event(
        id=event_id,
        invocation_id="e-1",
        author="agent",
        content=types.Content(role="user", parts=[types.Part(function_response=fr)]),
        actions=actions or EventActions(),
    )


def test_ctx_j1_parts_follow_call_order() -> None:
    """The merged event lists responses in the order given (call index), not completion order."""
    merged = merge_function_response_events(
        [response_event("ev-a", "c1"), response_event("ev-b", "c2"), response_event("ev-c", "c3")]
    )
    assert [r.id for r in merged.function_responses()] == ["c1", "c2", "c3"]


def test_ctx_j2_keeps_first_event_identity() -> None:
    """The merged event keeps the first event's id, invocation, author and role."""
    merged = merge_function_response_events(
        [response_event("ev-a", "c1"), response_event("ev-b", "c2")]
    )
    assert (merged.id, merged.invocation_id, merged.author) == ("ev-a", "e-1", "agent")
    assert merged.content is not None and merged.content.role == "user"


def test_ctx_j2_unions_long_running_ids() -> None:
    """long_running_tool_ids are unioned in first-occurrence order."""
    first = response_event("a", "c1").model_copy(update={"long_running_tool_ids": ["x", "y"]})
    second = response_event("b", "c2").model_copy(update={"long_running_tool_ids": ["y", "z"]})
    merged = merge_function_response_events([first, second])
    assert merged.long_running_tool_ids == ["x", "y", "z"]


def test_ctx_j2_empty_input_is_refused() -> None:
    """Merging no events is an error, not an empty event."""
    with pytest.raises(ValueError, match="needs at least one event"):
        merge_function_response_events([])


def test_ctx_j3_flags_are_ored() -> None:
    """skip_summarization, escalate and end_invocation are true if any call set them."""
    merged = merge_actions(
        [
            EventActions(skip_summarization=True),
            EventActions(escalate=True),
            EventActions(end_invocation=True),
            EventActions(),
        ]
    )
    assert (merged.skip_summarization, merged.escalate, merged.end_invocation) == (True,) * 3
    assert merge_actions([EventActions(), EventActions()]) == EventActions()
    assert merge_actions([]) == EventActions()


def test_ctx_j4_transfer_is_last_non_empty() -> None:
    """transfer_to_agent takes the last non-empty value; later empty values do not clear it."""
    merged = merge_actions(
        [
            EventActions(transfer_to_agent="billing"),
            EventActions(transfer_to_agent="support"),
            EventActions(transfer_to_agent=""),
            EventActions(),
        ]
    )
    assert merged.transfer_to_agent == "support"


def test_ctx_j5_state_delta_deep_merge_later_wins() -> None:
    """state_delta merges nested dicts and lets a later call win per key."""
    merged = merge_actions(
        [
            EventActions(state_delta={"cfg": {"unit": "C", "lang": "zh"}, "n": 1, "x": {"a": 1}}),
            EventActions(state_delta={"cfg": {"unit": "F"}, "n": 2, "x": 5}),
        ]
    )
    assert merged.state_delta == {"cfg": {"unit": "F", "lang": "zh"}, "n": 2, "x": 5}


def test_ctx_j6_artifact_delta_takes_maximum() -> None:
    """artifact_delta keeps the highest version per name, whatever the call order."""
    merged = merge_actions(
        [
            EventActions(artifact_delta={"report.txt": 3, "a.png": 1}),
            EventActions(artifact_delta={"report.txt": 2, "user:b.json": 4}),
        ]
    )
    assert merged.artifact_delta == {"report.txt": 3, "a.png": 1, "user:b.json": 4}


def test_ctx_j7_requests_are_unioned() -> None:
    """Requested confirmations and inputs of all calls are unioned."""
    request = InputRequest(interrupt_id="c2/input-1", function_call_id="c2")
    merged = merge_actions(
        [
            EventActions(requested_tool_confirmations={"c1": ToolConfirmation(hint="a")}),
            EventActions(
                requested_tool_confirmations={"c3": ToolConfirmation(hint="b")},
                requested_inputs={"c2/input-1": request},
            ),
        ]
    )
    assert list(merged.requested_tool_confirmations) == ["c1", "c3"]
    assert merged.requested_inputs == {"c2/input-1": request}


def test_ctx_j7_merge_never_mutates_inputs() -> None:
    """Merging leaves the input actions and events unchanged and shares no mutable values."""
    nested: dict[str, Any] = {"cfg": {"unit": "C"}}
    first = EventActions(
        state_delta=nested, requested_tool_confirmations={"c1": ToolConfirmation()}
    )
    second = EventActions(state_delta={"cfg": {"lang": "zh"}})
    before = (first.model_dump(), second.model_dump())
    merged = merge_actions([first, second])
    merged.state_delta["cfg"]["unit"] = "F"
    merged.requested_tool_confirmations["c1"].confirmed = True
    assert (first.model_dump(), second.model_dump()) == before

    events = [response_event("a", "c1", first), response_event("b", "c2", second)]
    event_dumps = [e.model_dump() for e in events]
    merged_event = merge_function_response_events(events)
    response = merged_event.function_responses()[0].response
    assert response is not None
    response["call"] = "changed"
    merged_event.actions.state_delta["cfg"]["unit"] = "K"
    assert [e.model_dump() for e in events] == event_dumps
