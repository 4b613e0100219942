"""Session state with delta recording and ADK's key scopes.

Keys are scoped by prefix: ``app:`` keys are shared by every user of the app, ``user:`` keys
by every session of one user, ``temp:`` keys live for one invocation and are never persisted,
and unprefixed keys belong to the session. The session service applies a persisted event's
``state_delta`` to the right scope; this module only records writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "APP_PREFIX",
    "TEMP_PREFIX",
    "USER_PREFIX",
    "ReadonlyState",
    "State",
    "split_scopes",
]

APP_PREFIX = "app:"
"""Keys shared by every user and session of one app."""

USER_PREFIX = "user:"
"""Keys shared by every session of one user of one app."""

TEMP_PREFIX = "temp:"
"""Keys visible during one invocation only; dropped when an event is persisted."""

_MISSING = object()


class State(Mapping[str, Any]):
    """A state view that records every assignment as a delta.

    Reads look at the delta first, then the underlying value, so a tool sees its own writes.
    A key present with value ``None`` is present. Only assignment records: mutating a dict or
    list read from state changes nothing the runtime can see.

    Args:
        value: The state the view starts from (updated in place on assignment, so other
            views over the same mapping see the write).
        delta: The map that records writes; usually ``EventActions.state_delta``.
    """

    def __init__(self, value: dict[str, Any], delta: dict[str, Any]) -> None:
        self._value = value
        self._delta = delta

    def __getitem__(self, key: str) -> Any:
        if key in self._delta:
            return self._delta[key]
        return self._value[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._delta[key] = value
        self._value[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        yield from self._value
        for key in self._delta:
            if key not in self._value:
                yield key

    def __len__(self) -> int:
        return len(self._value) + sum(1 for k in self._delta if k not in self._value)

    def update(self, values: Mapping[str, Any]) -> None:
        """Assign every key of ``values`` (each one is recorded in the delta)."""
        for key, value in values.items():
            self[key] = value

    def has_delta(self) -> bool:
        """True when this view has recorded at least one write."""
        return bool(self._delta)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the current state (value overlaid with the delta)."""
        return {**self._value, **self._delta}


class ReadonlyState(Mapping[str, Any]):
    """A live, read-only view of a :class:`State` (or any mapping): no way to write."""

    def __init__(self, source: Mapping[str, Any]) -> None:
        self._source = source

    def __getitem__(self, key: str) -> Any:
        return self._source[key]

    def __contains__(self, key: object) -> bool:
        return key in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __len__(self) -> int:
        return len(self._source)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when absent (a stored ``None`` is returned)."""
        value = self._source.get(key, _MISSING)
        return default if value is _MISSING else value


def split_scopes(delta: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Split a state delta into ``(app, user, session)`` parts; ``temp:`` keys are dropped.

    App and user keys keep their prefix, so the scopes can be merged back into one view
    without renaming.
    """
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in delta.items():
        if key.startswith(TEMP_PREFIX):
            continue
        if key.startswith(APP_PREFIX):
            app[key] = value
        elif key.startswith(USER_PREFIX):
            user[key] = value
        else:
            session[key] = value
    return app, user, session
