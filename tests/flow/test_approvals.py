"""Approval policies in-process: votes, separation of duties, claims, standing grants,
stale approvals, prechecks and reminders, judged by the same request book the workflow
uses."""

from __future__ import annotations

import pytest

from adk_temporal.approvals import (
    AnonymousAnswerError,
    DuplicateVoteError,
    InboxAction,
    NotAnApproverError,
    RequestClaimedError,
    SelfApprovalError,
)
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey

from .. import approvals_app
from ..approvals_app import APP, USER, audit, paused, start, tool_effects
from .conftest import LocalFactory


async def test_two_of_finance_stay_paused_refuse_a_second_vote_and_run_once(
    run_local: LocalFactory,
) -> None:
    """2-of-N: alice's approval leaves the call paused with her vote listed, her second vote
    is refused (duplicate_vote), bob's completes it; refund runs once; both votes audited."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        run, session = await start(rt, "refund 30")
        request = await paused(run)
        before = len(tool_effects("refund"))
        await run.confirm(request.id, True, answered_by="alice", groups=["finance"])
        [still] = await run.pending()
        assert isinstance(still, PendingConfirmation)
        assert [(v.by, v.approve) for v in still.votes] == [("alice", True)]
        assert (await run.status()).status == "awaiting_confirmation"
        with pytest.raises(DuplicateVoteError, match="alice voted"):
            await run.confirm(request.id, True, answered_by="alice", groups=["finance"])
        await run.confirm(request.id, True, answered_by="bob", groups=["finance"])
        assert (await run.result()).status == "completed"
        entries = await audit(rt, session)
    assert len(tool_effects("refund")) == before + 1
    votes = [(e.answered_by, e.decision, e.channel) for e in entries if e.vote]
    assert votes == [("alice", "approved", "in-process"), ("bob", "approved", "in-process")]


async def test_the_requester_and_strangers_cannot_approve(run_local: LocalFactory) -> None:
    """The principal that started the run (and the session's user) may not approve its
    refund; a principal outside finance and an unnamed answer are refused; none counts."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        run, _ = await start(rt, "refund 10", by="alice")
        request = await paused(run)
        with pytest.raises(SelfApprovalError, match="alice started the invocation"):
            await run.confirm(request.id, True, answered_by="alice", groups=["finance"])
        with pytest.raises(SelfApprovalError):
            await run.confirm(request.id, True, answered_by=USER, groups=["finance"])
        with pytest.raises(NotAnApproverError, match="finance"):
            await run.confirm(request.id, True, answered_by="dave", groups=["sales"])
        with pytest.raises(AnonymousAnswerError):
            await run.confirm(request.id, True)
        [still] = await run.pending()
        assert isinstance(still, PendingConfirmation) and still.votes == []
        # The requester may still reject: separation of duties is about approving.
        await run.confirm(request.id, False, answered_by="alice", groups=["finance"])
        assert (await run.result()).status == "completed"


async def test_a_claim_refuses_others_until_released(run_local: LocalFactory) -> None:
    """alice's claim refuses bob's vote naming the claim; once released, bob's counts."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        run, session = await start(rt, "refund 40")
        request = await paused(run)
        claim = InboxAction(
            request_id=request.id, action="claim", answered_by="alice", groups=["finance"]
        )
        await run.inbox(claim)
        with pytest.raises(RequestClaimedError, match="claimed by alice until"):
            await run.confirm(request.id, True, answered_by="bob", groups=["finance"])
        with pytest.raises(RequestClaimedError):
            await run.inbox(claim.model_copy(update={"answered_by": "bob"}))
        await run.inbox(claim.model_copy(update={"action": "release"}))
        await run.confirm(request.id, True, answered_by="bob", groups=["finance"])
        await run.confirm(request.id, True, answered_by="alice", groups=["finance"])
        await run.result()
        entries = await audit(rt, session)
    assert [e.decision for e in entries] == ["claimed", "released", "approved", "approved"]
    assert [e.answered_by for e in entries] == ["alice", "alice", "bob", "alice"]


async def test_a_standing_grant_lets_two_calls_through_and_pauses_the_third(
    run_local: LocalFactory,
) -> None:
    """credit 20 approved with a grant (2 calls, amount <= 50): credit 30 and 40 run unasked
    and cite the grant; credit 45 pauses again."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        _, entries, grant = await approvals_app.granted_twice(rt)
    assert [e["amount"] for e in tool_effects("credit")][-3:] == [20, 30, 40]
    granted = [e for e in entries if e.decision == "granted"]
    assert [e.grant_id for e in granted] == [grant.id, grant.id]
    assert (grant.uses, grant.max_calls, grant.granted_by) == (2, 2, "bob")
    [approval] = [e for e in entries if e.decision == "approved"]
    assert approval.grant_id == grant.id


async def test_an_approval_older_than_max_age_reopens_the_request(
    run_local: LocalFactory,
) -> None:
    """ship's first attempt fails and its retry comes after max_age: the request re-opens
    (a new id naming the old), the old id is refused as stale, a fresh approval ships."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        run, _ = await start(rt, "ship lamp")
        first = await approvals_app.stale_then_shipped(run)
        assert (await run.result()).status == "completed"
    assert len(approvals_app.shipped(run, first)) == 1


async def test_a_precheck_refuses_an_approved_call_before_its_side_effect(
    run_local: LocalFactory,
) -> None:
    """payout 500, approved, is refused by its precheck with the reason; payout 50 runs."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        run, session = await start(rt, "payout 500")
        await run.confirm((await paused(run)).id, True, answered_by="bob")
        await run.result()
        stored = await rt.sessions.get(SessionKey(APP, USER, session))
        [response] = [
            r.response
            for e in stored.events
            for r in e.function_responses()
            if r.name == "payout" and "before running" in str(r.response)
        ]
        assert response is not None
        assert "500 is over the payout limit" in response["error"]
        ok, _ = await start(rt, "payout 50", session=session)
        await ok.confirm((await paused(ok)).id, True, answered_by="bob")
        await ok.result()
    assert [e["amount"] for e in tool_effects("payout")][-1:] == [50]
    assert 500 not in [e["amount"] for e in tool_effects("payout")]


async def test_reminder_reassignment_and_expiry_fire_and_an_answer_cancels_them(
    run_local: LocalFactory,
) -> None:
    """wire unanswered is reminded, reassigned to treasury (who may then answer) and
    rejected at its expiry, each in the audit; wire answered at once has none of them."""
    async with run_local([approvals_app.clerk()], models=approvals_app.models(), name=APP) as rt:
        await approvals_app.wired_quick_and_slow(rt)
