"""The pure parts of rewind: the model's view after rewinds (history.without_rewound and the
contents builder) and the state delta a rewind computes."""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_temporal.events import Event, EventActions
from adk_temporal.history import ContentsBuilder, build_contents, current_turn, without_rewound
from adk_temporal.rewind import artifact_versions, rewind_state_delta, state_before
from adk_temporal.sessions import REMOVED_STATE_VALUE


def _turn(invocation: str, text: str, author: str = "user") -> Event:
    content = types.Content(
        role="user" if author == "user" else "model", parts=[types.Part(text=text)]
    )
    return Event(
        id=f"{invocation}-{author}", invocation_id=invocation, author=author, content=content
    )


def _rewind(event_id: str, before: str) -> Event:
    actions = EventActions(rewind_before_invocation_id=before)
    return Event(id=event_id, invocation_id=event_id, author="user", actions=actions)


def _ids(events: list[Event]) -> list[str]:
    return [e.id for e in events]


def test_a_rewind_drops_itself_and_the_range_from_its_invocation() -> None:
    """Events from the named invocation's first event to the rewind event are left out."""
    events = [_turn("i-1", "a"), _turn("i-2", "b"), _turn("i-2", "c", "agent"), _rewind("r", "i-2")]
    assert _ids(without_rewound([*events, _turn("i-3", "d")])) == ["i-1-user", "i-3-user"]


def test_a_later_rewind_takes_an_earlier_one_back_with_its_range() -> None:
    """A rewind whose range holds an earlier rewind drops it; rewinding to before a rewind
    event undoes it; a rewind naming no invocation drops only itself."""
    first = [_turn("i-1", "a"), _turn("i-2", "b"), _rewind("r1", "i-2"), _turn("i-3", "c")]
    assert _ids(without_rewound([*first, _rewind("r2", "i-1")])) == []
    undone = without_rewound([*first, _rewind("r2", "r1")])
    assert _ids(undone) == ["i-1-user", "i-2-user"]
    assert _ids(without_rewound([_turn("i-1", "a"), _rewind("r", "i-9")])) == ["i-1-user"]


def test_the_contents_builder_starts_over_when_a_rewind_arrives() -> None:
    """Extended turn by turn across a rewind, the builder gives what a build of the
    session without the rewound turns gives; current_turn skips rewound turns too."""
    events = [_turn("i-1", "Paris"), _turn("i-1", "sunny", "agent"), _turn("i-2", "Oslo")]
    builder = ContentsBuilder(agent_name="agent")
    builder.extend(events)
    events += [_rewind("r", "i-2"), _turn("i-3", "Rome")]
    builder.extend(events)
    texts = [p.text for c in builder.contents() for p in c.parts or []]
    assert texts == ["Paris", "sunny", "Rome"]
    assert builder.contents() == build_contents(without_rewound(events), agent_name="agent")
    assert builder.follows(events)
    assert _ids(list(current_turn(events[:4], agent_name="agent"))) == ["i-1-user", "i-1-agent"]


def _delta(event_id: str, invocation: str, state: dict[str, Any]) -> Event:
    return Event(id=event_id, invocation_id=invocation, actions=EventActions(state_delta=state))


def test_the_rewind_delta_touches_only_keys_written_since_the_point() -> None:
    """Keys written since the point go back (initial value, earlier value, or removal);
    untouched and shared keys are left out."""
    events = [
        _delta("1", "i-1", {"a": 1}),
        _delta("2", "i-2", {"a": 2, "b": 3, "init": "changed", "user:u": 1, "same": 0}),
        _delta("3", "i-2", {"same": None}),
    ]
    current = {"a": 2, "b": 3, "init": "changed", "kept": 9, "user:u": 1, "same": None}
    initial = {"init": "start", "kept": 9, "same": None}
    assert state_before(initial, events[:1]) == {"init": "start", "kept": 9, "same": None, "a": 1}
    assert rewind_state_delta(initial, events, 1, current) == {
        "a": 1,
        "b": REMOVED_STATE_VALUE,
        "init": "start",
    }


def test_artifact_versions_are_the_latest_per_session_name() -> None:
    """The latest version recorded per name; user: artifacts are shared and left out."""
    events = [
        Event(actions=EventActions(artifact_delta={"r.txt": 1, "user:l": 1})),
        Event(actions=EventActions(artifact_delta={"r.txt": 3})),
    ]
    assert artifact_versions(events) == {"r.txt": 3}
