"""The approval policies' errors: an answer a policy refuses, a policy or grant that cannot
be used.

Each refusal of an answer has a reason the answer desk reports on every surface
(:attr:`PolicyRefusalError.reason`); a worker's refusal crosses Temporal as the class name
and message and is rebuilt from them (``flow.requests.refusal``).

```
AdkRequestError
├── PolicyRefusalError (an answer a request's approval policy does not take)
│   ├── AnonymousAnswerError (anonymous: the answer names no principal)
│   ├── NotAnApproverError (not_an_approver: the principal is in none of the approvers)
│   ├── SelfApprovalError (self_approval: the requester approves their own call)
│   ├── DuplicateVoteError (duplicate_vote: the principal voted already)
│   ├── RequestClaimedError (claimed: another approver claimed the request)
│   └── StaleRequestError (stale: the request was re-opened under another id)
├── InvalidPolicyError (ValueError: a policy, grant or predicate that cannot be used)
└── GrantNotFoundError (LookupError: no such grant)
```
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import AdkRequestError

__all__ = [
    "AnonymousAnswerError",
    "DuplicateVoteError",
    "GrantNotFoundError",
    "InvalidPolicyError",
    "NotAnApproverError",
    "PolicyRefusalError",
    "RequestClaimedError",
    "SelfApprovalError",
    "StaleRequestError",
]


class PolicyRefusalError(AdkRequestError):
    """An answer the request's approval policy (or its inbox) does not take."""

    reason: ClassVar[str] = "policy"
    """The answer desk's reason for this refusal."""


class AnonymousAnswerError(PolicyRefusalError):
    """The answer names no principal, and the policy counts who answers."""

    reason = "anonymous"


class NotAnApproverError(PolicyRefusalError):
    """The answering principal is none of the approvers, nor in one of their groups."""

    reason = "not_an_approver"


class SelfApprovalError(PolicyRefusalError):
    """The principal that started the invocation approves its own call."""

    reason = "self_approval"


class DuplicateVoteError(PolicyRefusalError):
    """The principal has voted on this request already."""

    reason = "duplicate_vote"


class RequestClaimedError(PolicyRefusalError):
    """Another approver holds a claim on the request."""

    reason = "claimed"


class StaleRequestError(PolicyRefusalError):
    """The request was re-opened under a new id (its approval went stale)."""

    reason = "stale"


class InvalidPolicyError(AdkRequestError, ValueError):
    """A policy, a grant's terms or a grant's predicate cannot be used; the message says
    which value and why."""


class GrantNotFoundError(AdkRequestError, LookupError):
    """No grant has this id in this app."""
