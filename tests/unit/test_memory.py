"""SPEC §1.8: the memory service (CTX-H)."""

from __future__ import annotations

from google.genai import types

from adk_temporal.events import Event
from adk_temporal.memory import InMemoryMemoryService, MemoryEntry, MemoryService
from adk_temporal.sessions.session import Session


def session(session_id: str, *texts: str, app: str = "app", user: str = "u1") -> Session:
    """A session whose events say ``texts`` in turn (user, then the agent, ...)."""
    events = [
        Event(
            author="user" if i % 2 == 0 else "weather_agent",
            timestamp=float(i),
            content=types.Content(parts=[types.Part(text=t)]),
        )
        for i, t in enumerate(texts)
    ]
    return Session(id=session_id, app_name=app, user_id=user, events=events)


def found(entries: list[MemoryEntry]) -> list[str]:
    """The text of each entry."""
    return [p.text or "" for e in entries for p in e.content.parts or []]


def test_ctx_h1_in_memory_service_satisfies_protocol() -> None:
    """InMemoryMemoryService is a MemoryService."""
    assert isinstance(InMemoryMemoryService(), MemoryService)


async def test_ctx_h2_search_covers_all_sessions_of_app_and_user() -> None:
    """A search finds matches in every session of (app, user) and none of other users/apps."""
    memory = InMemoryMemoryService()
    await memory.add_session(session("s1", "Weather in Hangzhou?", "Rainy in Hangzhou."))
    await memory.add_session(session("s2", "Trip to hangzhou next week"))
    await memory.add_session(session("s3", "Hangzhou secret", user="u2"))
    await memory.add_session(session("s4", "Hangzhou other app", app="other"))
    response = await memory.search("app", "u1", "hangzhou")
    assert found(response.memories) == [
        "Weather in Hangzhou?",
        "Rainy in Hangzhou.",
        "Trip to hangzhou next week",
    ]
    assert [(m.author, m.timestamp) for m in response.memories][:2] == [
        ("user", 0.0),
        ("weather_agent", 1.0),
    ]
    assert (await memory.search("app", "nobody", "hangzhou")).memories == []


async def test_ctx_h3_match_is_case_insensitive_word_overlap() -> None:
    """An event matches when it shares a whole word with the query, ignoring case and marks."""
    memory = InMemoryMemoryService()
    await memory.add_session(session("s1", "I like RAIN.", "Sunshine today", "Rainbow"))
    assert found((await memory.search("app", "u1", "rain?")).memories) == ["I like RAIN."]
    assert found((await memory.search("app", "u1", "snow sunshine")).memories) == ["Sunshine today"]
    assert (await memory.search("app", "u1", "")).memories == []


async def test_ctx_h3_readding_session_replaces_and_copies() -> None:
    """Adding a session again replaces its entries; later changes to it are not seen."""
    memory = InMemoryMemoryService()
    stored = session("s1", "old rain")
    await memory.add_session(stored)
    stored.events[0].content = types.Content(parts=[types.Part(text="changed rain")])
    assert found((await memory.search("app", "u1", "rain")).memories) == ["old rain"]
    await memory.add_session(session("s1", "new rain"))
    assert found((await memory.search("app", "u1", "rain")).memories) == ["new rain"]
