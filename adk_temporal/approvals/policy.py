"""``ApprovalPolicy``: who must approve a tool's calls, how many of them, and for how long
an approval holds.

A policy is declared on a tool (``@tool(approvals=2, approvers=["finance"])`` or
``approval=ApprovalPolicy(...)``) or per tool in the App (``App(approval_policies=...)``,
which replaces the tool's own). It travels with the call the model made (the tool's
options, recorded in history), so the run judges every answer by the policy its call was
planned with, whatever the workers' configuration says later.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Self

from pydantic import ConfigDict, Field, field_validator, model_validator

from .errors import InvalidPolicyError
from .names import Checked, check_name

__all__ = [
    "MAX_APPROVALS",
    "MAX_APPROVERS",
    "ApprovalPolicy",
    "effective_policy",
]

MAX_APPROVALS = 20
"""The most distinct approvals a policy may ask for."""

MAX_APPROVERS = 64
"""The most principals and groups a policy may name."""

_LONGEST = timedelta(days=366)


def _positive(value: timedelta | None, name: str) -> timedelta | None:
    if value is not None and not timedelta(0) < value <= _LONGEST:
        raise InvalidPolicyError(f"{name} must be positive and at most a year, got {value}")
    return value


class ApprovalPolicy(Checked):
    """How a tool's calls are approved.

    Attributes:
        approvals: How many distinct principals must approve (M of the approvers).
        approvers: The principals or groups that may answer (a name matches an answerer's
            principal or one of the groups their channel authenticated); empty: anyone.
        requester_may_approve: ``False``: the principal that started the invocation, and
            the session's user, may not approve its calls (separation of duties).
        reject_ends: One rejection rejects the call; ``False``: rejections are recorded
            and the request stays open until it has its approvals or expires.
        max_age: The longest an approval may wait before the call runs; an older one
            re-opens the request instead of running the call.
        assignee: Whose inbox the request is in (a group or a principal); by default the
            first approver.
        due_after: When the request is due (overdue listings), counted from its opening.
        remind_after: The notification is sent again after this long unanswered.
        reassign_after: After this long unanswered the request moves to ``reassign_to``
            (who may then answer it too), with an audit entry and a notification.
        reassign_to: The group (or principal) a request is reassigned to.
        expire_after: After this long unanswered the request expires: the call is rejected
            (the default action). A ``timeout`` the tool sets wins.
        claim_for: How long a claim hides the request from other approvers unless its
            claimant releases it sooner.
        grantable: An approver may answer with a standing grant for later calls.

    Raises:
        InvalidPolicyError: A value is out of range, a name is empty or holds control
            characters, or ``reassign_after`` and ``reassign_to`` are not given together.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    approvals: int = Field(default=1, ge=1, le=MAX_APPROVALS)
    approvers: tuple[str, ...] = Field(default=(), max_length=MAX_APPROVERS)
    requester_may_approve: bool = True
    reject_ends: bool = True
    max_age: timedelta | None = None
    assignee: str | None = None
    due_after: timedelta | None = None
    remind_after: timedelta | None = None
    reassign_after: timedelta | None = None
    reassign_to: str | None = None
    expire_after: timedelta | None = None
    claim_for: timedelta = timedelta(hours=1)
    grantable: bool = True

    @field_validator("approvers")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            check_name(name, "an approver")
        return tuple(dict.fromkeys(value))

    @field_validator("assignee", "reassign_to")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value, "an assignee")

    @model_validator(mode="after")
    def _durations(self) -> Self:
        for name in ("max_age", "due_after", "remind_after", "reassign_after", "expire_after"):
            _positive(getattr(self, name), name)
        _positive(self.claim_for, "claim_for")
        if (self.reassign_after is None) != (self.reassign_to is None):
            raise InvalidPolicyError("reassign_after and reassign_to are given together")
        return self

    @property
    def inbox(self) -> str | None:
        """Whose inbox a new request is in: ``assignee``, else the first approver."""
        return self.assignee or (self.approvers[0] if self.approvers else None)

    def counts_principals(self) -> bool:
        """Whether answers must name their principal: votes are counted, approvers
        checked, or the requester kept out."""
        return self.approvals > 1 or bool(self.approvers) or not self.requester_may_approve


def effective_policy(
    tool: str, declared: ApprovalPolicy | None, overrides: Mapping[str, ApprovalPolicy]
) -> ApprovalPolicy | None:
    """The policy a call of ``tool`` is judged by: the App's entry for it, else the tool's."""
    return overrides.get(tool, declared)
