"""What a session store keeps cannot be changed through the events handed in or out.

``prepare_events`` copies every appended event once, and the in-memory store keeps those
copies as they are: every changeable object of an event (its content, parts, call arguments,
responses, actions and their requests) must be the store's own. Checked two ways: the
prepared copy shares no changeable object with the caller's event, and, on every backend,
changing anything in the appended or the returned events leaves what ``get`` reads as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any

from google.genai import types
from pydantic import BaseModel

from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import (
    SessionService,
)
from adk_temporal.sessions.rules import prepare_events

from .conftest import rich_event

KEY = SessionKey("isolation_app", "alice", "s-1")


def _handed_in() -> Event:
    """The rich event as a caller hands it in: no time yet, and a ``temp:`` key the store
    leaves out."""
    event = rich_event().model_copy(update={"timestamp": 0.0})
    event.actions.state_delta["temp:scratch"] = {"x": 1}
    return event


STORED_DELTA = {"user:plan": "pro", "nested": {"x": [1, {"y": None}]}}
"""The rich event's state delta as the store keeps it."""


def _changeable(value: Any) -> Iterator[object]:
    """Every object reachable from ``value`` that could be changed in place."""
    if isinstance(value, str | int | float | bytes | Enum) or value is None:
        return
    yield value
    if isinstance(value, BaseModel):
        children: list[Any] = [*value.__dict__.values(), value.__pydantic_extra__]
    elif isinstance(value, dict):
        children = list(value.values())
    else:
        assert isinstance(value, list | tuple), f"unexpected type in an event: {type(value)}"
        children = list(value)
    for child in children:
        yield from _changeable(child)


def test_a_prepared_event_shares_no_changeable_object_with_the_callers() -> None:
    """The copy is whole: not one model, dict or list of the input is reachable from it."""
    event = _handed_in()
    before = event.model_dump()

    (prepared,) = prepare_events([event], now=5.0)

    shared = {id(o) for o in _changeable(event)} & {id(o) for o in _changeable(prepared)}
    assert not shared
    assert prepared.model_dump(exclude={"timestamp", "actions"}) == event.model_dump(
        exclude={"timestamp", "actions"}
    )
    assert prepared.actions.state_delta == STORED_DELTA
    assert prepared.actions.model_dump(exclude={"state_delta"}) == event.actions.model_dump(
        exclude={"state_delta"}
    )
    assert prepared.timestamp == 5.0
    assert event.model_dump() == before  # the caller's event is untouched


def _vandalise(event: Event) -> None:
    """Change every changeable part of ``event`` in place."""
    content = event.content
    assert content is not None and content.parts is not None
    text, call, response, blob = content.parts
    text.text = "changed"
    assert call.function_call is not None and call.function_call.args is not None
    call.function_call.args["pages"][1]["n"] = 99
    call.function_call.args["city"] = "Bergen"
    assert response.function_response is not None
    assert response.function_response.response is not None
    response.function_response.response["temp"]["c"].append(-40.0)
    assert blob.inline_data is not None
    blob.inline_data.data = b"GIF8"
    content.parts.append(types.Part(text="added"))
    actions = event.actions
    actions.state_delta["nested"]["x"][1]["y"] = "changed"
    actions.artifact_delta["report.txt"] = 9
    confirmation = actions.requested_tool_confirmations["call-1"]
    confirmation.payload["amount"].append(6)
    confirmation.hint = "changed"
    request = actions.requested_inputs["adk-input-1"]
    assert request.input_schema is not None
    request.input_schema["required"].append("y")
    event.long_running_tool_ids.append("adk-other")
    assert event.usage_metadata is not None
    event.usage_metadata.total_token_count = 0


async def test_changing_the_appended_or_returned_events_leaves_the_store_as_it_was(
    service: SessionService,
) -> None:
    """Every nested object of the input, of append's result and of a read is changed; the
    store reads back what was appended."""
    await service.create(KEY)
    event = _handed_in()
    returned = await service.append_events(KEY, [event])
    expected = (await service.get(KEY)).events[0].model_dump()

    _vandalise(event)
    _vandalise(returned[0])
    _vandalise((await service.get(KEY)).events[0])

    (stored,) = (await service.get(KEY)).events
    assert stored.model_dump() == expected
    assert stored.actions.state_delta == STORED_DELTA
    assert stored.content is not None and stored.content.parts is not None
    assert len(stored.content.parts) == 4
