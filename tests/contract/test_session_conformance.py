"""One conformance suite for every SessionService backend, plus durability tests.

The suite runs against the in-memory, SQLite and PostgreSQL backends. PostgreSQL is a real
throwaway cluster started once per test session (skipped only when its server binaries are
not installed), with a new database per test so tests stay independent.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
import textwrap
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, aclosing
from pathlib import Path
from typing import Any

import psycopg
import pytest
from google.genai import types

from adk_temporal.errors import (
    InvalidSessionRequestError,
    SessionExistsError,
    SessionNotFoundError,
)
from adk_temporal.events import Event, EventActions
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import (
    EffectReceipt,
    InMemorySessionService,
    PostgresSessionService,
    SessionService,
    SqliteSessionService,
)
from adk_temporal.sessions.partials import PARTIAL_TTL_SECONDS
from adk_temporal.testing.postgres import PostgresNotInstalledError, PostgresServer
from adk_temporal.usage import MAX_TOKENS, TokenBudgets

from .conftest import RICH_BLOB, StepClock, rich_event

APP = "weather_app"
USER = "alice"


def _event(event_id: str, delta: dict[str, Any] | None = None, **fields: Any) -> Event:
    return Event(
        id=event_id,
        author=fields.pop("author", "agent"),
        invocation_id=fields.pop("invocation_id", "e-1"),
        content=types.Content(role="model", parts=[types.Part(text=f"text of {event_id}")]),
        actions=EventActions(state_delta=delta or {}),
        **fields,
    )


async def _ids(service: SessionService, session_id: str, user_id: str = USER) -> list[str]:
    session = await service.get(SessionKey(APP, user_id, session_id))
    return [event.id for event in session.events]


# --- streamed pieces (partial events) -------------------------------------------------------


def _piece(event_id: str, text: str, attempt: int = 1) -> Event:
    return _event(event_id, partial=True, attempt=attempt).model_copy(
        update={"content": types.Content(role="model", parts=[types.Part(text=text)])}
    )


async def _take(follower: AsyncGenerator[Event, None], count: int) -> list[Event]:
    """The follower's next ``count`` events (a generous bound: the store is local)."""
    taken: list[Event] = []
    async with aclosing(follower), asyncio.timeout(30):
        async for event in follower:
            taken.append(event)
            if len(taken) == count:
                break
    return taken


async def test_followers_get_pieces_in_order_and_the_final_event_supersedes_them(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """A follower on another connection gets each piece; once the final is stored they go."""
    key = SessionKey(APP, USER, "s1")
    async with open_service() as writer, open_service() as reader:
        await writer.create(key)
        follower = reader.follow_partials(key)
        taking = asyncio.create_task(_take(follower, 3))
        for text in ("The wea", "ther is ", "sunny"):
            await writer.publish_partial(key, _piece("m1", text))
        pieces = await taking
        assert [(e.id, e.text(), e.partial, e.attempt) for e in pieces] == [
            ("m1", "The wea", True, 1),
            ("m1", "ther is ", True, 1),
            ("m1", "sunny", True, 1),
        ]
        await writer.append_events(key, [_event("m1")])
        await writer.publish_partial(key, _piece("m2", "next step"))
        # A follower starting now finds m1's pieces gone: m2's is the first it gets.
        assert [e.id for e in await _take(reader.follow_partials(key), 1)] == ["m2"]
        session = await reader.get(key)
        assert [e.id for e in session.events] == ["m1"]
        assert session.events[0].partial is None


async def test_a_late_follower_gets_the_pieces_of_the_unfinished_step_and_attempts_differ(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """Pieces of a retried step stay apart from the abandoned attempt's by ``attempt``."""
    key = SessionKey(APP, USER, "s2")
    async with open_service() as writer, open_service() as reader:
        await writer.create(key)
        await writer.publish_partial(key, _piece("m1", "abandoned", attempt=1))
        await writer.publish_partial(key, _piece("m1", "retried", attempt=2))
        pieces = await _take(reader.follow_partials(key), 2)
        assert [(e.text(), e.attempt) for e in pieces] == [("abandoned", 1), ("retried", 2)]


async def test_pieces_older_than_their_time_to_live_are_dropped(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """A step that died never supersedes its pieces: they expire instead."""
    key = SessionKey(APP, USER, "s3")
    async with open_service() as service:
        await service.create(key)
        await service.publish_partial(key, _piece("dead", "never finished"))
        # The clock the fixture gave the backend: the service protocol does not expose it.
        assert isinstance(
            service, InMemorySessionService | SqliteSessionService | PostgresSessionService
        )
        clock = service._clock
        assert isinstance(clock, StepClock)
        clock.now += PARTIAL_TTL_SECONDS + 10
        await service.publish_partial(key, _piece("m2", "fresh"))
        assert [e.id for e in await _take(service.follow_partials(key), 1)] == ["m2"]


async def test_pieces_are_refused_unless_partial_and_never_appended(
    service: SessionService,
) -> None:
    """A piece needs partial=True and an id; appending a partial event is a no-op, so it
    never enters the history (ADK-Go session/sessiontestsuite/service_suite.go,
    AppendEvent "partial_events_are_not_persisted")."""
    key = SessionKey(APP, USER, "s4")
    await service.create(key)
    with pytest.raises(InvalidSessionRequestError, match="partial=True"):
        await service.publish_partial(key, _event("m1"))
    with pytest.raises(InvalidSessionRequestError, match="partial=True"):
        await service.publish_partial(key, _piece("", "no id"))
    with pytest.raises(InvalidSessionRequestError, match="missing required fields: user_id"):
        await service.publish_partial(SessionKey(APP, "", "s4"), _piece("m1", "x"))
    assert await service.append_events(key, [_piece("m1", "x")]) == []
    assert (await service.get(key)).events == []
    # In a batch the pieces are skipped, their state deltas unapplied; the rest is stored.
    piece = _piece("m2", "y").model_copy(update={"actions": EventActions(state_delta={"k": 1})})
    stored = await service.append_events(key, [piece, _event("e2"), _piece("", "no id")])
    assert [event.id for event in stored] == ["e2"]
    session = await service.get(key)
    assert ([event.id for event in session.events], session.state) == (["e2"], {})
    with pytest.raises(InvalidSessionRequestError, match=r"positions \[1\]"):
        await service.append_events(key, [piece, _event("")])


# --- staged events ------------------------------------------------------------------------


async def test_staged_events_stay_out_of_history_until_an_append_takes_them(
    service: SessionService,
) -> None:
    """stage → invisible to get; staged_events finds them by id; append(unstage=) removes them."""
    await service.create(SessionKey(APP, USER, "s-1"))
    key = SessionKey(APP, USER, "s-1")
    await service.stage_events(key, [_event("k1", {"a": 1}), _event("k2")])
    assert await _ids(service, "s-1") == []
    assert (await service.get_state(key)) == {}
    found = await service.staged_events(key, ["k2", "nope", "k1"])
    assert sorted(found) == ["k1", "k2"]
    assert found["k1"].actions.state_delta == {"a": 1}
    await service.append_events(key, [_event("merged", {"a": 1})], unstage=["k1", "k2"])
    assert await service.staged_events(key, ["k1", "k2"]) == {}
    assert await _ids(service, "s-1") == ["merged"]


async def test_staging_an_id_again_replaces_it_and_deleting_the_session_drops_it(
    service: SessionService,
) -> None:
    """A retried step restages under the same id: the latest wins; staged rows die with the
    session."""
    await service.create(SessionKey(APP, USER, "s-1"))
    key = SessionKey(APP, USER, "s-1")
    await service.stage_events(key, [_event("k1", {"try": 1})])
    await service.stage_events(key, [_event("k1", {"try": 2})])
    [(_, staged)] = (await service.staged_events(key, ["k1"])).items()
    assert staged.actions.state_delta == {"try": 2}
    await service.delete(key)
    await service.create(key)
    assert await service.staged_events(key, ["k1"]) == {}


async def test_staging_into_a_missing_session_is_refused(service: SessionService) -> None:
    """Nothing is staged for a session that does not exist; empty ids are refused."""
    key = SessionKey(APP, USER, "nope")
    with pytest.raises(SessionNotFoundError):
        await service.stage_events(key, [_event("k1")])
    with pytest.raises(SessionNotFoundError):
        await service.staged_events(key, ["k1"])
    await service.create(key)
    with pytest.raises(InvalidSessionRequestError, match="empty id"):
        await service.stage_events(key, [_event("")])


async def test_nan_in_state_is_refused_not_turned_into_null(service: SessionService) -> None:
    """Strict JSON: NaN and infinities are refused, naming the key; nothing is stored."""
    await service.create(SessionKey(APP, USER, "s-1"))
    with pytest.raises(InvalidSessionRequestError, match="'x' is not JSON-serialisable"):
        await service.append_events(
            SessionKey(APP, USER, "s-1"), [_event("e1", {"x": float("inf")})]
        )
    assert await _ids(service, "s-1") == []


# --- create / get / list / delete -------------------------------------------------------


async def test_create_without_id_generates_hex_id_and_get_finds_it(service: SessionService) -> None:
    """create() with no id picks a uuid4 hex id, and get() returns the empty session."""
    created = await service.create(SessionKey.fresh(APP, USER))
    assert re.fullmatch(r"[0-9a-f]{32}", created.id)
    assert (created.app_name, created.user_id, created.events) == (APP, USER, [])
    fetched = await service.get(SessionKey(APP, USER, created.id))
    assert fetched.id == created.id
    assert fetched.events == []
    assert fetched.last_update_time == created.last_update_time > 0
    other = await service.create(SessionKey.fresh(APP, USER))
    assert other.id != created.id


async def test_create_existing_id_raises_exists_error_and_changes_nothing(
    service: SessionService,
) -> None:
    """Creating an existing session raises SessionExistsError naming it; its state stays."""
    await service.create(SessionKey(APP, USER, "s-1"), state={"k": 1})
    with pytest.raises(SessionExistsError) as caught:
        await service.create(SessionKey(APP, USER, "s-1"), state={"k": 2, "app:leak": True})
    message = str(caught.value)
    assert "'s-1' already exists" in message
    assert f"app '{APP}'" in message and f"user '{USER}'" in message
    assert await service.get_state(SessionKey(APP, USER, "s-1")) == {"k": 1}


async def test_get_unknown_session_raises_not_found_naming_identity(
    service: SessionService,
) -> None:
    """get() of a missing session raises SessionNotFoundError naming app, user and session."""
    await service.create(SessionKey(APP, USER, "s-1"))
    with pytest.raises(SessionNotFoundError) as caught:
        await service.get(SessionKey(APP, "bob", "s-1"))
    assert str(caught.value) == (
        f"session 's-1' not found for app '{APP}' and user 'bob'; create it first"
    )
    assert isinstance(caught.value, LookupError)
    with pytest.raises(SessionNotFoundError, match="session 'nope' not found"):
        await service.get_state(SessionKey(APP, USER, "nope"))


async def test_empty_identity_fields_are_refused_together(service: SessionService) -> None:
    """Empty app/user/session ids raise InvalidSessionRequestError naming every missing field."""
    with pytest.raises(InvalidSessionRequestError) as caught:
        await service.create(SessionKey("", "", ""))
    assert str(caught.value) == (
        "invalid session request: missing required fields: app_name, user_id, session_id"
    )
    assert isinstance(caught.value, ValueError)
    with pytest.raises(InvalidSessionRequestError, match=r"missing required fields: user_id$"):
        await service.list(APP, "")


@pytest.mark.parametrize(
    ("ids", "problem"),
    [
        ({"user_id": "x/y"}, "user_id cannot contain path separators or NUL"),
        ({"session_id": "y/s"}, "session_id cannot contain path separators or NUL"),
        ({"app_name": ".."}, "app_name cannot be '.' or '..'"),
        ({"session_id": "user"}, "session_id cannot be 'user'"),
        ({"session_id": "s" * 129}, "session_id is 129 bytes long; the limit is 128"),
    ],
)
async def test_ids_outside_the_grammar_are_refused_before_anything_is_stored(
    service: SessionService, ids: dict[str, str], problem: str
) -> None:
    """The id grammar shared with the client and the artifact stores; nothing is created."""
    key = SessionKey(APP, USER, "s-ok")._replace(**ids)
    with pytest.raises(InvalidSessionRequestError, match=re.escape(problem)):
        await service.create(key)
    with pytest.raises(InvalidSessionRequestError, match=re.escape(problem)):
        await service.append_events(key, [])
    assert await service.list(APP, USER) == []


async def test_list_returns_sorted_sessions_with_state_but_without_events(
    service: SessionService,
) -> None:
    """list() gives the user's sessions of the app, sorted by id, state included, no events."""
    for session_id in ("s-b", "s-c", "s-a"):
        await service.create(SessionKey(APP, USER, session_id))
    await service.create(SessionKey(APP, "bob", "s-0"))
    await service.create(SessionKey("other_app", USER, "s-0"))
    await service.append_events(SessionKey(APP, USER, "s-a"), [_event("e-1", {"city": "Paris"})])

    listed = await service.list(APP, USER)

    assert [session.id for session in listed] == ["s-a", "s-b", "s-c"]
    assert all(session.events == [] for session in listed)
    assert listed[0].state == {"city": "Paris"}
    assert await service.list(APP, "nobody") == []


async def test_delete_removes_session_and_events_and_absent_is_not_error(
    service: SessionService,
) -> None:
    """delete() removes one session and its events; deleting again or a missing one is fine."""
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.create(SessionKey(APP, USER, "s-2"))
    await service.append_events(
        SessionKey(APP, USER, "s-1"), [_event("e-1", {"user:lang": "fr", "k": 1})]
    )

    await service.delete(SessionKey(APP, USER, "s-1"))
    await service.delete(SessionKey(APP, USER, "s-1"))
    await service.delete(SessionKey(APP, USER, "never-existed"))

    with pytest.raises(SessionNotFoundError):
        await service.get(SessionKey(APP, USER, "s-1"))
    assert [s.id for s in await service.list(APP, USER)] == ["s-2"]
    recreated = await service.create(SessionKey(APP, USER, "s-1"))
    assert recreated.events == []
    # The user scope outlives the session that wrote it; the session's own keys do not.
    assert recreated.state == {"user:lang": "fr"}
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1", {"k": 2})])
    assert await service.get_state(SessionKey(APP, USER, "s-1")) == {
        "user:lang": "fr",
        "k": 2,
    }


async def test_get_or_create_creates_once_then_returns_existing(service: SessionService) -> None:
    """get_or_create() creates a missing session with its state, later calls return it as is."""
    first = await service.get_or_create(SessionKey(APP, USER, "s-1"), state={"k": "initial"})
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1")])
    second = await service.get_or_create(SessionKey(APP, USER, "s-1"), state={"k": "ignored"})
    assert first.state == second.state == {"k": "initial"}
    assert [event.id for event in second.events] == ["e-1"]


# --- append ---------------------------------------------------------------------------------


async def test_append_keeps_order_and_after_sequence_returns_the_tail(
    service: SessionService,
) -> None:
    """Events keep append order across calls; get(after_sequence=n) returns events n+1.."""
    await service.create(SessionKey(APP, USER, "s-1"))
    ids = ["e-z", "e-a", "e-m", "e-b", "e-y"]
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event(i) for i in ids[:2]])
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event(i) for i in ids[2:]])

    assert await _ids(service, "s-1") == ids
    tail = await service.get(SessionKey(APP, USER, "s-1"), after_sequence=3)
    assert [event.id for event in tail.events] == ["e-b", "e-y"]
    beyond = await service.get(SessionKey(APP, USER, "s-1"), after_sequence=9)
    assert beyond.events == []
    with pytest.raises(InvalidSessionRequestError, match="after_sequence must be >= 0, got -1"):
        await service.get(SessionKey(APP, USER, "s-1"), after_sequence=-1)


async def test_get_reads_a_page_of_events_at_a_time(service: SessionService) -> None:
    """get(after_sequence=n, limit=k) returns events n+1..n+k, so a reader goes through a
    long session a page at a time; a limit below 1 is refused."""
    key = SessionKey(APP, USER, "s-1")
    await service.create(key)
    await service.append_events(key, [_event(f"e-{n}") for n in range(5)])
    pages = [
        [e.id for e in (await service.get(key, after_sequence=at, limit=2)).events]
        for at in (0, 2, 4, 5)
    ]
    assert pages == [["e-0", "e-1"], ["e-2", "e-3"], ["e-4"], []]
    with pytest.raises(InvalidSessionRequestError, match="limit must be >= 1"):
        await service.get(key, limit=0)


async def test_append_stamps_missing_timestamps_and_keeps_given_ones(
    service: SessionService,
) -> None:
    """An event without a timestamp gets the service clock's; a given one is kept."""
    created = await service.create(SessionKey(APP, USER, "s-1"))
    stored = await service.append_events(
        SessionKey(APP, USER, "s-1"), [_event("e-1"), _event("e-2", timestamp=5.0)]
    )
    assert stored[0].timestamp > created.last_update_time
    assert stored[1].timestamp == 5.0
    session = await service.get(SessionKey(APP, USER, "s-1"))
    assert [event.timestamp for event in session.events] == [stored[0].timestamp, 5.0]


async def test_last_update_time_is_the_last_appended_events_timestamp(
    service: SessionService,
) -> None:
    """last_update_time is the last stored event's timestamp (as in ADK), not the append time."""
    await service.create(SessionKey(APP, USER, "s-1"))
    # Neither the service clock (~1000 s) nor the wall clock: only the events can give these.
    await service.append_events(
        SessionKey(APP, USER, "s-1"),
        [_event("e-1", timestamp=50_000.0), _event("e-2", timestamp=40_000.0)],
    )
    session = await service.get(SessionKey(APP, USER, "s-1"))
    assert session.last_update_time == 40_000.0
    listed = await service.list(APP, USER)
    assert [s.last_update_time for s in listed] == [40_000.0]

    stamped = await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-3")])
    session = await service.get(SessionKey(APP, USER, "s-1"))
    assert session.last_update_time == stamped[0].timestamp


async def test_appending_the_same_event_twice_applies_its_delta_once(
    service: SessionService,
) -> None:
    """A retried append of a stored event id is skipped: no duplicate, no second delta."""
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1", {"n": 1})])
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-2", {"n": 2})])
    before = await service.get(SessionKey(APP, USER, "s-1"))

    # The retry carries different content (a model is not deterministic); the stored one wins.
    retry = _event("e-1", {"n": 1})
    retry.content = types.Content(role="model", parts=[types.Part(text="a different reply")])
    returned = await service.append_events(SessionKey(APP, USER, "s-1"), [retry])

    after = await service.get(SessionKey(APP, USER, "s-1"))
    assert [event.id for event in after.events] == ["e-1", "e-2"]
    assert after.state == {"n": 2}
    assert returned == [before.events[0]]
    assert returned[0].text() == "text of e-1"
    assert after.last_update_time == before.last_update_time


async def test_batch_with_stored_and_repeated_ids_stores_each_id_once(
    service: SessionService,
) -> None:
    """A batch mixing a stored id, new ids and a repeated id stores only the new ones, once."""
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.append_events(
        SessionKey(APP, USER, "s-1"), [_event("e-1", {"first": 1, "app:hits": 1, "user:seen": 1})]
    )
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-2", {"first": 2})])

    returned = await service.append_events(
        SessionKey(APP, USER, "s-1"),
        [
            _event("e-1", {"first": 99, "app:hits": 99, "user:seen": 99}),
            _event("e-3", {"third": 3}),
            _event("e-3", {"third": 33}),
        ],
    )

    assert [(event.id, event.actions.state_delta) for event in returned] == [
        ("e-1", {"first": 1, "app:hits": 1, "user:seen": 1}),
        ("e-3", {"third": 3}),
        ("e-3", {"third": 3}),
    ]
    assert await _ids(service, "s-1") == ["e-1", "e-2", "e-3"]
    assert await service.get_state(SessionKey(APP, USER, "s-1")) == {
        "first": 2,
        "third": 3,
        "app:hits": 1,
        "user:seen": 1,
    }


async def test_events_without_id_are_refused_and_nothing_is_stored(
    service: SessionService,
) -> None:
    """An event with an empty id fails the whole batch with a ValueError naming its position."""
    await service.create(SessionKey(APP, USER, "s-1"))
    with pytest.raises(InvalidSessionRequestError) as caught:
        await service.append_events(
            SessionKey(APP, USER, "s-1"), [_event("e-1", {"k": 1}), _event("", {"k": 2})]
        )
    assert isinstance(caught.value, ValueError)
    assert "events at positions [1] have an empty id" in str(caught.value)
    session = await service.get(SessionKey(APP, USER, "s-1"))
    assert (session.events, session.state) == ([], {})


async def test_non_json_state_values_are_refused_naming_the_key(service: SessionService) -> None:
    """State values that cannot be stored as JSON are refused before anything is written."""
    with pytest.raises(InvalidSessionRequestError, match="initial state value for key 'bad'"):
        await service.create(SessionKey(APP, USER, "s-1"), state={"bad": {1, 2}})
    await service.create(SessionKey(APP, USER, "s-1"), state={"temp:handle": object()})
    with pytest.raises(
        InvalidSessionRequestError,
        match=r"state_delta of event 'e-2' value for key 'when' is not JSON-serialisable",
    ):
        await service.append_events(
            SessionKey(APP, USER, "s-1"),
            [_event("e-1", {"ok": 1}), _event("e-2", {"when": object()})],
        )
    assert await _ids(service, "s-1") == []


async def test_state_values_are_normalised_through_json(service: SessionService) -> None:
    """Every backend hands back state values as JSON would (a tuple becomes a list)."""
    await service.create(SessionKey(APP, USER, "s-1"), state={"pair": (1, 2)})
    stored = await service.append_events(
        SessionKey(APP, USER, "s-1"), [_event("e-1", {"t": ("a", None)})]
    )
    assert stored[0].actions.state_delta == {"t": ["a", None]}
    assert await service.get_state(SessionKey(APP, USER, "s-1")) == {
        "pair": [1, 2],
        "t": ["a", None],
    }


async def test_append_to_unknown_session_raises_not_found(service: SessionService) -> None:
    """append_events() to a missing session raises SessionNotFoundError and creates nothing."""
    with pytest.raises(SessionNotFoundError, match=f"session 'ghost' not found for app '{APP}'"):
        await service.append_events(SessionKey(APP, USER, "ghost"), [_event("e-1", {"app:x": 1})])
    with pytest.raises(SessionNotFoundError):
        await service.append_events(SessionKey(APP, USER, "ghost"), [])
    assert await service.list(APP, USER) == []
    created = await service.create(SessionKey(APP, USER, "ghost"))
    assert created.state == {}


# --- state scopes -----------------------------------------------------------------------------


async def test_app_scope_is_shared_by_every_user_of_the_app(service: SessionService) -> None:
    """app: keys written in one user's session are visible to another user's session."""
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.create(SessionKey(APP, "bob", "s-9"))
    await service.create(SessionKey("other_app", "bob", "s-9"))
    await service.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1", {"app:units": "C"})])

    bob = await service.get(SessionKey(APP, "bob", "s-9"))
    assert bob.state == {"app:units": "C"}
    assert await service.get_state(SessionKey("other_app", "bob", "s-9")) == {}


async def test_user_scope_is_shared_by_the_users_sessions_only(service: SessionService) -> None:
    """user: keys reach the same user's other sessions, never another user's."""
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.create(SessionKey(APP, USER, "s-2"))
    await service.create(SessionKey(APP, "bob", "s-1"))
    await service.append_events(
        SessionKey(APP, USER, "s-1"), [_event("e-1", {"user:name": "Alice", "topic": "rain"})]
    )

    assert await service.get_state(SessionKey(APP, USER, "s-2")) == {"user:name": "Alice"}
    assert await service.get_state(SessionKey(APP, "bob", "s-1")) == {}
    own = await service.get(SessionKey(APP, USER, "s-1"))
    assert own.state == {"user:name": "Alice", "topic": "rain"}


async def test_initial_state_is_split_by_scope_like_a_delta(service: SessionService) -> None:
    """create(state=...) routes app:/user: keys to their scopes and drops temp: keys."""
    created = await service.create(
        SessionKey(APP, USER, "s-1"), state={"app:v": 1, "user:w": 2, "k": 3, "temp:t": 4}
    )
    assert created.state == {"app:v": 1, "user:w": 2, "k": 3}
    sibling = await service.create(SessionKey(APP, USER, "s-2"))
    assert sibling.state == {"app:v": 1, "user:w": 2}
    stranger = await service.create(SessionKey(APP, "bob", "s-3"))
    assert stranger.state == {"app:v": 1}


async def test_temp_keys_are_never_stored_not_even_in_the_event(service: SessionService) -> None:
    """temp: keys reach neither the state nor the stored event; the caller's event is untouched."""
    await service.create(SessionKey(APP, USER, "s-1"))
    event = _event("e-1", {"temp:scratch": "x", "kept": "y"})

    returned = await service.append_events(SessionKey(APP, USER, "s-1"), [event])

    assert returned[0].actions.state_delta == {"kept": "y"}
    session = await service.get(SessionKey(APP, USER, "s-1"))
    assert session.state == {"kept": "y"}
    assert session.events[0].actions.state_delta == {"kept": "y"}
    assert event.actions.state_delta == {"temp:scratch": "x", "kept": "y"}
    assert event.timestamp == 0.0


# --- snapshots and serialisation --------------------------------------------------------------


async def test_returned_objects_are_copies_of_the_store(service: SessionService) -> None:
    """Mutating returned sessions, states, events or the appended input never changes the store."""
    await service.create(SessionKey(APP, USER, "s-1"), state={"cfg": {"a": 1}})
    event = _event("e-1", {"items": [1]})
    returned = await service.append_events(SessionKey(APP, USER, "s-1"), [event])
    expected = await service.get(SessionKey(APP, USER, "s-1"))

    event.actions.state_delta["items"].append("input")
    returned[0].actions.state_delta["items"].append("returned")
    returned[0].id = "changed"
    session = await service.get(SessionKey(APP, USER, "s-1"))
    session.state["cfg"]["a"] = 2
    session.events[0].author = "intruder"
    session.events.clear()
    state = await service.get_state(SessionKey(APP, USER, "s-1"))
    state["cfg"]["b"] = 3
    (listed,) = await service.list(APP, USER)
    listed.state["items"].append("listed")

    assert await service.get(SessionKey(APP, USER, "s-1")) == expected
    assert expected.state == {"cfg": {"a": 1}, "items": [1]}


async def test_event_json_round_trips_calls_bytes_and_confirmations(
    service: SessionService,
) -> None:
    """An event with function calls, inline bytes and requested confirmations reads back equal."""
    await service.create(SessionKey(APP, USER, "s-1"))
    event = rich_event()

    (returned,) = await service.append_events(SessionKey(APP, USER, "s-1"), [event])

    (stored,) = (await service.get(SessionKey(APP, USER, "s-1"))).events
    assert stored == event
    assert returned == event
    blob = stored.parts()[3].inline_data
    assert blob is not None
    assert blob.data == RICH_BLOB


# --- concurrency ------------------------------------------------------------------------------


async def test_concurrent_appends_to_one_session_get_consecutive_sequences(
    service: SessionService,
) -> None:
    """Appends racing on one session all land, each at its own consecutive sequence number."""
    await service.create(SessionKey(APP, USER, "s-1"))

    await asyncio.gather(
        *(
            service.append_events(
                SessionKey(APP, USER, "s-1"), [_event(f"e-{i}a", {f"k{i}": i}), _event(f"e-{i}b")]
            )
            for i in range(10)
        )
    )

    session = await service.get(SessionKey(APP, USER, "s-1"))
    ids = [event.id for event in session.events]
    assert sorted(ids) == sorted(f"e-{i}{part}" for i in range(10) for part in "ab")
    # A batch is one transaction: its events stay adjacent.
    assert all(ids[ids.index(f"e-{i}a") + 1] == f"e-{i}b" for i in range(10))
    for seen in (0, 7, 19, 20):
        tail = await service.get(SessionKey(APP, USER, "s-1"), after_sequence=seen)
        assert [event.id for event in tail.events] == ids[seen:]
    assert session.state == {f"k{i}": i for i in range(10)}


async def test_concurrent_appends_to_sibling_sessions_keep_every_shared_key(
    service: SessionService,
) -> None:
    """Sessions of one user writing app: and user: keys at once lose none of each other's."""
    for i in range(8):
        await service.create(SessionKey(APP, USER, f"s-{i}"))

    await asyncio.gather(
        *(
            service.append_events(
                SessionKey(APP, USER, f"s-{i}"),
                [_event("e-1", {f"app:from-{i}": i, f"user:from-{i}": i, "own": i})],
            )
            for i in range(8)
        )
    )

    shared = {f"{scope}:from-{i}": i for scope in ("app", "user") for i in range(8)}
    for i in range(8):
        state = await service.get_state(SessionKey(APP, USER, f"s-{i}"))
        assert state == {**shared, "own": i}


async def test_concurrent_get_or_create_yields_one_session(service: SessionService) -> None:
    """Workers racing to get_or_create one session all get the same one; none fails."""
    sessions = await asyncio.gather(
        *(
            service.get_or_create(SessionKey(APP, USER, "s-1"), state={"creator": i})
            for i in range(6)
        )
    )

    assert len({session.id for session in sessions}) == 1
    assert len({session.state["creator"] for session in sessions}) == 1
    assert [session.id for session in await service.list(APP, USER)] == ["s-1"]


# --- SQLite only ------------------------------------------------------------------------------


async def test_sqlite_data_survives_closing_and_reopening(tmp_path: Path) -> None:
    """Sessions, events and every state scope survive closing and reopening the file."""
    path = tmp_path / "nested" / "sessions.db"
    async with SqliteSessionService(path) as first:
        await first.create(SessionKey(APP, USER, "s-1"), state={"app:a": 1})
        await first.append_events(
            SessionKey(APP, USER, "s-1"), [_event("e-1", {"user:u": 2, "s": 3}), _event("e-2")]
        )
        before = await first.get(SessionKey(APP, USER, "s-1"))

    async with SqliteSessionService(path) as second:
        assert await second.get(SessionKey(APP, USER, "s-1")) == before
        assert before.state == {"app:a": 1, "user:u": 2, "s": 3}
        await second.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1"), _event("e-3")])
        assert await _ids(second, "s-1") == ["e-1", "e-2", "e-3"]

    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
        assert raw.execute(
            "SELECT sequence, event_id, author, invocation_id FROM events ORDER BY sequence"
        ).fetchall() == [
            (1, "e-1", "agent", "e-1"),
            (2, "e-2", "agent", "e-1"),
            (3, "e-3", "agent", "e-1"),
        ]


async def test_sqlite_syncs_every_commit_to_disk(tmp_path: Path) -> None:
    """The connection commits with synchronous=FULL (2): an acknowledged append survives a
    power cut, whatever default the SQLite build has for WAL databases."""
    async with SqliteSessionService(tmp_path / "s.db") as service:
        level = await service._run(lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0])
    assert level == 2


async def test_sqlite_refuses_calls_after_close(tmp_path: Path) -> None:
    """A closed SqliteSessionService raises RuntimeError naming its file; close is idempotent."""
    service = SqliteSessionService(tmp_path / "s.db")
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.close()
    await service.close()
    with pytest.raises(RuntimeError, match=r"SqliteSessionService\('.*s\.db'\) is closed"):
        await service.get(SessionKey(APP, USER, "s-1"))


async def test_sqlite_refuses_a_database_of_another_schema_version(tmp_path: Path) -> None:
    """A file whose schema version differs is refused with a message naming both versions."""
    path = tmp_path / "s.db"
    async with SqliteSessionService(path) as service:
        await service.create(SessionKey(APP, USER, "s-1"))
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_version SET version = 2")
    async with SqliteSessionService(path) as service:
        with pytest.raises(RuntimeError, match="has schema version 2, but this adk-temporal reads"):
            await service.get(SessionKey(APP, USER, "s-1"))


# --- PostgreSQL only --------------------------------------------------------------------------


async def test_postgres_data_survives_closing_and_reopening(postgres_dsn: str) -> None:
    """Sessions, events and every state scope survive closing the service and opening another."""
    async with PostgresSessionService(postgres_dsn) as first:
        await first.create(SessionKey(APP, USER, "s-1"), state={"app:a": 1})
        await first.append_events(
            SessionKey(APP, USER, "s-1"), [_event("e-1", {"user:u": 2, "s": 3}), _event("e-2")]
        )
        before = await first.get(SessionKey(APP, USER, "s-1"))

    async with PostgresSessionService(postgres_dsn) as second:
        assert await second.get(SessionKey(APP, USER, "s-1")) == before
        assert before.state == {"app:a": 1, "user:u": 2, "s": 3}
        await second.append_events(SessionKey(APP, USER, "s-1"), [_event("e-1"), _event("e-3")])
        assert await _ids(second, "s-1") == ["e-1", "e-2", "e-3"]

    async with await psycopg.AsyncConnection.connect(postgres_dsn) as raw:
        cursor = await raw.execute("SELECT version FROM adk_schema_version")
        assert await cursor.fetchall() == [(1,)]
        cursor = await raw.execute(
            "SELECT sequence, event_id, author, invocation_id FROM adk_events ORDER BY sequence"
        )
        assert await cursor.fetchall() == [
            (1, "e-1", "agent", "e-1"),
            (2, "e-2", "agent", "e-1"),
            (3, "e-3", "agent", "e-1"),
        ]


async def test_postgres_refuses_calls_after_close_without_showing_the_password(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    """A closed service raises RuntimeError naming its database but never the DSN's password."""
    database = postgres_dsn.rsplit("/", 1)[1]
    dsn = f"postgresql://postgres:hunter2@127.0.0.1:{postgres_server.port}/{database}"
    service = PostgresSessionService(dsn)
    await service.create(SessionKey(APP, USER, "s-1"))
    await service.close()
    await service.close()
    with pytest.raises(RuntimeError, match=r"PostgresSessionService\(.*is closed") as caught:
        await service.get(SessionKey(APP, USER, "s-1"))
    assert f"dbname={database}" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in repr(service)


async def test_postgres_refuses_a_database_of_another_schema_version(postgres_dsn: str) -> None:
    """A database whose schema version differs is refused with a message naming both versions."""
    async with PostgresSessionService(postgres_dsn) as service:
        await service.create(SessionKey(APP, USER, "s-1"))
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as raw:
        await raw.execute("UPDATE adk_schema_version SET version = 2")
    async with PostgresSessionService(postgres_dsn) as service:
        with pytest.raises(RuntimeError, match="has schema version 2, but this adk-temporal reads"):
            await service.get(SessionKey(APP, USER, "s-1"))


async def test_postgres_unreachable_database_error_names_the_cause(
    postgres_server: PostgresServer,
) -> None:
    """The first call against a missing database fails with the server's reason, not a timeout."""
    async with PostgresSessionService(postgres_server.dsn("no_such_db")) as service:
        with pytest.raises(psycopg.OperationalError, match='database "no_such_db" does not exist'):
            await service.list(APP, USER)


async def test_postgres_services_starting_together_on_a_fresh_database_all_work(
    postgres_dsn: str,
) -> None:
    """Several services creating the schema of one empty database at once all succeed."""
    services = [PostgresSessionService(postgres_dsn) for _ in range(4)]
    try:
        created = await asyncio.gather(
            *(service.create(SessionKey(APP, USER, f"s-{i}")) for i, service in enumerate(services))
        )
        listed = await services[0].list(APP, USER)
    finally:
        await asyncio.gather(*(service.close() for service in services))
    assert [session.id for session in listed] == [session.id for session in created]


def test_postgres_server_without_binaries_raises_the_skip_reason(tmp_path: Path) -> None:
    """A directory without initdb/postgres raises PostgresNotInstalledError, which means skip."""
    with pytest.raises(PostgresNotInstalledError) as caught:
        PostgresServer(bin_dir=tmp_path).start()
    assert str(caught.value) == f"no executable initdb and postgres in {tmp_path}"


# --- SQLite and PostgreSQL across processes ---------------------------------------------------

_WORKER = textwrap.dedent(
    """
    import asyncio, json, sys
    from adk_temporal.events import Event, EventActions
    from adk_temporal.sessions import PostgresSessionService, SessionKey, SqliteSessionService

    async def main(backend, target, tag):
        sys.stdin.readline()  # start together with the other process
        stored = []
        kind = SqliteSessionService if backend == "sqlite" else PostgresSessionService
        async with kind(target) as service:
            # Both processes race to create the schema and the session.
            await service.get_or_create(SessionKey("app", "u", "s"))
            for i in range(50):
                if i % 5 == 0:
                    event_id, delta = f"shared-{i // 5}", {f"shared-{i // 5}": tag}
                else:
                    event_id = f"{tag}-{i}"
                    delta = {f"own-{tag}": i, f"user:own-{tag}": i, f"app:own-{tag}": i}
                event = Event(id=event_id, author=tag, actions=EventActions(state_delta=delta))
                (result,) = await service.append_events(SessionKey("app", "u", "s"), [event])
                stored.append([result.id, result.author])
        print(json.dumps(stored))

    asyncio.run(main(*sys.argv[1:]))
    """
)


@pytest.fixture(params=["sqlite", "postgres"])
def durable_store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """A durable backend's name and where its (empty) data lives: a file path or a DSN."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "shared.db")
    dsn: str = request.getfixturevalue("postgres_dsn")
    return "postgres", dsn


async def test_two_processes_appending_concurrently_store_exactly_the_union(
    durable_store: tuple[str, str], tmp_path: Path
) -> None:
    """Two processes appending to one session lose nothing, duplicate nothing, apply deltas once."""
    backend, target = durable_store
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            backend,
            target,
            tag,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for tag in ("A", "B")
    ]
    outputs = await asyncio.gather(*(worker.communicate(b"go\n") for worker in workers))
    for worker, (_, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr.decode()
    results = {tag: json.loads(out) for tag, (out, _) in zip("AB", outputs, strict=True)}

    opened = SqliteSessionService(target) if backend == "sqlite" else PostgresSessionService(target)
    async with opened as service:
        session = await service.get(SessionKey("app", "u", "s"))

    ids = [event.id for event in session.events]
    own = {f"{tag}-{i}" for tag in "AB" for i in range(50) if i % 5}
    shared = {f"shared-{k}" for k in range(10)}
    assert len(ids) == len(set(ids)) == 90
    assert set(ids) == own | shared
    winners = {event.id: event.author for event in session.events if event.id in shared}
    for tag in "AB":
        # Both processes see the winner of each shared id, and their own events keep order.
        assert [author for i, author in results[tag] if i in shared] == [
            winners[f"shared-{k}"] for k in range(10)
        ]
        mine = [i for i in ids if i.startswith(f"{tag}-")]
        assert mine == [f"{tag}-{i}" for i in range(50) if i % 5]
        for prefix in ("", "user:", "app:"):
            assert session.state[f"{prefix}own-{tag}"] == 49
    # A skipped duplicate's delta was not applied: each shared key holds its winner's value.
    assert {key: session.state[key] for key in shared} == winners


# The token ledger: cumulative budgets count across sessions, users and continue-as-new.


async def test_ledger_counts_a_step_once_and_sums_per_scope(service: SessionService) -> None:
    """A retried step records its tokens under the same id; totals sum per session, user
    and app, never across apps."""
    mine, other, bobs = (
        SessionKey(APP, USER, "s1"),
        SessionKey(APP, USER, "s2"),
        SessionKey(APP, "bob", "s1"),
    )
    elsewhere = SessionKey("other_app", USER, "s1")
    await service.record_tokens(mine, "e1", 100)
    await service.record_tokens(mine, "e1", 100)
    await service.record_tokens(other, "e2", 30)
    await service.record_tokens(bobs, "e3", 5)
    await service.record_tokens(elsewhere, "e4", 1000)
    totals = await service.token_totals(mine)
    assert totals.used == {"session": 100, "user": 130, "app": 135}
    assert totals.granted == {"session": 0, "user": 0, "app": 0}
    assert (await service.token_totals(bobs)).used == {"session": 5, "user": 5, "app": 135}


async def test_ledger_grants_raise_their_own_scope_once(service: SessionService) -> None:
    """A grant counts for the scope it names, once per request id; a user's grant counts
    in every session of that user."""
    first, second = SessionKey(APP, USER, "s1"), SessionKey(APP, USER, "s2")
    await service.grant_tokens(first, "session", "adk-budget-1", 50)
    await service.grant_tokens(first, "session", "adk-budget-1", 50)
    await service.grant_tokens(first, "user", "adk-budget-2", 70)
    await service.grant_tokens(second, "app", "adk-budget-3", 9)
    assert (await service.token_totals(first)).granted == {"session": 50, "user": 70, "app": 9}
    assert (await service.token_totals(second)).granted == {"session": 0, "user": 70, "app": 9}


async def test_ledger_outlives_a_deleted_session(service: SessionService) -> None:
    """Deleting a session does not refund its user's or app's spending."""
    spent, kept = SessionKey(APP, USER, "gone"), SessionKey(APP, USER, "kept")
    await service.create(spent)
    await service.record_tokens(spent, "e1", 40)
    await service.delete(spent)
    assert (await service.token_totals(kept)).used == {"session": 0, "user": 40, "app": 40}


LONG = 10_000.0
"""A lease no test outlives (the store's clock steps one second per reading)."""


async def test_a_reservation_counts_until_its_step_records_and_replaces_its_own(
    service: SessionService,
) -> None:
    """A reservation counts in every scope until the step's tokens are recorded, which
    settles it in the same write; a retried step's reservation replaces its first."""
    mine, other = SessionKey(APP, USER, "s1"), SessionKey(APP, USER, "s2")
    budgets = TokenBudgets(user=1000)
    first = await service.reserve_tokens(mine, "e1", 300, budgets, lease=LONG)
    again = await service.reserve_tokens(mine, "e1", 250, budgets, lease=LONG)
    assert first.reserved and again.reserved
    assert (await service.token_totals(other)).reserved == {"session": 0, "user": 250, "app": 250}
    await service.record_tokens(mine, "e1", 100)
    totals = await service.token_totals(mine)
    assert (totals.used["user"], totals.reserved["user"]) == (100, 0)


async def test_reservations_hold_a_budget_and_spending_crosses_it(
    service: SessionService,
) -> None:
    """With the rest of a budget reserved the next step is held (naming what is reserved);
    once spending alone reaches it, the step is over; a release frees what was held."""
    key = SessionKey(APP, USER, "s1")
    budgets = TokenBudgets(session=500)
    assert (await service.reserve_tokens(key, "a", 300, budgets, lease=LONG)).reserved
    assert (await service.reserve_tokens(key, "b", 300, budgets, lease=LONG)).reserved
    held = await service.reserve_tokens(key, "c", 300, budgets, lease=LONG)
    assert not held.reserved and held.over is None
    assert held.held is not None and (held.held.used, held.held.reserved) == (0, 600)
    await service.release_tokens(key, "b")
    await service.record_tokens(key, "a", 500)
    over = await service.reserve_tokens(key, "c", 300, budgets, lease=LONG)
    assert over.over is not None and (over.over.scope, over.over.used) == ("session", 500)
    assert (await service.token_totals(key)).reserved["session"] == 0


async def test_a_reservation_whose_lease_ended_stops_counting(service: SessionService) -> None:
    """A step that died holding a reservation holds it only for its lease."""
    key = SessionKey(APP, USER, "s1")
    budgets = TokenBudgets(app=100)
    assert (await service.reserve_tokens(key, "dead", 100, budgets, lease=3)).reserved
    held = await service.reserve_tokens(key, "next", 100, budgets, lease=LONG)
    assert held.held is not None
    assert (await service.token_totals(key)).reserved["app"] == 100
    assert (await service.reserve_tokens(key, "next", 100, budgets, lease=LONG)).reserved
    assert (await service.token_totals(key)).reserved["app"] == 100


async def test_concurrent_reservations_pass_a_budget_by_one_reservation_at_most(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """40 steps of one user reserve at once through four connections: the reservations
    granted pass the user's budget by less than one of them; the rest are held."""
    budgets = TokenBudgets(user=1000)

    async def reserve(store: SessionService, n: int) -> bool:
        key = SessionKey(APP, USER, f"s{n % 7}")
        reservation = await store.reserve_tokens(key, f"e{n}", 300, budgets, lease=LONG)
        assert reservation.reserved or reservation.held is not None
        return reservation.reserved

    async with open_service() as a, open_service() as b, open_service() as c, open_service() as d:
        stores = (a, b, c, d)
        granted = await asyncio.gather(*(reserve(stores[n % 4], n) for n in range(40)))
        reserved = (await a.token_totals(SessionKey(APP, USER, "s0"))).reserved["user"]
    assert sum(granted) == 4 and reserved == 1200


async def test_a_limits_call_slots_are_shared_by_every_connection(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """20 steps of a limit of one call per 10 s ask to start at once through four
    connections: exactly one starts, the others are told to wait up to 10 s and start
    nothing; another limit's start is its own; a bad request is refused."""
    async with open_service() as a, open_service() as b, open_service() as c, open_service() as d:
        stores = (a, b, c, d)
        waits = await asyncio.gather(
            *(stores[n % 4].take_call_slot("gemini", 0.1) for n in range(20))
        )
        again = await a.take_call_slot("gemini", 0.1)
        assert await a.take_call_slot("other", 0.1) == 0.0
        with pytest.raises(InvalidSessionRequestError, match="above 0"):
            await a.take_call_slot("gemini", 0)
    assert waits.count(0.0) == 1
    assert all(0 < wait <= 10 for wait in waits if wait)
    assert 0 < again <= 10


@pytest.mark.parametrize(
    ("key", "entry_id", "tokens", "problem"),
    [
        (SessionKey(APP, USER, ""), "e1", 1, "session_id"),
        (SessionKey(APP, USER, "s1"), "", 1, "non-empty id"),
        (SessionKey(APP, USER, "s1"), "e1", -1, "0 to"),
        (SessionKey(APP, USER, "s1"), "e1", 2**63, "0 to"),
        (SessionKey(APP, USER, "s1"), "e1", 10**30, "0 to"),
        (SessionKey(APP, USER, "s1"), "e1", MAX_TOKENS + 1, "0 to"),
    ],
)
async def test_ledger_refuses_bad_entries(
    service: SessionService, key: SessionKey, entry_id: str, tokens: int, problem: str
) -> None:
    """A malformed or out-of-range entry (a spend or a grant beyond 64 bits among them) is
    refused with a typed error naming the problem; nothing counts."""
    with pytest.raises(InvalidSessionRequestError, match=problem):
        await service.record_tokens(key, entry_id, tokens)
    with pytest.raises(InvalidSessionRequestError, match=problem):
        await service.grant_tokens(key, "user", entry_id, tokens)
    totals = await service.token_totals(SessionKey(APP, USER, "s1"))
    assert (totals.used["app"], totals.granted["user"]) == (0, 0)


async def test_an_effect_receipt_is_begun_once_however_many_attempts_race(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> None:
    """Eight attempts of one call begin its receipt through four connections at once: one
    writes it and all are handed that one; put writes over it; another call and another
    session have their own; a receipt without its keys is refused."""
    key = SessionKey(APP, USER, "s-effects")

    def attempt(n: int, call_key: str = "wf/e-1/call-1") -> EffectReceipt:
        return EffectReceipt(
            call_key=call_key, tool="charge", attempt_id=f"a-{n}", started_at=float(n)
        )

    async with open_service() as a, open_service() as b, open_service() as c, open_service() as d:
        stores = (a, b, c, d)
        begun = await asyncio.gather(
            *(stores[n % 4].begin_effect(key, attempt(n)) for n in range(8))
        )
        [winner] = {r.attempt_id for r in begun}
        ended = begun[0].model_copy(update={"ended": "returned", "details": {"ref": "p-9"}})
        await b.put_effect(key, ended)
        read = await c.effect(key, "wf/e-1/call-1")
        other = await d.begin_effect(key, attempt(9, "wf/e-1/call-2"))
        elsewhere = await a.effect(SessionKey(APP, USER, "s-other"), "wf/e-1/call-1")
        missing = await a.effect(key, "wf/e-1/never")
        with pytest.raises(InvalidSessionRequestError, match="call key"):
            await a.begin_effect(key, attempt(1, ""))
    assert winner in {f"a-{n}" for n in range(8)}
    assert read == ended
    assert other.attempt_id == "a-9"
    assert (elsewhere, missing) == (None, None)
