"""SessionEventsCache: incremental reads that are never stale."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from adk_temporal.errors import SessionNotFoundError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import InMemorySessionService, Session
from adk_temporal.steps import SessionEventsCache

KEY = SessionKey("a", "u", "s")


class CountingSessions(InMemorySessionService):
    """An in-memory store that records each read's after_sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        """Record the read, then answer it."""
        self.reads.append(after_sequence)
        return await super().get(key, after_sequence=after_sequence, limit=limit)


def _events(*ids: str) -> list[Event]:
    return [Event(id=i, author="user") for i in ids]


async def test_second_read_fetches_only_new_events() -> None:
    """After a full read, the cache asks for events from its last known one on."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1", "e2"))
    cache = SessionEventsCache()
    assert [e.id for e in (await cache.get(store, KEY)).events] == ["e1", "e2"]
    await store.append_events(KEY, _events("e3"))
    session = await cache.get(store, KEY)
    assert [e.id for e in session.events] == ["e1", "e2", "e3"]
    assert store.reads == [0, 1]


async def test_state_is_always_fresh() -> None:
    """The state comes from the store on every read, not from the cache."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1"))
    cache = SessionEventsCache()
    await cache.get(store, KEY)
    update = Event(id="e2", author="user")
    update.actions.state_delta["k"] = "v"
    await store.append_events(KEY, [update])
    assert (await cache.get(store, KEY)).state == {"k": "v"}


async def test_a_recreated_session_is_read_in_full() -> None:
    """Deleted and re-created under the same id: the cached events are dropped."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("old1", "old2"))
    cache = SessionEventsCache()
    await cache.get(store, KEY)
    await store.delete(KEY)
    await store.create(KEY)
    await store.append_events(KEY, _events("new1", "new2", "new3"))
    assert [e.id for e in (await cache.get(store, KEY)).events] == ["new1", "new2", "new3"]


async def test_least_recently_used_sessions_are_evicted() -> None:
    """Only max_sessions sessions are kept; an evicted one is read in full again."""
    store = CountingSessions()
    for sid in ("s1", "s2"):
        await store.create(SessionKey("a", "u", sid))
        await store.append_events(SessionKey("a", "u", sid), _events("e"))
    cache = SessionEventsCache(max_sessions=1)
    await cache.get(store, SessionKey("a", "u", "s1"))
    await cache.get(store, SessionKey("a", "u", "s2"))
    await cache.get(store, SessionKey("a", "u", "s1"))
    assert store.reads == [0, 0, 0]


async def test_concurrent_reads_add_each_new_event_once() -> None:
    """Parallel tool steps read one session at once: each new event is indexed once."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1"))
    cache = SessionEventsCache()
    await cache.get(store, KEY)
    await store.append_events(KEY, _events("e2", "e3"))
    loads = await asyncio.gather(*(cache.load(store, KEY) for _ in range(3)))
    assert {id(loaded.stored) for loaded in loads} == {id(loads[0].stored)}
    assert [e.id for e in loads[0].stored.events] == ["e1", "e2", "e3"]
    assert [[e.id for e in loaded.session.events] for loaded in loads] == [["e1", "e2", "e3"]] * 3


async def test_indexes_follow_the_stored_events() -> None:
    """Event ids, call ids and each invocation's first user message are indexed as read."""
    store = CountingSessions()
    await store.create(KEY)
    call = types.FunctionCall(id="call-1", name="t", args={})
    await store.append_events(
        KEY,
        [
            Event(id="m1", author="user", invocation_id="i1", content=_text("first")),
            Event(id="m2", author="user", invocation_id="i1", content=_text("second")),
            Event(
                id="c1",
                author="agent",
                invocation_id="i1",
                content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            ),
        ],
    )
    cache = SessionEventsCache()
    stored = (await cache.load(store, KEY)).stored
    await store.append_events(
        KEY,
        [Event(id="m3", author="user", invocation_id="i2", isolation_scope="s")],
    )
    await cache.load(store, KEY)
    assert set(stored.ids) == {"m1", "m2", "c1", "m3"}
    assert set(stored.call_ids) == {"call-1"}
    first = stored.user_message("i1", "")
    assert first is not None and first.id == "m1"
    later = stored.user_message("i2", "s")
    assert later is not None and later.id == "m3"
    assert stored.user_message("i2", "") is None


def _text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_a_missing_session_is_created_on_request_only() -> None:
    """create=True makes a missing session (the first step's load); without it the read
    fails and nothing is created."""
    store = CountingSessions()
    cache = SessionEventsCache()
    with pytest.raises(SessionNotFoundError):
        await cache.load(store, KEY)
    loaded = await cache.load(store, KEY, create=True)
    assert loaded.session.events == [] and loaded.session.id == KEY.session_id
    assert (await store.get(KEY)).id == KEY.session_id


async def test_a_session_deleted_while_cached_is_created_anew_on_request() -> None:
    """The cached events of a deleted session are dropped; create=True makes it again."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1"))
    cache = SessionEventsCache()
    await cache.load(store, KEY)
    await store.delete(KEY)
    with pytest.raises(SessionNotFoundError):
        await cache.load(store, KEY)
    loaded = await cache.load(store, KEY, create=True)
    assert loaded.session.events == [] and loaded.stored.events == []


async def test_events_this_worker_appended_are_not_read_back() -> None:
    """After its own append the cache reads from the last appended event on: only that one
    row, checked to be where the cache has it."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1"))
    cache = SessionEventsCache()
    await cache.get(store, KEY)
    cache.appended(KEY, await store.append_events(KEY, _events("e2", "e3")))
    assert [e.id for e in (await cache.get(store, KEY)).events] == ["e1", "e2", "e3"]
    assert store.reads == [0, 2]


async def test_another_writers_append_between_is_noticed() -> None:
    """An append by someone else between this worker's read and its own append puts the
    cached events out of the stored order: the next read takes the session in full."""
    store = CountingSessions()
    await store.create(KEY)
    await store.append_events(KEY, _events("e1"))
    cache = SessionEventsCache()
    await cache.get(store, KEY)
    await store.append_events(KEY, _events("theirs"))
    cache.appended(KEY, await store.append_events(KEY, _events("mine")))
    assert [e.id for e in (await cache.get(store, KEY)).events] == ["e1", "theirs", "mine"]
    assert store.reads == [0, 1, 0]


async def test_a_retried_append_adds_nothing_to_the_cache() -> None:
    """Events the cache holds already (a retry's append returns them as stored) are not
    added twice."""
    store = CountingSessions()
    await store.create(KEY)
    cache = SessionEventsCache()
    await store.append_events(KEY, _events("e1"))
    await cache.get(store, KEY)
    cache.appended(KEY, await store.append_events(KEY, _events("e1")))
    assert [e.id for e in (await cache.get(store, KEY)).events] == ["e1"]
