"""``SessionEventsCache``: a worker's copy of recent sessions' events, read incrementally.

Every model step needs the session's whole history, and reading and parsing it from the
store costs time linear in the conversation (~9 ms at 160 events on SQLite). Events are
append-only and never change once stored, so a worker keeps the events it has read, and
those it appended itself (:meth:`SessionEventsCache.appended`: a step's own events are never
parsed back from the store), and asks the store only for those after them
(``get(after_sequence=n)``). The state is always read fresh. Another worker's appends are
picked up the same way, so the cache is never stale; a session deleted and re-created under
the same id, or one another writer appended to between this worker's read and its own
append, is detected (the last cached event is not at its position) and read in full.

What a step derives from the whole history — which event ids and call ids are taken, each
invocation's user message, each agent's model contents — is kept with the events and
extended with them (:class:`StoredEvents`), so a step costs what its new events cost, not
what the session holds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from google.genai import types

from ..errors import SessionNotFoundError
from ..events import Event
from ..history import USER_AUTHOR, ContentsBuilder
from ..ids import SessionKey
from ..sessions import ConversationStore, Session

__all__ = ["LoadedSession", "SessionEventsCache", "StoredEvents"]

_VIEWS_PER_SESSION = 16
"""Contents builders kept per session: one per agent, branch and scope that stepped lately.

Agent tools run in scopes of their own, one per call, so a long session would otherwise
keep a builder for every agent-tool call it ever made.
"""


class StoredEvents:
    """One session's stored events as this worker has read them, indexed as they grow."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        """The events, oldest first; only ever appended to."""
        self._ids: dict[str, Event] = {}
        self._call_ids: dict[str, None] = {}
        self._user_messages: dict[tuple[str, str], Event] = {}
        self._views: OrderedDict[tuple[str, str, str], ContentsBuilder] = OrderedDict()

    def extend(self, events: Sequence[Event]) -> None:
        """Append newly stored events."""
        for event in events:
            self.events.append(event)
            self._ids[event.id] = event
            for call in event.function_calls():
                if call.id:
                    self._call_ids[call.id] = None
            if event.author == USER_AUTHOR:
                self._user_messages.setdefault((event.invocation_id, event.isolation_scope), event)

    @property
    def ids(self) -> Mapping[str, Event]:
        """The stored events by id."""
        return self._ids

    @property
    def call_ids(self) -> Mapping[str, None]:
        """The ids of every function call stored (keys only)."""
        return self._call_ids

    def user_message(self, invocation_id: str, isolation_scope: str) -> Event | None:
        """The first event the user wrote in an invocation (and scope), if stored."""
        return self._user_messages.get((invocation_id, isolation_scope))

    def contents(
        self, events: Sequence[Event], *, agent_name: str, branch: str, isolation_scope: str
    ) -> list[types.Content]:
        """The model contents of ``events`` for an agent (shared objects: see ContentsBuilder).

        ``events`` are the stored events plus any a step sees as if stored; the agent's
        builder is extended with what it has not seen, or built anew when ``events`` do not
        continue what it saw (events a failed step saw were overtaken by others' appends).
        """
        key = (agent_name, branch, isolation_scope)
        builder = self._views.get(key)
        if builder is None or not builder.follows(events):
            builder = ContentsBuilder(
                agent_name=agent_name, branch=branch, isolation_scope=isolation_scope
            )
            self._views[key] = builder
        self._views.move_to_end(key)
        while len(self._views) > _VIEWS_PER_SESSION:
            self._views.popitem(last=False)
        builder.extend(events)
        return builder.contents()


@dataclass(frozen=True)
class LoadedSession:
    """A session read through the cache, with the worker's indexes of its stored events."""

    session: Session
    """The session: fresh state, and its events in a list of its own (safe to extend)."""
    stored: StoredEvents
    """The cache's indexes; they may grow while a step runs, never change otherwise."""


class SessionEventsCache:
    """Events of the most recently used sessions, by session key.

    Args:
        max_sessions: How many sessions to keep; the least recently used go first.
    """

    def __init__(self, max_sessions: int = 128) -> None:
        self._max = max_sessions
        self._sessions: OrderedDict[SessionKey, StoredEvents] = OrderedDict()

    def appended(self, key: SessionKey, events: Sequence[Event]) -> None:
        """Take ``events``, which this worker just appended as they were stored, so the next
        read parses none of them back (a 1 MB tool response is parsed once, not each step).

        Taken only into a cached session none of them is in yet (a retry that found some
        stored adds nothing). Had another writer appended between this worker's last read
        and its append, the cached events would not be the stored order: the next read
        finds the last of them elsewhere than its position and reads the session in full.
        """
        stored = self._sessions.get(key)
        if stored is None or not stored.events or any(e.id in stored.ids for e in events):
            return
        stored.extend(events)

    async def get(self, sessions: ConversationStore, key: SessionKey) -> Session:
        """The session with all its events, reading from the store only what is new.

        Raises:
            SessionNotFoundError: No such session.
        """
        return (await self.load(sessions, key)).session

    async def load(
        self, sessions: ConversationStore, key: SessionKey, *, create: bool = False
    ) -> LoadedSession:
        """The session and the indexes of its events, reading from the store only what is new.

        Args:
            sessions: The store.
            key: The session.
            create: Create the session when it does not exist (an invocation's first step).

        Raises:
            SessionNotFoundError: No such session, and ``create`` is false.
        """
        # Shared, not taken out: the parallel tool steps of one model step read the same
        # session at the same moment, and each must find what the others cached.
        stored = self._sessions.get(key)
        if stored is not None and stored.events:
            self._sessions.move_to_end(key)
            known = len(stored.events) - 1
            # Re-read the last known event too: if it is not where it was, the session was
            # replaced and the cached events are not its events.
            try:
                fresh = await sessions.get(key, after_sequence=known)
            except SessionNotFoundError:
                if not create:
                    raise
                fresh = None  # deleted since: created anew below
            if fresh is not None and fresh.events and fresh.events[0].id == stored.events[known].id:
                # A concurrent read of the same session may have added some of them already.
                stored.extend(fresh.events[len(stored.events) - known :])
                return LoadedSession(
                    fresh.model_copy(update={"events": list(stored.events)}), stored
                )
        # One call for a new session, not a failed read, a create and a read.
        read = sessions.get_or_create if create else sessions.get
        session = await read(key)
        stored = StoredEvents()
        stored.extend(session.events)
        self._sessions[key] = stored
        self._sessions.move_to_end(key)
        while len(self._sessions) > self._max:
            self._sessions.popitem(last=False)
        return LoadedSession(session.model_copy(update={"events": list(stored.events)}), stored)
