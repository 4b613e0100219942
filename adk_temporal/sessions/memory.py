"""An in-process SessionService for tests and single-process demos."""

from __future__ import annotations

import asyncio
import builtins
import copy
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..events import Event
from .partials import FOLLOW_POLL_SECONDS, PARTIAL_TTL_SECONDS, follow_log, prepare_partial
from .service import (
    SessionService,
    apply_state_delta,
    check_after_sequence,
    check_identity,
    merged_state,
    prepare_append,
    prepare_create,
    prepare_stage,
    session_exists_error,
    session_not_found_error,
)
from .session import Session

__all__ = ["InMemorySessionService"]

_SessionKey = tuple[str, str, str]


@dataclass
class _StoredSession:
    state: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    by_id: dict[str, Event] = field(default_factory=dict)
    staged: dict[str, Event] = field(default_factory=dict)
    last_update_time: float = 0.0


class InMemorySessionService(SessionService):
    """Keeps sessions in process memory; everything is lost when the process exits.

    Every returned object is a deep copy, so callers cannot change the store by mutating
    what they read. Each operation runs under one lock without awaiting, so it is atomic for
    coroutines of one loop and for threads sharing the service.

    Args:
        clock: Returns the current time in seconds; stamps a new session's
            ``last_update_time`` and events appended without a timestamp.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._app_states: dict[str, dict[str, Any]] = {}
        self._user_states: dict[tuple[str, str], dict[str, Any]] = {}
        self._sessions: dict[_SessionKey, _StoredSession] = {}
        # Per session: (sequence, event, published at) of the pieces not yet superseded.
        self._partials: dict[_SessionKey, list[tuple[int, Event, float]]] = {}
        self._partial_sequence = 0

    async def close(self) -> None:
        """Nothing to release; the sessions stay readable."""

    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> Session:
        """Create an empty session (see :meth:`SessionService.create`)."""
        key, initial = prepare_create(app_name, user_id, session_id, state)
        with self._lock:
            if key in self._sessions:
                raise session_exists_error(*key)
            stored = _StoredSession(last_update_time=self._clock())
            apply_state_delta(
                initial,
                app=self._app_states.setdefault(app_name, {}),
                user=self._user_states.setdefault((app_name, user_id), {}),
                session=stored.state,
            )
            self._sessions[key] = stored
            return self._snapshot(key, stored, [])

    async def get(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after_sequence: int = 0,
    ) -> Session:
        """Read a session with its events (see :meth:`SessionService.get`)."""
        check_identity(app_name, user_id, session_id)
        check_after_sequence(after_sequence)
        key = (app_name, user_id, session_id)
        with self._lock:
            stored = self._require(key)
            return self._snapshot(key, stored, stored.events[after_sequence:])

    async def get_state(self, *, app_name: str, user_id: str, session_id: str) -> dict[str, Any]:
        """Read a session's merged state (see :meth:`SessionService.get_state`)."""
        check_identity(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)
        with self._lock:
            return copy.deepcopy(self._merged_state(key, self._require(key)))

    async def list(self, *, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions without events (see :meth:`SessionService.list`)."""
        check_identity(app_name, user_id)
        with self._lock:
            return [
                self._snapshot(key, stored, [])
                for key, stored in sorted(self._sessions.items())
                if key[:2] == (app_name, user_id)
            ]

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session if it exists (see :meth:`SessionService.delete`)."""
        check_identity(app_name, user_id, session_id)
        with self._lock:
            self._sessions.pop((app_name, user_id, session_id), None)
            self._partials.pop((app_name, user_id, session_id), None)

    async def stage_events(
        self, *, app_name: str, user_id: str, session_id: str, events: Sequence[Event]
    ) -> None:
        """Keep events aside (see :meth:`SessionService.stage_events`)."""
        key, rows = prepare_stage(app_name, user_id, session_id, events)
        with self._lock:
            stored = self._require(key)
            for event_id, event_json in rows:
                stored.staged[event_id] = Event.model_validate_json(event_json)

    async def staged_events(
        self, *, app_name: str, user_id: str, session_id: str, ids: Sequence[str]
    ) -> dict[str, Event]:
        """Read staged events (see :meth:`SessionService.staged_events`)."""
        check_identity(app_name, user_id, session_id)
        with self._lock:
            stored = self._require((app_name, user_id, session_id))
            return {i: stored.staged[i].model_copy(deep=True) for i in ids if i in stored.staged}

    async def append_events(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        events: Sequence[Event],
        unstage: Sequence[str] = (),
    ) -> builtins.list[Event]:
        """Append events idempotently (see :meth:`SessionService.append_events`)."""
        now = self._clock()
        key, prepared = prepare_append(app_name, user_id, session_id, events, now=now)
        with self._lock:
            stored = self._require(key)
            for staged_id in unstage:
                stored.staged.pop(staged_id, None)
            app_state = self._app_states.setdefault(app_name, {})
            user_state = self._user_states.setdefault((app_name, user_id), {})
            result: builtins.list[Event] = []
            for event in prepared:
                earlier = stored.by_id.get(event.id)
                if earlier is not None:
                    result.append(earlier)
                    continue
                apply_state_delta(
                    event.actions.state_delta,
                    app=app_state,
                    user=user_state,
                    session=stored.state,
                )
                stored.by_id[event.id] = event
                stored.events.append(event)
                stored.last_update_time = event.timestamp
                result.append(event)
            self._supersede(key, {event.id for event in prepared})
            return [event.model_copy(deep=True) for event in result]

    async def publish_partial(
        self, *, app_name: str, user_id: str, session_id: str, event: Event
    ) -> None:
        """Keep a piece for this process's followers (``SessionService.publish_partial``)."""
        key, _ = prepare_partial(app_name, user_id, session_id, event)
        now = self._clock()
        with self._lock:
            self._partial_sequence += 1
            kept = [p for p in self._partials.get(key, []) if now - p[2] < PARTIAL_TTL_SECONDS]
            kept.append((self._partial_sequence, event.model_copy(deep=True), now))
            self._partials[key] = kept

    def follow_partials(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> AsyncIterator[Event]:
        """Poll this process's pieces (see :meth:`SessionService.follow_partials`)."""
        check_identity(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)

        async def read_after(sequence: int) -> builtins.list[tuple[int, Event]]:
            with self._lock:
                return [
                    (number, event.model_copy(deep=True))
                    for number, event, _ in self._partials.get(key, [])
                    if number > sequence
                ]

        return follow_log(read_after, lambda: asyncio.sleep(FOLLOW_POLL_SECONDS))

    def _supersede(self, key: _SessionKey, event_ids: set[str]) -> None:
        """Drop the pieces the final events with these ids replace (under the lock)."""
        kept = [p for p in self._partials.get(key, []) if p[1].id not in event_ids]
        if kept:
            self._partials[key] = kept
        else:
            self._partials.pop(key, None)

    def _require(self, key: _SessionKey) -> _StoredSession:
        stored = self._sessions.get(key)
        if stored is None:
            raise session_not_found_error(*key)
        return stored

    def _merged_state(self, key: _SessionKey, stored: _StoredSession) -> dict[str, Any]:
        app_name, user_id, _ = key
        return merged_state(
            self._app_states.get(app_name, {}),
            self._user_states.get((app_name, user_id), {}),
            stored.state,
        )

    def _snapshot(
        self, key: _SessionKey, stored: _StoredSession, events: Sequence[Event]
    ) -> Session:
        app_name, user_id, session_id = key
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=copy.deepcopy(self._merged_state(key, stored)),
            events=[event.model_copy(deep=True) for event in events],
            last_update_time=stored.last_update_time,
        )
