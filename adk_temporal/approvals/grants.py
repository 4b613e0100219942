"""Standing grants: an approval that also lets later calls of the same tool run unasked.

An approver answers "approve this, and later calls of ``refund`` in this session (or for
this user), at most 5 calls, where ``amount <= 50``, for 2 h" (:class:`GrantTerms` with the
approval). The run turns the terms into a :class:`Grant` — its id, the tool, who granted it
and when, by the run's clock — and the tool step records it in the session store, where
every later run of the session (or the user) finds it. A later call the grant covers runs
without pausing and cites the grant's id in its event; one it does not cover (another
tool, a predicate that does not hold, no calls left, expired, revoked) pauses as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Literal, Self, TypeAlias

from pydantic import BaseModel, Field, model_validator

from ..ids import SessionKey
from .errors import InvalidPolicyError
from .names import Checked
from .predicate import Predicate

__all__ = [
    "GRANT_KEY",
    "MAX_GRANT_CALLS",
    "MAX_GRANT_TTL",
    "Grant",
    "GrantGiven",
    "GrantScope",
    "GrantStatus",
    "GrantTerms",
    "grant_id",
]

MAX_GRANT_CALLS = 1000
"""The most later calls one grant may cover."""

MAX_GRANT_TTL = timedelta(days=30)
"""The longest a grant may stand."""

GRANT_KEY = "adk_grant"
"""The key of ``Event.custom_metadata`` naming the grants a response event's calls ran
under (call id to grant id), and of a reply event's response recording the grant given."""

GrantScope: TypeAlias = Literal["session", "user"]
"""Where a grant's later calls may be: this session, or any session of the user."""

GrantStatus: TypeAlias = Literal["active", "used_up", "expired", "revoked"]
"""Whether a grant still covers calls, and why not."""


class GrantTerms(Checked):
    """What an approver grants with an approval.

    Attributes:
        scope: ``session`` (later calls in this session) or ``user`` (in any session of
            the user, the app's).
        max_calls: How many later calls it covers at most.
        where: A :class:`~.predicate.Predicate` over the call's arguments
            (``amount <= 50``); ``None``: every call of the tool.
        ttl: How long it stands, from the approval (the run's clock).

    Raises:
        InvalidPolicyError: A value is out of range or the predicate does not parse.
    """

    scope: GrantScope = "session"
    max_calls: int = Field(ge=1, le=MAX_GRANT_CALLS)
    where: str | None = None
    ttl: timedelta

    @model_validator(mode="after")
    def _usable(self) -> Self:
        if not timedelta(0) < self.ttl <= MAX_GRANT_TTL:
            raise InvalidPolicyError(f"ttl must be positive and at most {MAX_GRANT_TTL}")
        if self.where is not None:
            Predicate.parse(self.where)
        return self


def grant_id(request_id: str) -> str:
    """The id of the grant an approval of request ``request_id`` gives (one per request)."""
    return "grant-" + request_id.removeprefix("adk-")


class GrantGiven(BaseModel):
    """A grant as the run took it with an approval, before a step knows the session."""

    terms: GrantTerms
    request_id: str
    granted_by: str | None = None
    channel: str | None = None
    at: float
    """When the run took the approval (POSIX seconds, the run's clock)."""

    @property
    def id(self) -> str:
        """The grant's id."""
        return grant_id(self.request_id)

    @property
    def expires_at(self) -> float:
        """When the grant stops covering calls."""
        return self.at + self.terms.ttl.total_seconds()

    def record(self, tool: str) -> dict[str, Any]:
        """The grant as the approval's reply event records it."""
        return {
            "id": self.id,
            "tool": tool,
            "scope": self.terms.scope,
            "max_calls": self.terms.max_calls,
            "where": self.terms.where,
            "expires_at": self.expires_at,
        }


class Grant(BaseModel):
    """A standing grant as it is stored and listed.

    ``session_id`` is ``None`` for a grant of the user's every session; ``uses`` counts the
    later calls it let through.
    """

    id: str
    app_name: str
    user_id: str
    session_id: str | None
    tool: str
    where: str | None = None
    max_calls: int
    granted_by: str | None = None
    channel: str | None = None
    granted_at: float
    expires_at: float
    request_id: str
    invocation_id: str = ""
    uses: int = 0
    revoked_at: float | None = None
    revoked_by: str | None = None

    @classmethod
    def of(cls, given: GrantGiven, *, key: SessionKey, tool: str, invocation_id: str) -> Grant:
        """The grant ``given`` for calls of ``tool`` in ``key``'s session (or user)."""
        return cls(
            id=given.id,
            app_name=key.app_name,
            user_id=key.user_id,
            session_id=key.session_id if given.terms.scope == "session" else None,
            tool=tool,
            where=given.terms.where,
            max_calls=given.terms.max_calls,
            granted_by=given.granted_by,
            channel=given.channel,
            granted_at=given.at,
            expires_at=given.expires_at,
            request_id=given.request_id,
            invocation_id=invocation_id,
        )

    @property
    def scope(self) -> GrantScope:
        """``session`` or ``user``."""
        return "user" if self.session_id is None else "session"

    def status(self, now: float) -> GrantStatus:
        """Whether the grant covers calls at ``now``, or why not."""
        if self.revoked_at is not None:
            return "revoked"
        if now >= self.expires_at:
            return "expired"
        return "used_up" if self.uses >= self.max_calls else "active"

    def applies_to(self, key: SessionKey, tool: str) -> bool:
        """Whether calls of ``tool`` in session ``key`` are within the grant's scope."""
        return (
            (key.app_name, key.user_id) == (self.app_name, self.user_id)
            and self.session_id in (None, key.session_id)
            and tool == self.tool
        )

    def covers(self, key: SessionKey, tool: str, args: Mapping[str, Any], now: float) -> bool:
        """Whether a call of ``tool`` with ``args`` in ``key`` may run under the grant now."""
        if self.status(now) != "active" or not self.applies_to(key, tool):
            return False
        return self.where is None or Predicate.parse(self.where).covers(args)
