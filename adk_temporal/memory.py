"""Long-term memory: past sessions an agent can search with ``ctx.search_memory(query)``.

A :class:`MemoryService` stores whole sessions and answers searches scoped to one
``(app_name, user_id)``. Memory is optional: a tool that searches it when the runtime was
given none gets :class:`~adk_temporal.errors.MemoryServiceNotConfiguredError`.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from google.genai import types
from pydantic import BaseModel, Field

from .events import Event
from .sessions.session import Session

__all__ = [
    "InMemoryMemoryService",
    "MemoryEntry",
    "MemoryService",
    "SearchMemoryResponse",
]


class MemoryEntry(BaseModel):
    """One remembered piece of a past conversation."""

    content: types.Content
    author: str = ""
    timestamp: float = 0.0
    """POSIX seconds of the event the entry comes from (as ``Event.timestamp``)."""


class SearchMemoryResponse(BaseModel):
    """The result of a memory search: the matching entries, in the order the service ranks them."""

    memories: list[MemoryEntry] = Field(default_factory=list)


@runtime_checkable
class MemoryService(Protocol):
    """Stores sessions and searches them per ``(app_name, user_id)``."""

    async def add_session(self, session: Session) -> None:
        """Remember ``session``; adding a session again replaces what was stored for it.

        Args:
            session: The session whose events become searchable.
        """
        ...

    async def search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """Search the remembered sessions of one user of one app.

        Args:
            app_name: The app whose memory is searched.
            user_id: The user whose sessions are searched; other users' are never returned.
            query: What to look for.

        Returns:
            The matching entries; an empty response when nothing matches.
        """
        ...


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class InMemoryMemoryService:
    """A process-local memory that matches by shared words (case-insensitive).

    An event matches when its text shares at least one word with the query. Results keep
    the order in which sessions were added and, within a session, event order. For tests
    and single-process demos; nothing survives the process.
    """

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], dict[str, list[Event]]] = {}

    async def add_session(self, session: Session) -> None:
        """Remember a copy of ``session``'s events (later changes to it are not seen).

        Args:
            session: The session to remember; re-adding it replaces the stored events.
        """
        by_id = self._sessions.setdefault((session.app_name, session.user_id), {})
        by_id[session.id] = [e.model_copy(deep=True) for e in session.events]

    async def search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """Entries of ``(app_name, user_id)``'s sessions that share a word with ``query``.

        Args:
            app_name: The app whose memory is searched.
            user_id: The user whose sessions are searched.
            query: Words to look for; punctuation and case are ignored.

        Returns:
            The matching entries, in stored order.
        """
        wanted = _words(query)
        memories: list[MemoryEntry] = []
        for events in self._sessions.get((app_name, user_id), {}).values():
            for event in events:
                if event.content is None or not wanted & _words(event.text()):
                    continue
                memories.append(
                    MemoryEntry(
                        content=event.content.model_copy(deep=True),
                        author=event.author,
                        timestamp=event.timestamp,
                    )
                )
        return SearchMemoryResponse(memories=memories)
