"""The inbox of a waiting request: its assignee, a claim on it, when it is due, and the
trail of what happened to it while it waited.

A claim is a principal's "I am on it": until its claimant releases it or it expires, the
request is hidden from other approvers' inbox views and their answers are refused
(:class:`~.errors.RequestClaimedError`, reason ``claimed``). An operator may assign a
request to a group or principal; the escalation reassigns it after a while. Every claim,
release, assignment, reminder and reassignment is a :class:`TrailEntry`, kept on the
request and written into its reply event, where the audit finds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Self, TypeAlias

from pydantic import BaseModel, Field, model_validator

from .errors import InvalidPolicyError, PolicyRefusalError, RequestClaimedError
from .names import Checked, check_name
from .votes import Answerer

__all__ = [
    "MAX_CLAIM_SECONDS",
    "MAX_TRAIL",
    "Claim",
    "InboxAction",
    "InboxFilter",
    "TrailAction",
    "TrailEntry",
    "claim_problem",
    "inbox_matches",
]

MAX_CLAIM_SECONDS = 7 * 86_400.0
"""The longest a claim may be asked to hold."""

MAX_TRAIL = 32
"""The most trail entries a request keeps (the latest; the audit says how many went)."""

TrailAction: TypeAlias = Literal["claimed", "released", "assigned", "reminded", "reassigned"]
"""What happened to a waiting request."""


def _when(at: float) -> str:
    return f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC"


class Claim(BaseModel):
    """A principal's claim on a request, until ``until`` (POSIX seconds, the run's clock)."""

    by: str
    at: float
    until: float
    channel: str | None = None

    def holds(self, now: float) -> bool:
        """Whether the claim still holds at ``now``."""
        return now < self.until

    def describe(self) -> str:
        """``claimed by alice until 2026-12-07 11:00:00 UTC``."""
        return f"claimed by {self.by} until {_when(self.until)}"


class TrailEntry(BaseModel):
    """One thing that happened to a waiting request; ``by`` is ``None`` for the runtime's
    own steps (a reminder, a reassignment)."""

    action: TrailAction
    at: float
    by: str | None = None
    channel: str | None = None
    assignee: str | None = None
    """The new assignee (``assigned``, ``reassigned``)."""


class InboxAction(Checked):
    """A claim, a release or an assignment of one request (signal ``adk_inbox`` or the
    checked update).

    ``seconds`` is how long a claim holds (the policy's ``claim_for`` when ``None``);
    ``assignee`` is the group or principal an assignment names.
    """

    request_id: str
    action: Literal["claim", "release", "assign"]
    answered_by: str | None = None
    """Who acts, as their channel authenticated them."""
    groups: list[str] = Field(default_factory=list)
    channel: str | None = None
    assignee: str | None = None
    seconds: float | None = Field(default=None, gt=0, le=MAX_CLAIM_SECONDS)
    at: float | None = None
    """When the run took it: set by the run, whatever the sender put here."""

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.action == "assign":
            if self.assignee is None:
                raise InvalidPolicyError("an assignment names its assignee")
            check_name(self.assignee, "the assignee")
        if self.answered_by is None:
            raise InvalidPolicyError(f"a {self.action} must name who does it (answered_by)")
        check_name(self.answered_by, "answered_by")
        return self

    @property
    def answerer(self) -> Answerer:
        """Who acts."""
        return Answerer(self.answered_by, tuple(self.groups))


def claim_problem(
    claim: Claim | None, who: str | None, now: float, request_id: str
) -> PolicyRefusalError | None:
    """Why ``who`` may not answer (or claim) a request under ``claim`` at ``now``, or ``None``."""
    if claim is None or not claim.holds(now) or claim.by == who:
        return None
    return RequestClaimedError(
        f"request {request_id!r} is {claim.describe()}: answers by others are refused until "
        "it is released or expires"
    )


@dataclass(frozen=True)
class InboxFilter:
    """Which waiting requests an inbox listing shows.

    Args:
        assignee: Only requests assigned to one of these (groups or principals).
        claimed: ``True``: only claimed ones; ``False``: only unclaimed ones; ``None``:
            both, except those another principal claimed when ``viewer`` is given.
        overdue: Only requests past their due time.
        viewer: Who looks: requests others hold a claim on are hidden from them.
    """

    assignee: Sequence[str] = ()
    claimed: bool | None = None
    overdue: bool = False
    viewer: str | None = None


def inbox_matches(
    view: InboxFilter,
    *,
    assignee: str | None,
    claimed_by: str | None,
    claimed_until: float | None,
    due_at: float | None,
    now: float,
) -> bool:
    """Whether a request with these inbox fields is in ``view`` at ``now``."""
    held = claimed_by is not None and claimed_until is not None and now < claimed_until
    if view.assignee and assignee not in view.assignee:
        return False
    if view.claimed is not None and held != view.claimed:
        return False
    if view.claimed is None and held and view.viewer is not None and claimed_by != view.viewer:
        return False
    return not view.overdue or (due_at is not None and due_at < now)
