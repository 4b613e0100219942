"""Approval policies on the real dev server: votes, separation of duties, standing grants,
stale approvals and reminders, judged where the workflow takes an answer (checked updates
and raw signals alike)."""

from __future__ import annotations

import pytest

from adk_temporal.approvals import (
    DuplicateVoteError,
    SelfApprovalError,
)
from adk_temporal.flow.messages import PendingConfirmation

from .. import approvals_app
from ..approvals_app import audit, paused, start, tool_effects, until
from .conftest import WorkerFactory
from .test_notifications import Hook, _notifications

pytestmark = pytest.mark.integration


async def test_two_of_n_waits_for_bob_refuses_alice_twice_and_runs_once(
    run_worker: WorkerFactory,
) -> None:
    """alice's approval leaves the refund paused with her vote listed (query and memo), a
    second vote of hers is refused by the worker, a raw signal of hers changes nothing;
    bob's approval runs the refund exactly once and the audit lists both votes."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        handle, session = await start(rt, "refund 30")
        request = await paused(handle)
        before = len(tool_effects("refund"))
        await handle.confirm(request.id, True, answered_by="alice", groups=["finance"])
        [still] = await handle.pending()
        assert isinstance(still, PendingConfirmation)
        assert [(v.by, v.approve) for v in still.votes] == [("alice", True)]
        [published] = (await handle.published()).requests
        assert [(v.by, v.decision) for v in published.votes] == [("alice", "approved")]
        assert published.approvals == 2 and published.approvers == ["finance"]
        with pytest.raises(DuplicateVoteError, match="alice voted"):
            await handle.confirm(request.id, True, answered_by="alice", groups=["finance"])
        raw = {"confirmation_id": request.id, "confirmed": True, "answered_by": "alice"}
        await rt.client.get_workflow_handle(handle.workflow_id).signal("adk_confirm", raw)
        await handle.confirm(request.id, True, answered_by="bob", groups=["finance"])
        assert (await handle.result()).status == "completed"
        entries = await audit(rt, session)
    assert len(tool_effects("refund")) == before + 1
    assert [(e.answered_by, e.decision) for e in entries if e.vote] == [
        ("alice", "approved"),
        ("bob", "approved"),
    ]


async def test_the_requesters_approval_is_refused_even_as_a_raw_signal(
    run_worker: WorkerFactory,
) -> None:
    """alice started the run: her approval is refused (self_approval) as a checked update,
    and as a raw signal it is listed among the refused answers and counts for nothing."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        handle, _ = await start(rt, "refund 12", by="alice")
        request = await paused(handle)
        with pytest.raises(SelfApprovalError, match="alice started the invocation"):
            await handle.confirm(request.id, True, answered_by="alice", groups=["finance"])
        raw = {
            "confirmation_id": request.id,
            "confirmed": True,
            "answered_by": "alice",
            "groups": ["finance"],
        }
        await rt.client.get_workflow_handle(handle.workflow_id).signal("adk_confirm", raw)

        async def listed() -> bool:
            return any(
                "started the invocation" in r for r in (await handle.status()).ignored_signals
            )

        await until(listed)
        [still] = await handle.pending()
        assert isinstance(still, PendingConfirmation) and still.votes == []
        await handle.cancel()


async def test_a_standing_grant_lets_two_matching_calls_run_and_pauses_the_third(
    run_worker: WorkerFactory,
) -> None:
    """credit 20 approved with a grant (2 calls, amount <= 50, 2 h): the next two credits of
    the session run without pausing, citing the grant; the third pauses as usual."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        _, entries, grant = await approvals_app.granted_twice(rt)
    assert [e["amount"] for e in tool_effects("credit")][-3:] == [20, 30, 40]
    assert [e.grant_id for e in entries if e.decision == "granted"] == [grant.id, grant.id]
    assert (grant.uses, grant.granted_by) == (2, "bob")


async def test_max_age_reopens_an_approval_that_waited_too_long(
    run_worker: WorkerFactory,
) -> None:
    """ship's approved call is held back by a retry past its 1.5 s max_age: the request
    re-opens under a new id instead of shipping, the old id is refused as stale, and a new
    approval ships once."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        handle, _ = await start(rt, "ship lamp")
        first = await approvals_app.stale_then_shipped(handle)
        assert (await handle.result()).status == "completed"
    assert len(approvals_app.shipped(handle, first)) == 1


async def test_reminder_reassignment_and_default_action_fire_on_durable_timers(
    run_worker: WorkerFactory,
) -> None:
    """wire left unanswered is notified again at its reminder and its reassignment to
    treasury, then rejected at its expiry, each in the audit; wire approved at once is
    notified once and none of the three happen."""
    hook = Hook()
    hook.up()
    try:
        async with run_worker(
            [approvals_app.clerk()],
            models=approvals_app.models(),
            notifications=_notifications(hook),
        ) as rt:
            _, session = await approvals_app.wired_quick_and_slow(rt)
            notices = await hook.wait_accepted(4)
    finally:
        hook.background.stop()
    # Each notice is its own delivery: ordered by when the run decided it, not by arrival.
    slow_notices = sorted(
        (n for n in notices if n["session_id"] == session), key=lambda n: n["created_at"]
    )
    assert [n.get("reason") for n in slow_notices] == [None, "reminded", "reassigned"]
    assert slow_notices[-1]["requests"][0]["assignee"] == "treasury"
