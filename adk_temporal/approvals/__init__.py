"""Approval policies: who must approve a tool's calls, how many, for how long; the votes,
the inbox of a waiting request, and standing grants.

Engine-neutral rules the invocation flow applies where it takes an answer
(:class:`~adk_temporal.flow.requests.RequestBook`), so a raw signal cannot bypass them,
and the answer desk applies early: :class:`ApprovalPolicy` (M of N distinct principals,
approvers by principal or group, separation of duties, one vote per principal, a maximum
age of an approval, reminders, reassignment and expiry), :class:`Vote`, the inbox's
:class:`Claim` and :class:`TrailEntry`, :class:`Grant` and its :class:`Predicate`.
"""

from __future__ import annotations

from .errors import (
    AnonymousAnswerError,
    DuplicateVoteError,
    GrantNotFoundError,
    InvalidPolicyError,
    NotAnApproverError,
    PolicyRefusalError,
    RequestClaimedError,
    SelfApprovalError,
    StaleRequestError,
)
from .grants import GRANT_KEY, Grant, GrantGiven, GrantScope, GrantStatus, GrantTerms, grant_id
from .inbox import (
    Claim,
    InboxAction,
    InboxFilter,
    TrailAction,
    TrailEntry,
    claim_problem,
    inbox_matches,
)
from .policy import ApprovalPolicy, effective_policy
from .predicate import Predicate
from .votes import DEFAULT_POLICY, Answerer, Vote, decision, vote_problem

__all__ = [
    "DEFAULT_POLICY",
    "GRANT_KEY",
    "AnonymousAnswerError",
    "Answerer",
    "ApprovalPolicy",
    "Claim",
    "DuplicateVoteError",
    "Grant",
    "GrantGiven",
    "GrantNotFoundError",
    "GrantScope",
    "GrantStatus",
    "GrantTerms",
    "InboxAction",
    "InboxFilter",
    "InvalidPolicyError",
    "NotAnApproverError",
    "PolicyRefusalError",
    "Predicate",
    "RequestClaimedError",
    "SelfApprovalError",
    "StaleRequestError",
    "TrailAction",
    "TrailEntry",
    "Vote",
    "claim_problem",
    "decision",
    "effective_policy",
    "grant_id",
    "inbox_matches",
    "vote_problem",
]
