"""The approval rules as pure logic: policies, the predicate language, votes, claims,
escalations and the request book that applies them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from adk_temporal.approvals import (
    AnonymousAnswerError,
    ApprovalPolicy,
    DuplicateVoteError,
    GrantTerms,
    InboxAction,
    InvalidPolicyError,
    NotAnApproverError,
    Predicate,
    RequestClaimedError,
    SelfApprovalError,
)
from adk_temporal.errors import EditNotAllowedError, InvalidAnswerError
from adk_temporal.flow.messages import (
    ConfirmInput,
    InvocationCarry,
    InvocationStatus,
    PendingConfirmation,
)
from adk_temporal.flow.requests import RequestBook
from adk_temporal.render import summary_lines
from adk_temporal.workflows.details import render_details

POLICY = ApprovalPolicy(approvals=2, approvers=("finance",), requester_may_approve=False)


def _book(policy: ApprovalPolicy | None = POLICY, **fields: Any) -> RequestBook:
    book = RequestBook(requesters=["carol", "u-1"])
    book.open(
        PendingConfirmation(
            kind="confirmation",
            id="adk-1",
            function_call_id="call-1",
            tool="refund",
            policy=policy,
            opened_at=100.0,
            **fields,
        )
    )
    return book


def _vote(who: str | None, approve: bool = True, at: float = 110.0, **more: Any) -> ConfirmInput:
    groups = more.pop("groups", ["finance"])
    return ConfirmInput(
        confirmation_id="adk-1",
        confirmed=approve,
        answered_by=who,
        groups=groups,
        answered_at=at,
        channel="cli",
        **more,
    )


@pytest.mark.parametrize(
    ("text", "args", "covered"),
    [
        ("amount <= 50", {"amount": 50}, True),
        ("amount <= 50", {"amount": 50.5}, False),
        ("amount <= 50", {"amount": "40"}, False),
        ("amount <= 50", {}, False),
        ('currency == "EUR" and amount < 100', {"currency": "EUR", "amount": 99}, True),
        ('to in ["alice", "bob"]', {"to": "bob"}, True),
        ("not (amount > 50)", {}, False),
        ('order.kind != "refund" or vip', {"order": {"kind": "refund"}, "vip": True}, True),
        ("flag", {"flag": 1}, False),
    ],
)
def test_a_predicate_covers_only_what_it_says(
    text: str, args: dict[str, Any], covered: bool
) -> None:
    """A missing argument or mismatched kinds make the whole predicate false, ``not``
    included: a grant never covers a call by accident."""
    assert Predicate.parse(text).covers(args) is covered


@pytest.mark.parametrize(
    "text",
    ['__import__("os")', "amount <=", "a == 1 1", '"open', "", "[1, 2", "(" * 30 + "a" + ")" * 30],
)
def test_a_malformed_predicate_is_refused_naming_the_problem(text: str) -> None:
    """Anything that is not a predicate (a call, a dangling operator, a long nest) is
    refused with InvalidPolicyError; nothing is evaluated."""
    with pytest.raises(InvalidPolicyError, match="predicate"):
        Predicate.parse(text)


def test_bad_policies_and_grant_terms_are_refused_with_the_field() -> None:
    """Out-of-range counts, empty names, half a reassignment and an unreadable predicate
    are refused, naming what is wrong."""
    with pytest.raises(InvalidPolicyError, match="approvals"):
        ApprovalPolicy(approvals=0)
    with pytest.raises(InvalidPolicyError, match="approver"):
        ApprovalPolicy(approvers=("",))
    with pytest.raises(InvalidPolicyError, match="reassign_to"):
        ApprovalPolicy(reassign_after=timedelta(hours=1))
    with pytest.raises(InvalidPolicyError, match="max_age"):
        ApprovalPolicy(max_age=timedelta(0))
    with pytest.raises(InvalidPolicyError, match="predicate"):
        GrantTerms(max_calls=1, where="amount <", ttl=timedelta(hours=1))
    with pytest.raises(InvalidPolicyError, match="ttl"):
        GrantTerms(max_calls=1, ttl=timedelta(days=400))


def test_two_votes_of_distinct_approvers_decide_and_each_rule_refuses_its_case() -> None:
    """The first vote is taken and decides nothing; a second by the same principal, the
    requester's, an outsider's and an unnamed one are refused; a second approver decides."""
    book = _book()
    assert book.accept(_vote("alice")) == "voted"
    assert book.unanswered_ids() == ["adk-1"]
    assert isinstance(book.problem(_vote("alice")), DuplicateVoteError)
    assert book.accept(_vote("alice")) == "duplicate"  # the same vote again: a no-op
    assert isinstance(book.problem(_vote("alice", approve=False)), DuplicateVoteError)
    assert isinstance(book.problem(_vote("carol")), SelfApprovalError)
    assert isinstance(book.problem(_vote("u-1")), SelfApprovalError)
    assert isinstance(book.problem(_vote("dave", groups=["sales"])), NotAnApproverError)
    assert isinstance(book.problem(_vote(None)), AnonymousAnswerError)
    assert book.problem(_vote("carol", approve=False)) is None  # a requester may reject
    assert book.accept(_vote("bob")) == "accepted"
    [taken] = book.take(["adk-1"])
    assert isinstance(taken.pending, PendingConfirmation)
    assert [(v.by, v.approve) for v in taken.pending.votes] == [("alice", True), ("bob", True)]


def test_a_rejection_ends_the_request_unless_the_policy_says_otherwise() -> None:
    """With reject_ends a rejection decides; without, it is a vote and approvals still
    decide."""
    ends = _book()
    assert ends.accept(_vote("alice", approve=False)) == "accepted"
    lenient = _book(POLICY.model_copy(update={"reject_ends": False}))
    assert lenient.accept(_vote("alice", approve=False)) == "voted"
    assert lenient.accept(_vote("bob")) == "voted"
    assert lenient.accept(_vote("erin")) == "accepted"


def test_quorum_votes_take_no_edits_and_one_approver_grants_nothing() -> None:
    """Edited arguments and standing grants are refused on a request needing two approvals;
    a grant needs an approval."""
    book = _book()
    assert isinstance(book.problem(_vote("alice", edited_args={"amount": 1})), EditNotAllowedError)
    terms = GrantTerms(max_calls=1, ttl=timedelta(hours=1))
    assert isinstance(book.problem(_vote("alice", grant=terms)), InvalidAnswerError)
    single = _book(ApprovalPolicy())
    assert isinstance(
        single.problem(_vote("alice", approve=False, grant=terms)), InvalidAnswerError
    )
    assert single.problem(_vote("alice", grant=terms)) is None


def test_a_claim_refuses_others_until_it_lapses_or_its_claimant_votes() -> None:
    """alice's claim refuses bob's answer and claim while it holds; it lapses at its end;
    alice's own vote releases it."""
    book = _book()
    claim = InboxAction(
        request_id="adk-1", action="claim", answered_by="alice", groups=["finance"], seconds=60
    )
    assert book.take_inbox(claim, 100.0) == "accepted"
    assert isinstance(book.problem(_vote("bob", at=120.0)), RequestClaimedError)
    bob_claims = claim.model_copy(update={"answered_by": "bob"})
    assert isinstance(book.inbox_problem(bob_claims, 120.0), RequestClaimedError)
    assert book.problem(_vote("bob", at=161.0)) is None  # lapsed
    assert book.accept(_vote("alice", at=130.0)) == "voted"
    assert book.problem(_vote("bob", at=131.0)) is None  # released by alice's vote
    outsider = InboxAction(request_id="adk-1", action="claim", answered_by="dave")
    assert isinstance(book.inbox_problem(outsider, 131.0), NotAnApproverError)


def test_reminder_and_reassignment_are_due_once_each_at_their_times() -> None:
    """The reminder is due at opening + remind_after, the reassignment at + reassign_after
    (moving the assignee); each is taken once."""
    policy = ApprovalPolicy(
        approvers=("payments",),
        remind_after=timedelta(seconds=10),
        reassign_after=timedelta(seconds=20),
        reassign_to="treasury",
    )
    book = _book(policy, assignee="payments")
    assert book.next_escalation(["adk-1"]) == 110.0
    assert book.escalate(["adk-1"], 109.0) == []
    [(_, step)] = book.escalate(["adk-1"], 110.0)
    assert step == "reminded" and book.next_escalation(["adk-1"]) == 120.0
    [(pending, step)] = book.escalate(["adk-1"], 125.0)
    assert step == "reassigned" and pending.assignee == "treasury"
    assert book.next_escalation(["adk-1"]) is None
    # treasury may answer now, as the reassignment says.
    assert book.problem(_vote("tom", groups=["treasury"])) is None


def test_votes_and_inbox_state_cross_continue_as_new() -> None:
    """A request carried to the next run keeps its votes, claim and trail; the next vote
    decides there."""
    book = _book()
    book.accept(_vote("alice"))
    book.take_inbox(
        InboxAction(request_id="adk-1", action="assign", answered_by="op", assignee="finance-eu"),
        111.0,
    )
    carried = book.carry()[0]

    restored = RequestBook(requesters=["carol"])
    restored.restore(InvocationCarry(invocation_id="e-1", step=1, open_requests=carried))
    [pending] = restored.unanswered()
    assert isinstance(pending, PendingConfirmation)
    assert [v.by for v in pending.votes] == ["alice"] and pending.assignee == "finance-eu"
    assert isinstance(restored.problem(_vote("alice")), DuplicateVoteError)
    assert restored.accept(_vote("bob")) == "accepted"


def test_the_ui_details_and_pending_listing_show_votes_approvers_and_claims() -> None:
    """A quorum request's details (Temporal UI) and its published summary (``pending``)
    say how many votes it has of how many, who voted, who may answer and who claimed it."""
    book = _book()
    book.accept(_vote("alice"))
    claim = InboxAction(
        request_id="adk-1", action="claim", answered_by="bob", groups=["finance"], seconds=60
    )
    book.take_inbox(claim, 120.0)
    [pending] = book.unanswered()
    status = InvocationStatus(
        status="awaiting_confirmation", invocation_id="e-1", agent="a", step=1
    )
    details = render_details("adk/a/u/s", status, [pending])
    assert "votes: 1 of 2 (alice approved)" in details
    assert "approvers: finance" in details and "claimed by bob until" in details
    text = "\n".join(str(line) for line in summary_lines("adk/a/u/s", pending.summary(), "x:1"))
    assert "votes    1 of 2 alice approved" in text and "claimed  by bob" in text


def test_an_assignment_routes_the_inbox_but_grants_no_right_to_approve() -> None:
    """bob (in sales) assigns the refund to himself: it is in his inbox, his approval is
    still refused; releasing a claim nobody holds is refused."""
    book = _book()
    assign = InboxAction(request_id="adk-1", action="assign", answered_by="bob", assignee="bob")
    assert book.take_inbox(assign, 101.0) == "accepted"
    [pending] = book.unanswered()
    assert pending.assignee == "bob"
    assert isinstance(book.problem(_vote("bob", groups=["sales"])), NotAnApproverError)
    release = InboxAction(request_id="adk-1", action="release", answered_by="bob")
    assert isinstance(book.inbox_problem(release, 102.0), InvalidAnswerError)
