"""Following an invocation's stored events, and resuming behind one after a reconnect."""

from __future__ import annotations

import pytest

from adk_temporal.events import Event
from adk_temporal.flow.messages import AdkStatus, InvocationStatus
from adk_temporal.following import PAGE_EVENTS, StoreReads, follow_events, with_partials
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import InMemorySessionService, Session

KEY = SessionKey("app", "u-1", "s-1")


@pytest.fixture
async def sessions() -> InMemorySessionService:
    """A session holding two invocations' events: e1, e2 of inv-a, then e3..e5 of inv-b."""
    store = InMemorySessionService()
    await store.create(KEY)
    events = [
        Event(id=f"e{n}", invocation_id="inv-a" if n <= 2 else "inv-b", author="user")
        for n in range(1, 6)
    ]
    await store.append_events(KEY, events)
    return store


async def _followed(sessions: InMemorySessionService, after: str | None) -> list[str]:
    async def status() -> InvocationStatus:
        return InvocationStatus(invocation_id="inv-b", agent="a", step=1, status="completed")

    return [
        event.id async for event in follow_events(sessions, KEY, status, lambda: True, after=after)
    ]


async def test_a_follower_gets_the_current_invocations_events_from_the_first(
    sessions: InMemorySessionService,
) -> None:
    assert await _followed(sessions, None) == ["e3", "e4", "e5"]


async def test_a_reconnecting_follower_resumes_behind_the_last_event_it_got(
    sessions: InMemorySessionService,
) -> None:
    assert await _followed(sessions, "e3") == ["e4", "e5"]
    assert await _followed(sessions, "e5") == []


@pytest.mark.parametrize("after", ["e1", "no-such-event", ""])
async def test_an_id_not_of_this_invocation_starts_from_the_first(
    sessions: InMemorySessionService, after: str
) -> None:
    """An earlier invocation's event (a new run began while the client was away), or an id
    that was never stored, must not hide any of this invocation's events."""
    assert await _followed(sessions, after) == ["e3", "e4", "e5"]


async def test_a_steps_text_comes_after_the_events_stored_before_the_step() -> None:
    """The tool's response is stored, then the next step streams at once: a follower that
    polls rarely still shows the response first, then the text, then the reply."""
    store = InMemorySessionService()
    await store.create(KEY)
    call = Event(id="call", invocation_id="inv", author="agent")
    await store.append_events(KEY, [call])
    finished = False

    async def status() -> InvocationStatus:
        state: AdkStatus = "completed" if finished else "running"
        return InvocationStatus(invocation_id="inv", agent="agent", step=1, status=state)

    reads = StoreReads(patience=30)
    stored_events = follow_events(
        store, KEY, status, lambda: finished, poll_interval=60, reads=reads
    )
    merged = with_partials(store, KEY, stored_events, reads=reads)
    assert (await anext(merged)).id == "call"
    # The follower now sleeps for a minute; the step stores the response, then streams.
    await store.append_events(KEY, [Event(id="response", invocation_id="inv", author="agent")])
    piece = Event(id="reply", invocation_id="inv", author="agent", partial=True, attempt=1)
    await store.publish_partial(KEY, piece)
    assert (await anext(merged)).id == "response"
    assert (await anext(merged)).partial
    finished = True
    await store.append_events(KEY, [Event(id="reply", invocation_id="inv", author="agent")])
    await reads.fresh()
    rest = [event async for event in merged]
    assert [(e.id, e.partial) for e in rest] == [("reply", None)]


class _PageCounting(InMemorySessionService):
    """Records how many events each read returned."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        session = await super().get(key, after_sequence=after_sequence, limit=limit)
        self.largest = max(self.largest, len(session.events))
        return session


async def test_a_long_session_is_followed_a_page_at_a_time() -> None:
    """A follower never reads more than PAGE_EVENTS events at once, so a reader that
    stopped holds a page, not the session; it still gets every event in order, and a
    reconnect resumes behind an event several pages in."""
    store = _PageCounting()
    await store.create(KEY)
    count = PAGE_EVENTS * 5 + 3
    await store.append_events(
        KEY, [Event(id=f"e{n}", invocation_id="inv-b", author="user") for n in range(count)]
    )
    assert await _followed(store, None) == [f"e{n}" for n in range(count)]
    assert await _followed(store, f"e{PAGE_EVENTS * 3}") == [
        f"e{n}" for n in range(PAGE_EVENTS * 3 + 1, count)
    ]
    assert store.largest == PAGE_EVENTS
