"""The SessionService interface and the rules every backend shares.

A session service stores conversations: a session's identity, its events in append order,
and state in three scopes (``app:`` keys per app, ``user:`` keys per app and user, the rest
per session; ``temp:`` keys are never stored). Temporal activities call it worker-side: a
model step reads the whole session and appends the model event, a tool step reads the state,
and either may be retried, so appends are idempotent by event id.

The helpers below the protocol hold the logic both backends share (validation, error
messages, event preparation, the merged state view) so the backends differ only in storage.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, Self

from ..errors import InvalidSessionRequestError, SessionExistsError, SessionNotFoundError
from ..events import Event
from ..ids import id_problem
from ..state import TEMP_PREFIX, split_scopes
from .session import Session

__all__ = [
    "SessionService",
    "apply_state_delta",
    "check_after_sequence",
    "check_identity",
    "merged_state",
    "new_session_id",
    "prepare_append",
    "prepare_create",
    "prepare_events",
    "prepare_stage",
    "session_exists_error",
    "session_not_found_error",
    "to_json_state",
]


class SessionService(Protocol):
    """Stores sessions, their events and their scoped state.

    Every method is a coroutine and takes keyword arguments only. A session is identified by
    ``(app_name, user_id, session_id)``; the same session id under another user is another
    session. Returned :class:`Session` objects are snapshots: mutating them never changes the
    store, and they do not follow later writes.

    Events carry a per-session sequence number: 1 for the first event appended, then
    consecutive. It is not a field of :class:`Event`; it is the event's 1-based position in
    ``Session.events``, which lets a reader ask only for events it has not seen yet.
    """

    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> Session:
        """Create an empty session.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The id to use; ``None`` generates a random hex id.
            state: Initial state, split by scope like an event's ``state_delta``: ``app:``
                keys update the app's state and ``user:`` keys the user's state (both are
                shared with other sessions), ``temp:`` keys are dropped. Values must be
                JSON-serialisable.

        Returns:
            The new session, with no events and the merged state view.

        Raises:
            SessionExistsError: The session already exists (nothing is changed).
            InvalidSessionRequestError: ``app_name``, ``user_id`` or ``session_id`` is empty,
                or a state value is not JSON-serialisable.
        """
        ...

    async def get(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after_sequence: int = 0,
    ) -> Session:
        """Read a session with its events in append order.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.
            after_sequence: Return only events with a higher sequence number. Sequence
                numbers are 1-based positions, so passing the number of events already seen
                returns just the new ones; ``0`` returns all of them. The state is always
                the full current state.

        Returns:
            The session with the merged state view (session, ``app:`` and ``user:`` keys).

        Raises:
            SessionNotFoundError: No such session.
            InvalidSessionRequestError: An identity field is empty or ``after_sequence`` is
                negative.
        """
        ...

    async def get_state(self, *, app_name: str, user_id: str, session_id: str) -> dict[str, Any]:
        """Read only a session's merged state, without loading its events.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.

        Returns:
            The same mapping ``get(...).state`` would return (a copy).

        Raises:
            SessionNotFoundError: No such session.
            InvalidSessionRequestError: An identity field is empty.
        """
        ...

    async def list(self, *, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions of one app.

        Args:
            app_name: The app to list.
            user_id: The user to list.

        Returns:
            The sessions sorted by id, each with its merged state but **no events**. An app
            or user with no sessions gives an empty list.

        Raises:
            InvalidSessionRequestError: ``app_name`` or ``user_id`` is empty.
        """
        ...

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events; the app and user state stay.

        Deleting a session that does not exist is not an error, so a retried delete is
        harmless.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.

        Raises:
            InvalidSessionRequestError: An identity field is empty.
        """
        ...

    async def stage_events(
        self, *, app_name: str, user_id: str, session_id: str, events: Sequence[Event]
    ) -> None:
        """Keep events aside, outside the session's history, until an append takes them.

        A tool step stages its response here, so the response never travels through
        workflow history; the step that stores the step's merged response event reads it
        back (:meth:`staged_events`) and removes it in the same transaction as the append
        (``unstage``). Staged events are keyed by id within the session, and staging an id
        again replaces the event: a retried step replaces what an abandoned attempt staged.
        ``get`` never returns them; deleting the session deletes them.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.
            events: The events; each needs a non-empty ``id``.

        Raises:
            SessionNotFoundError: No such session (nothing is staged).
            InvalidSessionRequestError: An identity field or an event id is empty.
        """
        ...

    async def staged_events(
        self, *, app_name: str, user_id: str, session_id: str, ids: Sequence[str]
    ) -> dict[str, Event]:
        """The staged events among ``ids``, by id; an id with nothing staged is absent.

        Raises:
            SessionNotFoundError: No such session.
            InvalidSessionRequestError: An identity field is empty.
        """
        ...

    async def append_events(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        events: Sequence[Event],
        unstage: Sequence[str] = (),
    ) -> builtins.list[Event]:
        """Append events to a session and apply their state deltas, in one transaction.

        Idempotent by event id: an event whose id is already stored in this session (by an
        earlier call or earlier in the same batch) is skipped and its state delta is not
        applied again, so a retried activity changes nothing. The stored event wins even if
        the retry carries different content.

        Each new event gets the next sequence number. Its ``state_delta`` is applied by
        scope (``app:`` keys to the app, ``user:`` keys to the user, the rest to the
        session, each key assigned as is); ``temp:`` keys are removed from the stored
        event's ``state_delta`` as well as from the state. An event with ``timestamp == 0``
        is stamped with the service clock. The session's ``last_update_time`` becomes the
        timestamp of the last newly stored event, as in ADK, not the time of the call; a batch
        that stores nothing new leaves it unchanged. The caller's events are never modified.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.
            events: The events to append, in order. Every event needs a non-empty ``id``;
                an empty sequence only checks that the session exists.
            unstage: Ids of staged events these events were made from; removed in the same
                transaction (ids with nothing staged are ignored).

        Returns:
            One stored event per given event, in the given order: the newly stored event,
            or for a skipped one the event stored earlier under its id.

        Raises:
            SessionNotFoundError: No such session (nothing is stored).
            InvalidSessionRequestError: An event has an empty id or a state value that is
                not JSON-serialisable, or an identity field is empty (nothing is stored).
        """
        ...

    async def publish_partial(
        self, *, app_name: str, user_id: str, session_id: str, event: Event
    ) -> None:
        """Offer a piece of a streamed model reply to the session's followers.

        Never part of the session: the piece is kept only until the final event with the
        same id is appended, or for ``PARTIAL_TTL_SECONDS`` (see :mod:`.partials`). A store
        without a side channel drops it, as this default does. Publishing to a session that
        does not exist is not checked: followers of it would get the piece, no one else.

        Raises:
            InvalidSessionRequestError: An identity field is empty, or the event is not
                marked partial or has no id.
        """
        from .partials import prepare_partial

        prepare_partial(app_name, user_id, session_id, event)

    def follow_partials(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> AsyncIterator[Event]:
        """The session's partial events still kept, then new ones as they are published.

        Runs until the caller stops iterating (closing the iterator releases what it holds).
        A store without a side channel yields nothing and ends, as this default does.

        Raises:
            InvalidSessionRequestError: An identity field is empty.
        """
        check_identity(app_name, user_id, session_id)
        return _nothing()

    async def close(self) -> None:
        """Release connections and threads; the service is unusable afterwards.

        Closing twice is harmless. Stores that hold nothing to release do nothing.
        """
        ...

    async def __aenter__(self) -> Self:
        """Return the service; backends connect on first use."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the service."""
        await self.close()

    async def get_or_create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        state: Mapping[str, Any] | None = None,
    ) -> Session:
        """Read a session, creating it first when it does not exist.

        Safe when several workers race: whoever loses the create reads the winner's
        session. ``state`` is used only when this call creates the session.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session's id.
            state: Initial state for a newly created session (see :meth:`create`).

        Returns:
            The existing or newly created session, with its events.

        Raises:
            InvalidSessionRequestError: An identity field is empty.
        """
        try:
            return await self.get(app_name=app_name, user_id=user_id, session_id=session_id)
        except SessionNotFoundError:
            pass
        try:
            return await self.create(
                app_name=app_name, user_id=user_id, session_id=session_id, state=state
            )
        except SessionExistsError:
            # Another worker created it between our read and our create; theirs stands.
            return await self.get(app_name=app_name, user_id=user_id, session_id=session_id)


async def _nothing() -> AsyncIterator[Event]:
    return
    yield


def prepare_create(
    app_name: str, user_id: str, session_id: str | None, state: Mapping[str, Any] | None
) -> tuple[tuple[str, str, str], dict[str, Any]]:
    """The checks every backend's ``create`` starts with.

    Returns:
        The session's ``(app, user, session)`` key (a new random id when ``session_id`` is
        ``None``) and the initial state as JSON values.

    Raises:
        InvalidSessionRequestError: An identity field is empty or the state is not JSON.
    """
    session_id = new_session_id() if session_id is None else session_id
    check_identity(app_name, user_id, session_id)
    return (app_name, user_id, session_id), to_json_state(state or {}, where="initial state")


def prepare_stage(
    app_name: str, user_id: str, session_id: str, events: Sequence[Event]
) -> tuple[tuple[str, str, str], builtins.list[tuple[str, str]]]:
    """The checks every backend's ``stage_events`` starts with.

    Returns:
        The session's key and ``(id, event JSON)`` per event.

    Raises:
        InvalidSessionRequestError: An identity field or an event id is empty.
    """
    check_identity(app_name, user_id, session_id)
    _check_event_ids(events)
    return (app_name, user_id, session_id), [(e.id, e.model_dump_json()) for e in events]


def _check_event_ids(events: Sequence[Event]) -> None:
    missing = [index for index, event in enumerate(events) if not event.id]
    if missing:
        raise InvalidSessionRequestError(
            f"invalid append request: events at positions {missing} have an empty id; "
            "give every event a unique id so a retried append can recognise it"
        )


def prepare_append(
    app_name: str, user_id: str, session_id: str, events: Sequence[Event], *, now: float
) -> tuple[tuple[str, str, str], builtins.list[Event]]:
    """The checks every backend's ``append_events`` starts with.

    Returns:
        The session's ``(app, user, session)`` key and the events as they will be stored
        (see :func:`prepare_events`).

    Raises:
        InvalidSessionRequestError: An identity field or an event id is empty, or a state
            value is not JSON.
    """
    check_identity(app_name, user_id, session_id)
    return (app_name, user_id, session_id), prepare_events(events, now=now)


def new_session_id() -> str:
    """A fresh random session id (UUID4 hex)."""
    return uuid.uuid4().hex


def check_identity(app_name: str, user_id: str, session_id: str | None = None) -> None:
    """Refuse identity fields that are empty or break the id grammar (:mod:`adk_temporal.ids`).

    Args:
        app_name: The app name to check.
        user_id: The user id to check.
        session_id: The session id to check; ``None`` skips it.

    Raises:
        InvalidSessionRequestError: Naming every empty field, else the first field that
            breaks a rule.
    """
    fields = {"app_name": app_name, "user_id": user_id}
    if session_id is not None:
        fields["session_id"] = session_id
    missing = [name for name, value in fields.items() if not value]
    if missing:
        raise InvalidSessionRequestError(
            f"invalid session request: missing required fields: {', '.join(missing)}"
        )
    for name, value in fields.items():
        problem = id_problem(name, value)
        if problem is not None:
            raise InvalidSessionRequestError(f"invalid session request: {problem}")


def check_after_sequence(after_sequence: int) -> None:
    """Refuse a negative ``after_sequence``.

    Raises:
        InvalidSessionRequestError: ``after_sequence`` is below zero.
    """
    if after_sequence < 0:
        raise InvalidSessionRequestError(
            f"invalid session request: after_sequence must be >= 0, got {after_sequence}"
        )


def to_json_state(state: Mapping[str, Any], *, where: str) -> dict[str, Any]:
    """A copy of ``state`` without ``temp:`` keys, with values normalised through JSON.

    Every backend stores this form, so code tested against the in-memory service sees the
    same values (a tuple comes back as a list) and the same errors as against SQLite.

    Args:
        state: A state delta or initial state.
        where: What the state belongs to, for the message (``"initial state"``, ...).

    Returns:
        The persistable copy.

    Raises:
        InvalidSessionRequestError: A value is not JSON-serialisable; the key is named.
    """
    stored: dict[str, Any] = {}
    for key, value in state.items():
        if key.startswith(TEMP_PREFIX):
            continue
        try:
            # allow_nan=False: NaN and infinities are refused, never stored as non-JSON.
            stored[key] = json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise InvalidSessionRequestError(
                f"invalid session request: {where} value for key {key!r} is not "
                f"JSON-serialisable ({exc}); store only JSON values in state"
            ) from exc
    return stored


def session_not_found_error(app_name: str, user_id: str, session_id: str) -> SessionNotFoundError:
    """The error every backend raises for a missing session."""
    return SessionNotFoundError(
        f"session {session_id!r} not found for app {app_name!r} and user {user_id!r}; "
        "create it first"
    )


def session_exists_error(app_name: str, user_id: str, session_id: str) -> SessionExistsError:
    """The error every backend raises when creating a session that exists."""
    return SessionExistsError(
        f"session {session_id!r} already exists for app {app_name!r} and user {user_id!r}; "
        "use get_or_create to reuse it or pick another session_id"
    )


def prepare_events(events: Sequence[Event], *, now: float) -> builtins.list[Event]:
    """Validate a batch and return copies of its events as they will be stored.

    The copies carry their ``state_delta`` as :func:`to_json_state` stores it (no
    ``temp:`` keys) and a zero timestamp replaced by ``now``; the caller's events are
    untouched.

    Args:
        events: The events to append.
        now: The timestamp given to events that have none.

    Returns:
        The prepared copies, in order.

    Raises:
        InvalidSessionRequestError: An event has an empty id or a state value that is not
            JSON-serialisable (checked for the whole batch before anything is stored).
    """
    _check_event_ids(events)
    streamed = [event.id for event in events if event.partial]
    if streamed:
        raise InvalidSessionRequestError(
            f"invalid append request: events {streamed} are partial; a streamed piece is "
            "published with publish_partial and never stored"
        )
    prepared: builtins.list[Event] = []
    for event in events:
        state_delta = to_json_state(
            event.actions.state_delta, where=f"state_delta of event {event.id!r}"
        )
        stored = event.model_copy(deep=True)
        stored.actions.state_delta = state_delta
        if not stored.timestamp:
            stored.timestamp = now
        prepared.append(stored)
    return prepared


def apply_state_delta(
    delta: Mapping[str, Any],
    *,
    app: dict[str, Any],
    user: dict[str, Any],
    session: dict[str, Any],
) -> None:
    """Assign each key of ``delta`` into its scope's dict in place; ``temp:`` keys are dropped.

    Args:
        delta: A state delta (an event's ``state_delta`` or a session's initial state).
        app: The app's state, receiving ``app:`` keys.
        user: The user's state, receiving ``user:`` keys.
        session: The session's own state, receiving unprefixed keys.
    """
    app_part, user_part, session_part = split_scopes(delta)
    app.update(app_part)
    user.update(user_part)
    session.update(session_part)


def merged_state(
    app: Mapping[str, Any], user: Mapping[str, Any], session: Mapping[str, Any]
) -> dict[str, Any]:
    """The state view a session exposes: its own keys plus ``app:`` and ``user:`` keys.

    The scopes cannot collide because scoped keys keep their prefix.
    """
    return {**session, **app, **user}
