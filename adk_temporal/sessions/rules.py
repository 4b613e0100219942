"""The rules every session backend shares: checks, error messages, event preparation, state.

Backends differ only in storage; what a request must look like, how an event is stored and
how the state scopes merge is decided here once.
"""

from __future__ import annotations

import builtins
import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

from ..errors import InvalidSessionRequestError, SessionExistsError, SessionNotFoundError
from ..events import Event
from ..ids import SessionKey, id_problem
from ..state import APP_PREFIX, TEMP_PREFIX, USER_PREFIX, split_scopes

__all__ = [
    "REMOVED_STATE_VALUE",
    "apply_state_delta",
    "check_after_sequence",
    "check_event_ids",
    "check_identity",
    "check_user",
    "merged_state",
    "prepare_events",
    "session_exists_error",
    "session_not_found_error",
    "to_json_state",
]

REMOVED_STATE_VALUE: Final[dict[str, Any]] = {"adk_temporal:removed": True}
"""In a stored ``state_delta``, this value removes the session key instead of assigning it.

Rewind writes it for keys that did not exist before the invocation it rewinds to
(:mod:`adk_temporal.rewind`); every backend applies it alike (:func:`apply_state_delta`).
ADK has no removal — its rewind assigns ``None`` — but here ``None`` stays a value, so a key
that held ``None`` comes back as ``None``. Only session keys can be removed: ``app:`` and
``user:`` keys are shared with other sessions, and a delta removing one is refused.
"""


def check_identity(key: SessionKey) -> None:
    """Refuse a session key whose fields are empty or break the id grammar (:mod:`..ids`).

    Raises:
        InvalidSessionRequestError: Naming every empty field, else the first field that
            breaks a rule.
    """
    _check_fields(key._asdict())


def check_user(app_name: str, user_id: str) -> None:
    """Refuse an app and user (a listing's scope) that are empty or break the id grammar.

    Raises:
        InvalidSessionRequestError: As :func:`check_identity`.
    """
    _check_fields({"app_name": app_name, "user_id": user_id})


def _check_fields(fields: Mapping[str, str]) -> None:
    missing = [name for name, value in fields.items() if not value]
    if missing:
        raise InvalidSessionRequestError(
            f"invalid session request: missing required fields: {', '.join(missing)}"
        )
    for name, value in fields.items():
        problem = id_problem(name, value)
        if problem is not None:
            raise InvalidSessionRequestError(f"invalid session request: {problem}")


def check_after_sequence(after_sequence: int, limit: int | None = None) -> None:
    """Refuse a negative ``after_sequence`` or a ``limit`` below 1.

    Raises:
        InvalidSessionRequestError: ``after_sequence`` is below zero or ``limit`` below 1.
    """
    if after_sequence < 0:
        raise InvalidSessionRequestError(
            f"invalid session request: after_sequence must be >= 0, got {after_sequence}"
        )
    if limit is not None and limit < 1:
        raise InvalidSessionRequestError(
            f"invalid session request: limit must be >= 1 or None, got {limit}"
        )


def check_event_ids(events: Sequence[Event]) -> None:
    """Refuse a batch in which an event has no id (a retry could not recognise it).

    Raises:
        InvalidSessionRequestError: Naming the positions of the events without an id.
    """
    _refuse_missing_ids([index for index, event in enumerate(events) if not event.id])


def _refuse_missing_ids(missing: Sequence[int]) -> None:
    if missing:
        raise InvalidSessionRequestError(
            f"invalid append request: events at positions {list(missing)} have an empty id; "
            "give every event a unique id so a retried append can recognise it"
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
        InvalidSessionRequestError: A value is not JSON-serialisable, or
            :data:`REMOVED_STATE_VALUE` is given for an ``app:`` or ``user:`` key; the key
            is named.
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
        if stored[key] == REMOVED_STATE_VALUE and key.startswith((APP_PREFIX, USER_PREFIX)):
            raise InvalidSessionRequestError(
                f"invalid session request: {where} removes the shared key {key!r}; only "
                "session keys can be removed (app: and user: keys belong to other sessions too)"
            )
    return stored


def session_not_found_error(key: SessionKey) -> SessionNotFoundError:
    """The error every backend raises for a missing session."""
    return SessionNotFoundError(
        f"session {key.session_id!r} not found for app {key.app_name!r} and user "
        f"{key.user_id!r}; create it first"
    )


def session_exists_error(key: SessionKey) -> SessionExistsError:
    """The error every backend raises when creating a session that exists."""
    return SessionExistsError(
        f"session {key.session_id!r} already exists for app {key.app_name!r} and user "
        f"{key.user_id!r}; use get_or_create to reuse it or pick another session_id"
    )


def prepare_events(events: Sequence[Event], *, now: float) -> builtins.list[Event]:
    """Validate a batch and return copies of its events as they will be stored.

    Partial events (streamed pieces) are left out: appending one is a no-op, as in ADK
    (a runner appends every event it yields, pieces included; they reach followers through
    ``publish_partial`` and never the history). The copies share nothing changeable with
    the caller's events (an in-memory store keeps them as they are) and carry their
    ``state_delta`` as :func:`to_json_state` stores it (no ``temp:`` keys) and a zero
    timestamp replaced by ``now``; the caller's events are untouched.

    Args:
        events: The events to append.
        now: The timestamp given to events that have none.

    Returns:
        The prepared copies of the complete events, in order.

    Raises:
        InvalidSessionRequestError: A complete event has an empty id or a state value that
            is not JSON-serialisable (checked for the whole batch before anything is stored).
    """
    # A piece is not checked at all (even one without an id is a no-op); the positions
    # named are those of the caller's batch.
    _refuse_missing_ids([i for i, event in enumerate(events) if not (event.id or event.partial)])
    prepared: builtins.list[Event] = []
    for event in (e for e in events if not e.partial):
        state_delta = to_json_state(
            event.actions.state_delta, where=f"state_delta of event {event.id!r}"
        )
        # The delta is left out of the copy: to_json_state built a new one already.
        without_delta = event.actions.model_copy(update={"state_delta": {}})
        stored = _copied(event.model_copy(update={"actions": without_delta}))
        stored.actions.state_delta = state_delta
        if not stored.timestamp:
            stored.timestamp = now
        prepared.append(stored)
    return prepared


_UNCHANGEABLE: Final = frozenset({str, int, float, bool, bytes, type(None)})
"""Types whose values cannot be changed in place: a copy may share them."""


def _copied(value: Any) -> Any:
    """A copy of ``value`` that shares nothing changeable with it, as ``copy.deepcopy``.

    An in-memory store keeps what it is given, so the caller must not be able to change a
    stored event through the one it appended. ``deepcopy`` guarantees that but costs most of
    an append: it visits every field through its memo, and a genai ``Part`` has a dozen,
    nearly all ``None``. Here unchangeable values are shared at once, models and plain
    containers are copied field by field, anything else goes to ``deepcopy``.
    """
    kind = type(value)
    if kind in _UNCHANGEABLE:
        return value
    if isinstance(value, BaseModel):
        copied = value.model_copy()  # its own field dict and extras, their values shared
        fields = copied.__dict__
        for name, item in fields.items():
            if type(item) not in _UNCHANGEABLE:
                fields[name] = _copied(item)
        if copied.__pydantic_extra__:
            object.__setattr__(copied, "__pydantic_extra__", _copied(copied.__pydantic_extra__))
        if copied.__pydantic_private__:
            private = copy.deepcopy(copied.__pydantic_private__)
            object.__setattr__(copied, "__pydantic_private__", private)
        return copied
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    return copy.deepcopy(value)


def apply_state_delta(
    delta: Mapping[str, Any],
    *,
    app: dict[str, Any],
    user: dict[str, Any],
    session: dict[str, Any],
) -> None:
    """Assign each key of ``delta`` into its scope's dict in place; ``temp:`` keys are dropped.

    A session key whose value is :data:`REMOVED_STATE_VALUE` is removed instead (absent
    already: nothing happens).

    Args:
        delta: A state delta (an event's ``state_delta`` or a session's initial state).
        app: The app's state, receiving ``app:`` keys.
        user: The user's state, receiving ``user:`` keys.
        session: The session's own state, receiving unprefixed keys.
    """
    app_part, user_part, session_part = split_scopes(delta)
    app.update(app_part)
    user.update(user_part)
    for key, value in session_part.items():
        if value == REMOVED_STATE_VALUE:
            session.pop(key, None)
        else:
            session[key] = value


def merged_state(
    app: Mapping[str, Any], user: Mapping[str, Any], session: Mapping[str, Any]
) -> dict[str, Any]:
    """The state view a session exposes: its own keys plus ``app:`` and ``user:`` keys.

    The scopes cannot collide because scoped keys keep their prefix.
    """
    return {**session, **app, **user}
