"""Votes on a confirmation request, and the rules a policy sets for each new one.

A request under a policy takes one vote per principal until the policy is met: M distinct
approvals approve the call, one rejection rejects it (unless the policy says otherwise).
Each vote is kept with who gave it, through which channel and when (the run's clock); the
reply event and the audit list them all.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from pydantic import BaseModel

from .errors import (
    AnonymousAnswerError,
    DuplicateVoteError,
    NotAnApproverError,
    PolicyRefusalError,
    SelfApprovalError,
)
from .policy import ApprovalPolicy

__all__ = [
    "DEFAULT_POLICY",
    "MAX_VOTES",
    "Answerer",
    "Vote",
    "approver_problem",
    "decision",
    "vote_problem",
]

DEFAULT_POLICY = ApprovalPolicy()
"""A request without a policy: one answer by anyone decides it."""

MAX_VOTES = 64
"""The most votes a request keeps (rejections that do not end it included)."""


class Vote(BaseModel):
    """One principal's decision on a request, as the run took it."""

    by: str
    approve: bool
    at: float | None = None
    """When the run took it (POSIX seconds, the run's clock)."""
    channel: str | None = None

    def describe(self) -> str:
        """``approved at 2026-12-07 10:00:00 UTC by alice (through gateway)``."""
        verb = "approved" if self.approve else "rejected"
        when = (
            f" at {datetime.fromtimestamp(self.at, UTC):%Y-%m-%d %H:%M:%S} UTC" if self.at else ""
        )
        via = f" (through {self.channel})" if self.channel else ""
        return f"{verb}{when} by {self.by}{via}"


class Answerer(NamedTuple):
    """Who answers, as their channel authenticated them."""

    principal: str | None
    groups: tuple[str, ...] = ()


def approver_problem(
    policy: ApprovalPolicy, who: Answerer, request_id: str, reassigned: bool = False
) -> NotAnApproverError | None:
    """Why ``who`` is none of the approvers, or ``None``: they are (by principal or group),
    or the policy names none. Once the policy's escalation ``reassigned`` the request, its
    ``reassign_to`` approves too; an operator's assignment only routes the inbox."""
    if not policy.approvers:
        return None
    extra = [policy.reassign_to] if reassigned and policy.reassign_to else []
    allowed = {*policy.approvers, *extra}
    if who.principal in allowed or any(g in allowed for g in who.groups):
        return None
    return NotAnApproverError(
        f"{who.principal} may not answer request {request_id!r}: its approvers are "
        f"{', '.join(sorted(allowed))} (by principal or group)"
    )


def vote_problem(
    policy: ApprovalPolicy,
    votes: Sequence[Vote],
    who: Answerer,
    approve: bool,
    *,
    request_id: str,
    requesters: Collection[str],
    reassigned: bool = False,
) -> PolicyRefusalError | None:
    """Why the policy does not take this vote, or ``None``.

    Args:
        policy: The request's policy.
        votes: The votes taken so far.
        who: The answerer.
        approve: The vote.
        request_id: Names the request in the refusal.
        requesters: The principals that count as the invocation's requester.
        reassigned: The policy's escalation reassigned the request (its ``reassign_to``
            may answer too).
    """
    if who.principal is None:
        if not policy.counts_principals():
            return None
        return AnonymousAnswerError(
            f"request {request_id!r} counts who approves: the answer must name its principal "
            "(answered_by), as the gateway, the CLI and the console do"
        )
    earlier = next((v for v in votes if v.by == who.principal), None)
    if earlier is not None:
        return DuplicateVoteError(
            f"{who.principal} voted on request {request_id!r} already: {earlier.describe()}; "
            "one vote per principal"
        )
    outsider = approver_problem(policy, who, request_id, reassigned)
    if outsider is not None:
        return outsider
    if approve and not policy.requester_may_approve and who.principal in requesters:
        return SelfApprovalError(
            f"{who.principal} started the invocation and may not approve its own call "
            f"({request_id!r}): the policy keeps requesters out"
        )
    return None


def decision(policy: ApprovalPolicy, votes: Sequence[Vote]) -> bool | None:
    """What the votes decide: ``True`` approved, ``False`` rejected, ``None`` still open."""
    if policy.reject_ends and any(not v.approve for v in votes):
        return False
    if sum(v.approve for v in votes) >= policy.approvals:
        return True
    return None
