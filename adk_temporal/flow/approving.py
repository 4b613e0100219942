"""Approval policies applied to the run's open requests: votes, claims, assignments,
reminders and reassignments, as the request book takes them.

Pure functions over a request and an answer (or an inbox action), deterministic, so the
workflow's handlers and the in-process runner apply the same rules
(:mod:`adk_temporal.approvals` holds the rules themselves). Each returns the request as it
stands afterwards: the book keeps it, publishes it and carries it across continue-as-new.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeAlias

from adk_temporal.approvals import (
    DEFAULT_POLICY,
    Answerer,
    Claim,
    InboxAction,
    TrailAction,
    TrailEntry,
    Vote,
    claim_problem,
    decision,
    vote_problem,
)
from adk_temporal.approvals.inbox import MAX_TRAIL
from adk_temporal.approvals.votes import MAX_VOTES, approver_problem
from adk_temporal.errors import AdkRequestError, EditNotAllowedError, InvalidAnswerError

from .messages import ConfirmInput, PendingConfirmation, PendingRequest, ResumeInput

__all__ = [
    "Escalation",
    "answer_problem",
    "cast_vote",
    "due_escalations",
    "escalate",
    "inbox_problem",
    "next_escalation",
    "take_inbox",
]

Escalation: TypeAlias = TrailAction
"""A step the runtime takes on a request left unanswered: ``reminded`` or ``reassigned``."""

_DEFAULT_CLAIM_SECONDS = DEFAULT_POLICY.claim_for.total_seconds()

_DONE: dict[str, TrailAction] = {"claim": "claimed", "release": "released", "assign": "assigned"}


def _answerer(answer: ConfirmInput | ResumeInput) -> Answerer:
    return Answerer(answer.answered_by, tuple(answer.groups or ()))


def answer_problem(
    pending: PendingRequest,
    answer: ConfirmInput | ResumeInput,
    requesters: Collection[str],
    now: float | None,
) -> AdkRequestError | None:
    """Why the request's claim or policy does not take ``answer`` at ``now``, or ``None``.

    ``now`` ``None`` (an answer checked before the run stamped it, without a clock) counts
    every claim as holding.
    """
    claimed = claim_problem(
        pending.claim, answer.answered_by, float("-inf") if now is None else now, pending.id
    )
    if claimed is not None or not isinstance(pending, PendingConfirmation):
        return claimed
    assert isinstance(answer, ConfirmInput)  # the book matched the kinds
    policy = pending.policy or DEFAULT_POLICY
    problem = vote_problem(
        policy,
        pending.votes,
        _answerer(answer),
        answer.confirmed,
        request_id=pending.id,
        requesters=requesters,
        reassigned=_reassigned(pending),
    )
    if problem is not None:
        return problem
    if len(pending.votes) >= MAX_VOTES:
        return InvalidAnswerError(
            f"request {pending.id!r} has {MAX_VOTES} votes, the most one request keeps"
        )
    if answer.edited_args is not None and policy.approvals > 1:
        return EditNotAllowedError(
            f"request {pending.id!r} needs {policy.approvals} approvals of one call: its votes "
            "approve the call as it was asked, without edited arguments"
        )
    return _grant_problem(pending, answer)


def _reassigned(pending: PendingRequest) -> bool:
    """Whether the runtime's escalation reassigned ``pending`` (not an operator)."""
    return any(e.action == "reassigned" and e.by is None for e in pending.trail)


def _grant_problem(pending: PendingConfirmation, answer: ConfirmInput) -> AdkRequestError | None:
    if answer.grant is None:
        return None
    policy = pending.policy or DEFAULT_POLICY
    if not answer.confirmed:
        why = "a standing grant comes with an approval, not a rejection"
    elif not policy.grantable:
        why = f"the policy of {pending.tool!r} allows no standing grants"
    elif policy.approvals > 1:
        why = f"{pending.tool!r} needs {policy.approvals} approvals: one approver grants nothing"
    else:
        return None
    return InvalidAnswerError(f"{why} ({pending.id!r})")


def cast_vote(
    pending: PendingConfirmation, answer: ConfirmInput
) -> tuple[PendingConfirmation, bool]:
    """``pending`` with ``answer``'s vote taken (a claimant's vote releases their claim), and
    whether the votes decide the request now. The answer must have passed
    :func:`answer_problem` and name its principal, unless the policy counts nobody."""
    vote = Vote(
        by=answer.answered_by or "(not named)",
        approve=answer.confirmed,
        at=answer.answered_at,
        channel=answer.channel,
    )
    votes = [*pending.votes, vote]
    claim = pending.claim
    if claim is not None and claim.by == answer.answered_by:
        claim = None
    updated = pending.model_copy(update={"votes": votes, "claim": claim})
    return updated, decision(pending.policy or DEFAULT_POLICY, votes) is not None


def inbox_problem(
    pending: PendingRequest, action: InboxAction, now: float
) -> AdkRequestError | None:
    """Why ``action`` cannot be taken on the open request ``pending`` at ``now``, or ``None``."""
    if action.action == "assign":
        return _trail_full(pending)
    claimed = claim_problem(pending.claim, action.answered_by, now, pending.id)
    if claimed is not None:
        return claimed
    if action.action == "release" and (pending.claim is None or not pending.claim.holds(now)):
        return InvalidAnswerError(f"request {pending.id!r} is not claimed: nothing to release")
    if action.action == "claim" and isinstance(pending, PendingConfirmation):
        policy = pending.policy or DEFAULT_POLICY
        outsider = approver_problem(policy, action.answerer, pending.id, _reassigned(pending))
        if outsider is not None:
            return outsider
    return _trail_full(pending)


def _trail_full(pending: PendingRequest) -> AdkRequestError | None:
    taken = sum(e.by is not None for e in pending.trail)
    if taken < MAX_TRAIL:
        return None
    return InvalidAnswerError(
        f"request {pending.id!r} has had {MAX_TRAIL} claims, releases and assignments, the "
        "most one request records; answer it"
    )


def take_inbox(pending: PendingRequest, action: InboxAction, now: float) -> PendingRequest:
    """``pending`` after ``action`` (checked by :func:`inbox_problem`), taken at ``now``."""
    entry = TrailEntry(
        action=_DONE[action.action],
        at=now,
        by=action.answered_by,
        channel=action.channel,
        assignee=action.assignee,
    )
    update: dict[str, object] = {"trail": [*pending.trail, entry]}
    if action.action == "claim":
        policy = pending.policy if isinstance(pending, PendingConfirmation) else None
        default = policy.claim_for.total_seconds() if policy else _DEFAULT_CLAIM_SECONDS
        assert action.answered_by is not None  # InboxAction requires it
        update["claim"] = Claim(
            by=action.answered_by,
            at=now,
            until=now + (action.seconds or default),
            channel=action.channel,
        )
    elif action.action == "release":
        update["claim"] = None
    else:
        update["assignee"] = action.assignee
    return pending.model_copy(update=update)


def _steps(pending: PendingRequest) -> list[tuple[float, Escalation]]:
    """The reminder and reassignment still to come for ``pending``, with their times."""
    policy = pending.policy if isinstance(pending, PendingConfirmation) else None
    if policy is None or pending.opened_at is None:
        return []
    done = {e.action for e in pending.trail if e.by is None}
    steps: list[tuple[float, Escalation]] = []
    if policy.remind_after is not None and "reminded" not in done:
        steps.append((pending.opened_at + policy.remind_after.total_seconds(), "reminded"))
    if policy.reassign_after is not None and "reassigned" not in done:
        steps.append((pending.opened_at + policy.reassign_after.total_seconds(), "reassigned"))
    return steps


def next_escalation(pending: PendingRequest) -> float | None:
    """When the next reminder or reassignment of ``pending`` is due; ``None``: none."""
    return min((at for at, _ in _steps(pending)), default=None)


def due_escalations(pending: PendingRequest, now: float) -> list[Escalation]:
    """The reminder and reassignment of ``pending`` due at ``now``, in order."""
    return [step for at, step in sorted(_steps(pending)) if at <= now]


def escalate(pending: PendingRequest, step: Escalation, now: float) -> PendingRequest:
    """``pending`` after the runtime's ``step``: a reminder, or a reassignment to the
    policy's ``reassign_to``."""
    assert isinstance(pending, PendingConfirmation) and pending.policy is not None
    assignee = pending.policy.reassign_to if step == "reassigned" else None
    entry = TrailEntry(action=step, at=now, assignee=assignee)
    update: dict[str, object] = {"trail": [*pending.trail, entry]}
    if assignee is not None:
        update["assignee"] = assignee
    return pending.model_copy(update=update)
