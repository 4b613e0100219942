"""The approval policy's rules checked early, from what a run published: a claim another
approver holds, a second vote, an answerer outside the approvers, a requester approving
their own call. The run checks the same rules again where it takes the answer; this only
spares a sender the round trip, with no worker needed.
"""

from __future__ import annotations

import time
from typing import cast

from ..approvals import (
    Answerer,
    ApprovalPolicy,
    Claim,
    PolicyRefusalError,
    Vote,
    claim_problem,
    vote_problem,
)
from ..flow.messages import ConfirmInput, RequestSummary, ResumeInput
from .outcome import RefusalReason, Refused

__all__ = ["policy_refusal"]


def _claim(request: RequestSummary) -> Claim | None:
    if request.claimed_by is None or request.claimed_until is None:
        return None
    return Claim(by=request.claimed_by, at=0.0, until=request.claimed_until)


def _problem(
    request: RequestSummary, answer: ConfirmInput | ResumeInput
) -> PolicyRefusalError | None:
    claimed = claim_problem(_claim(request), answer.answered_by, time.time(), request.id)
    if claimed is not None or not isinstance(answer, ConfirmInput):
        return claimed
    policy = ApprovalPolicy(
        approvals=request.approvals,
        approvers=tuple(request.approvers),
        requester_may_approve=not request.requesters,
    )
    votes = [
        Vote(by=v.by, approve=v.decision == "approved", at=v.at, channel=v.channel)
        for v in request.votes
    ]
    return vote_problem(
        policy,
        votes,
        Answerer(answer.answered_by, tuple(answer.groups or ())),
        answer.confirmed,
        request_id=request.id,
        requesters=request.requesters,
    )


def policy_refusal(
    request: RequestSummary, answer: ConfirmInput | ResumeInput, workflow_id: str
) -> Refused | None:
    """The refusal the run would give ``answer`` for the published ``request``'s claim or
    policy, or ``None`` (the run decides the rest)."""
    problem = _problem(request, answer)
    if problem is None:
        return None
    reason = cast(RefusalReason, problem.reason)
    return Refused(reason, f"{workflow_id}: {problem}", error=problem)
