"""Key scopes: which session, user or app a data key belongs to, and what a forget covers.

A scope is written like a workflow id without its ``adk/`` head: ``app``, ``app/user`` or
``app/user/session``. Ids never contain ``/`` (:mod:`adk_temporal.ids`), so one scope is
inside another exactly when it equals it or starts with it and a ``/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ..errors import InvalidIdError
from ..ids import SessionKey, check_session_ids, id_problem, session_key_of

__all__ = [
    "KeyScope",
    "Target",
    "inside",
    "scope_of",
    "scope_of_workflow",
]

KeyScope = Literal["session", "user", "app"]
"""How widely one data key reaches: a session (the default), a user, or an app (a tenant)."""


def scope_of(key: SessionKey, level: KeyScope, *, user_wide: bool = False) -> str:
    """The scope of the data key that seals ``key``'s values at ``level``.

    Args:
        key: The session the value belongs to.
        level: How widely keys reach.
        user_wide: The value belongs to the user, not to one session (a ``user:``
            artifact): sealed with the user's key even when keys are per session.
    """
    if level == "app":
        return key.app_name
    if level == "user" or user_wide:
        return f"{key.app_name}/{key.user_id}"
    return str(key)


def scope_of_workflow(workflow_id: str | None, level: KeyScope) -> str | None:
    """The scope of a workflow id ``adk/{app}/{user}/{session}``; ``None`` for any other."""
    if not workflow_id:
        return None
    key = session_key_of(workflow_id)
    if key is None or any(id_problem(name, v) for name, v in key._asdict().items()):
        return None
    return scope_of(key, level)


def inside(scope: str, prefix: str) -> bool:
    """Whether ``scope`` is ``prefix`` or lies within it (a session within its user)."""
    return scope == prefix or scope.startswith(prefix + "/")


class Target(BaseModel):
    """What a forget covers: one session, every session of a user, or a whole app.

    Leave ``session_id`` out to forget a user, and ``user_id`` too to forget an app (a
    tenant).
    """

    app_name: str
    user_id: str | None = None
    session_id: str | None = None

    def check(self) -> Target:
        """This target, once its ids pass the id grammar.

        Raises:
            InvalidIdError: An id breaks the grammar, or a session is named without a user.
        """
        if self.session_id is not None:
            if self.user_id is None:
                raise InvalidIdError("invalid ids: a session_id needs its user_id")
            check_session_ids(self.session_key())
            return self
        for field, value in (("app_name", self.app_name), ("user_id", self.user_id)):
            if value is None:
                continue
            problem = id_problem(field, value) if value else f"missing required field {field}"
            if problem is not None:
                raise InvalidIdError(f"invalid ids: {problem}")
        return self

    @property
    def level(self) -> KeyScope:
        """``session``, ``user`` or ``app``: how much this target covers."""
        if self.session_id is not None:
            return "session"
        return "user" if self.user_id is not None else "app"

    @property
    def scope(self) -> str:
        """The target as a scope: every key inside it is forgotten."""
        return "/".join(p for p in (self.app_name, self.user_id, self.session_id) if p)

    def session_key(self) -> SessionKey:
        """The one session this target names.

        Raises:
            InvalidIdError: The target is a user or an app, not a session.
        """
        if self.user_id is None or self.session_id is None:
            raise InvalidIdError(f"{self.scope} is not one session")
        return SessionKey(self.app_name, self.user_id, self.session_id)

    def covers(self, key: SessionKey) -> bool:
        """Whether forgetting this target forgets ``key``."""
        return inside(str(key), self.scope)
