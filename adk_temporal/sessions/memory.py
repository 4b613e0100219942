"""An in-process SessionService for tests and single-process demos."""

from __future__ import annotations

import asyncio
import builtins
import copy
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..events import Event
from ..ids import SessionKey
from ..usage import SCOPES, BudgetScope
from .call_slots import check_slot_request
from .grants import GrantsInMemory
from .ledger import CheckedLedger, ReservationAsk, TokenReservation, TokenTotals, judge_reservation
from .partials import FOLLOW_POLL_SECONDS, PARTIAL_TTL_SECONDS, follow_log, prepare_partial
from .receipts import EffectReceipt, check_receipt
from .rules import (
    apply_state_delta,
    check_after_sequence,
    check_identity,
    check_user,
    merged_state,
    prepare_events,
    session_exists_error,
    session_not_found_error,
    to_json_state,
)
from .service import SessionService
from .session import Session
from .staging import prepare_stage

__all__ = ["InMemorySessionService"]


@dataclass
class _StoredSession:
    state: dict[str, Any] = field(default_factory=dict)
    initial_state: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    by_id: dict[str, Event] = field(default_factory=dict)
    staged: dict[str, Event] = field(default_factory=dict)
    last_update_time: float = 0.0


class InMemorySessionService(CheckedLedger, GrantsInMemory, SessionService):
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
        self._sessions: dict[SessionKey, _StoredSession] = {}
        # Per session: (sequence, event, published at) of the pieces not yet superseded.
        self._partials: dict[SessionKey, list[tuple[int, Event, float]]] = {}
        self._partial_sequence = 0
        self._ledger: dict[tuple[SessionKey, str], tuple[str, int]] = {}
        # Per step: (tokens, when its lease ends).
        self._reservations: dict[tuple[SessionKey, str], tuple[int, float]] = {}
        # Per limit: when its next call may start (monotonic seconds).
        self._slots: dict[str, float] = {}
        self._effects: dict[tuple[SessionKey, str], EffectReceipt] = {}

    async def close(self) -> None:
        """Nothing to release; the sessions stay readable."""

    async def create(self, key: SessionKey, *, state: Mapping[str, Any] | None = None) -> Session:
        """Create an empty session (see :meth:`ConversationStore.create`)."""
        check_identity(key)
        initial = to_json_state(state or {}, where="initial state")
        with self._lock:
            if key in self._sessions:
                raise session_exists_error(key)
            stored = _StoredSession(last_update_time=self._clock())
            apply_state_delta(
                initial,
                app=self._app_states.setdefault(key.app_name, {}),
                user=self._user_states.setdefault((key.app_name, key.user_id), {}),
                session=stored.state,
            )
            stored.initial_state = copy.deepcopy(stored.state)
            self._sessions[key] = stored
            return self._snapshot(key, stored, [])

    async def user_ids(self, app_name: str) -> builtins.list[str]:
        """Every user of the app (see :meth:`ErasableStore.user_ids`)."""
        with self._lock:
            users = {k.user_id for k in self._sessions if k.app_name == app_name}
            users.update(u for a, u in self._user_states if a == app_name)
        return sorted(users)

    async def idle_sessions(
        self, app_name: str, before: float, limit: int
    ) -> builtins.list[tuple[SessionKey, float]]:
        """Sessions idle since before ``before`` (see :meth:`ErasableStore.idle_sessions`)."""
        with self._lock:
            idle = [
                (k, s.last_update_time)
                for k, s in self._sessions.items()
                if k.app_name == app_name and s.last_update_time < before
            ]
        return sorted(idle, key=lambda pair: (pair[1], pair[0]))[:limit]

    async def delete_scope_state(self, app_name: str, user_id: str | None) -> None:
        """Delete a user's or an app's state (see :meth:`ErasableStore.delete_scope_state`)."""
        with self._lock:
            if user_id is None:
                self._app_states.pop(app_name, None)
            for scope in [s for s in self._user_states if s[0] == app_name]:
                if user_id is None or scope[1] == user_id:
                    del self._user_states[scope]

    async def _add_entry(self, key: SessionKey, entry_id: str, kind: str, tokens: int) -> None:
        with self._lock:
            self._ledger.setdefault((key, entry_id), (kind, tokens))
            if kind == "used":
                self._reservations.pop((key, entry_id), None)

    async def token_totals(self, key: SessionKey) -> TokenTotals:
        """Sum the ledger and the live reservations (see :meth:`TokenLedger.token_totals`)."""
        check_identity(key)
        with self._lock:
            return self._totals(key, self._clock())

    async def _reserve(self, ask: ReservationAsk) -> TokenReservation:
        entry = (ask.key, ask.entry_id)
        with self._lock:
            self._reservations.pop(entry, None)
            outcome = judge_reservation(ask.budgets, self._totals(ask.key, ask.now))
            if outcome.reserved:
                self._reservations[entry] = (ask.tokens, ask.expires_at)
            return outcome

    async def _release(self, key: SessionKey, entry_id: str) -> None:
        with self._lock:
            self._reservations.pop((key, entry_id), None)

    def _totals(self, key: SessionKey, now: float) -> TokenTotals:
        """The totals seen from ``key``, under the lock; ended leases are dropped."""
        totals = TokenTotals()
        for (at, _), (kind, tokens) in self._ledger.items():
            for scope in SCOPES:
                if at.app_name == key.app_name and _within(at, key, scope):
                    if kind == "used":
                        totals.used[scope] += tokens
                    elif kind == scope:
                        totals.granted[scope] += tokens
        for entry, (tokens, expires_at) in list(self._reservations.items()):
            if expires_at <= now:
                del self._reservations[entry]
                continue
            for scope in SCOPES:
                if entry[0].app_name == key.app_name and _within(entry[0], key, scope):
                    totals.reserved[scope] += tokens
        return totals

    async def begin_effect(self, key: SessionKey, receipt: EffectReceipt) -> EffectReceipt:
        """Write unless present (see :meth:`EffectReceipts.begin_effect`)."""
        check_receipt(key, receipt)
        with self._lock:
            found = self._effects.setdefault((key, receipt.call_key), receipt)
            return found.model_copy(deep=True)

    async def put_effect(self, key: SessionKey, receipt: EffectReceipt) -> None:
        """Write over (see :meth:`EffectReceipts.put_effect`)."""
        check_receipt(key, receipt)
        with self._lock:
            self._effects[(key, receipt.call_key)] = receipt.model_copy(deep=True)

    async def effect(self, key: SessionKey, call_key: str) -> EffectReceipt | None:
        """The call's receipt (see :meth:`EffectReceipts.effect`)."""
        check_identity(key)
        with self._lock:
            found = self._effects.get((key, call_key))
            return found.model_copy(deep=True) if found is not None else None

    async def take_call_slot(self, name: str, per_second: float) -> float:
        """Take a slot (see :meth:`CallSlots.take_call_slot`); timed by this process's
        monotonic clock, the one all its users share."""
        check_slot_request(name, per_second)
        now = time.monotonic()
        with self._lock:
            next_at = self._slots.get(name, now)
            if next_at > now:
                return next_at - now
            self._slots[name] = now + 1 / per_second
        return 0.0

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        """Read a session with its events (see :meth:`ConversationStore.get`)."""
        check_identity(key)
        check_after_sequence(after_sequence, limit)
        end = None if limit is None else after_sequence + limit
        with self._lock:
            stored = self._require(key)
            return self._snapshot(key, stored, stored.events[after_sequence:end])

    async def get_state(self, key: SessionKey) -> dict[str, Any]:
        """Read a session's merged state (see :meth:`ConversationStore.get_state`)."""
        check_identity(key)
        with self._lock:
            return copy.deepcopy(self._merged_state(key, self._require(key)))

    async def get_initial_state(self, key: SessionKey) -> dict[str, Any]:
        """Read the state ``create`` set (see :meth:`ConversationStore.get_initial_state`)."""
        check_identity(key)
        with self._lock:
            return copy.deepcopy(self._require(key).initial_state)

    async def list(self, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions without events (see :meth:`ConversationStore.list`)."""
        check_user(app_name, user_id)
        with self._lock:
            return [
                self._snapshot(key, stored, [])
                for key, stored in sorted(self._sessions.items())
                if key[:2] == (app_name, user_id)
            ]

    async def delete(self, key: SessionKey) -> None:
        """Delete a session if it exists (see :meth:`ConversationStore.delete`)."""
        check_identity(key)
        with self._lock:
            self._sessions.pop(key, None)
            self._partials.pop(key, None)

    async def stage_events(self, key: SessionKey, events: Sequence[Event]) -> None:
        """Keep events aside (see :meth:`StagingArea.stage_events`)."""
        rows = prepare_stage(key, events)
        with self._lock:
            stored = self._require(key)
            for event_id, event_json in rows:
                stored.staged[event_id] = Event.model_validate_json(event_json)

    async def staged_events(self, key: SessionKey, ids: Sequence[str]) -> dict[str, Event]:
        """Read staged events (see :meth:`StagingArea.staged_events`)."""
        check_identity(key)
        with self._lock:
            stored = self._require(key)
            return {i: stored.staged[i].model_copy(deep=True) for i in ids if i in stored.staged}

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> builtins.list[Event]:
        """Append events idempotently (see :meth:`ConversationStore.append_events`)."""
        check_identity(key)
        prepared = prepare_events(events, now=self._clock())
        with self._lock:
            stored = self._require(key)
            for staged_id in unstage:
                stored.staged.pop(staged_id, None)
            app_state = self._app_states.setdefault(key.app_name, {})
            user_state = self._user_states.setdefault((key.app_name, key.user_id), {})
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

    async def publish_partial(self, key: SessionKey, event: Event) -> None:
        """Keep a piece for this process's followers (``PartialChannel.publish_partial``)."""
        prepare_partial(key, event)
        now = self._clock()
        with self._lock:
            self._partial_sequence += 1
            kept = [p for p in self._partials.get(key, []) if now - p[2] < PARTIAL_TTL_SECONDS]
            kept.append((self._partial_sequence, event.model_copy(deep=True), now))
            self._partials[key] = kept

    def follow_partials(self, key: SessionKey) -> AsyncGenerator[Event, None]:
        """Poll this process's pieces (see :meth:`PartialChannel.follow_partials`)."""
        check_identity(key)

        async def read_after(sequence: int) -> builtins.list[tuple[int, Event]]:
            with self._lock:
                return [
                    (number, event.model_copy(deep=True))
                    for number, event, _ in self._partials.get(key, [])
                    if number > sequence
                ]

        return follow_log(read_after, lambda: asyncio.sleep(FOLLOW_POLL_SECONDS))

    def _supersede(self, key: SessionKey, event_ids: set[str]) -> None:
        """Drop the pieces the final events with these ids replace (under the lock)."""
        kept = [p for p in self._partials.get(key, []) if p[1].id not in event_ids]
        if kept:
            self._partials[key] = kept
        else:
            self._partials.pop(key, None)

    def _require(self, key: SessionKey) -> _StoredSession:
        stored = self._sessions.get(key)
        if stored is None:
            raise session_not_found_error(key)
        return stored

    def _merged_state(self, key: SessionKey, stored: _StoredSession) -> dict[str, Any]:
        return merged_state(
            self._app_states.get(key.app_name, {}),
            self._user_states.get((key.app_name, key.user_id), {}),
            stored.state,
        )

    def _snapshot(
        self, key: SessionKey, stored: _StoredSession, events: Sequence[Event]
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


def _within(at: SessionKey, key: SessionKey, scope: BudgetScope) -> bool:
    """Whether a ledger row of session ``at`` counts for ``key``'s ``scope`` (same app)."""
    if scope == "app":
        return True
    if scope == "user":
        return at.user_id == key.user_id
    return at == key
