"""Cumulative token budgets that ask, on the in-process runner (issue 26, item 4).

A budget per session, user or app is counted across invocations in the session store's
ledger. A model step that would start over one calls no model: the invocation pauses with
an input request (``{"allow": N}``) that grants N more tokens or, with 0, ends it cleanly —
with everything it was to store stored.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.flow.budget_requests import BUDGET_TOOL
from adk_temporal.ids import SessionKey
from adk_temporal.runner import LocalInvocation
from adk_temporal.usage import TokenBudgets

from ..priced import priced_agent
from .conftest import LocalFactory, LocalRuntime

APP = "budgeted"
USER = "u-1"


def _key(user: str = USER) -> SessionKey:
    return SessionKey(APP, user, f"s-{uuid.uuid4().hex[:8]}")


async def _turn(rt: LocalRuntime, key: SessionKey, text: str) -> LocalInvocation:
    return await rt.adk.start(*key, "assistant", text)


async def _budget_request(handle: LocalInvocation) -> Any:
    await handle.wait_for_status("awaiting_input", timeout=30)
    [request] = await handle.pending()
    return request


async def test_a_budget_crossed_pauses_a_grant_resumes_and_a_refusal_ends_cleanly(
    run_local: LocalFactory,
) -> None:
    """Budget 250 at 100 tokens a reply: three turns run; the fourth asks and, granted
    100, runs; the fifth asks again and, refused, fails with TokenBudgetRefused — its user
    message, the request and the refusal stored, the model never called for it."""
    priced = priced_agent()
    key = _key()
    budgets = TokenBudgets(session=250)
    async with run_local([priced.agent], models=priced.models, token_budgets=budgets) as rt:
        for text in ("one", "two", "three"):
            assert (await (await _turn(rt, key, text)).result()).status == "completed"
        fourth = await _turn(rt, key, "four")
        request = await _budget_request(fourth)
        assert (request.tool, request.args) == (
            BUDGET_TOOL,
            {"scope": "session", "limit": 250, "used": 300},
        )
        assert "token budget of the session (250 tokens) is reached: 300 used" in request.message
        assert priced.model_calls == 3
        await fourth.resume(request.id, {"allow": 100})
        granted = await fourth.result()
        assert (granted.status, granted.final_text, priced.model_calls) == (
            "completed",
            "answer 4",
            4,
        )

        fifth = await _turn(rt, key, "five")
        again = await _budget_request(fifth)
        assert again.args == {"scope": "session", "limit": 350, "used": 400}
        await fifth.resume(again.id, {"allow": 0})
        refused = await fifth.result()
        session = await rt.sessions.get(key)
    assert refused.status == "failed"
    assert refused.error is not None and "was not raised" in refused.error
    assert priced.model_calls == 4
    mine = [e for e in session.events if e.invocation_id == refused.invocation_id]
    assert mine[0].author == "user" and mine[0].text() == "five"
    assert mine[-1].error_code == "TokenBudgetRefused"
    totals = await rt.sessions.token_totals(key)
    assert (totals.used["session"], totals.granted["session"]) == (400, 100)


async def test_a_user_budget_counts_every_session_and_its_grant_serves_them_all(
    run_local: LocalFactory,
) -> None:
    """A user's budget sums their sessions; a grant to the user's scope lets another
    session of theirs go on, while another user is not bounded by it."""
    priced = priced_agent()
    first, second, other = _key(), _key(), _key("u-2")
    async with run_local(
        [priced.agent], models=priced.models, token_budgets=TokenBudgets(user=150)
    ) as rt:
        for key in (first, second):
            assert (await (await _turn(rt, key, "hi")).result()).status == "completed"
        assert (await (await _turn(rt, other, "hi")).result()).status == "completed"
        paused = await _turn(rt, first, "more")
        request = await _budget_request(paused)
        assert request.args == {"scope": "user", "limit": 150, "used": 200}
        await paused.resume(request.id, {"allow": 500})
        assert (await paused.result()).status == "completed"
        assert (await (await _turn(rt, second, "more")).result()).status == "completed"


@pytest.mark.parametrize(
    "answer",
    [{"allow": -1}, {"allow": "lots"}, {"allow": 1.5}, {"more": 5}, {"allow": 5, "x": 1}, 7],
)
async def test_a_malformed_grant_is_refused_and_the_request_stays_open(
    run_local: LocalFactory, answer: Any
) -> None:
    """Only ``{"allow": N}`` with N ≥ 0 answers: anything else is refused with a typed
    error and the invocation still waits for a valid answer."""
    priced = priced_agent()
    key = _key()
    async with run_local(
        [priced.agent], models=priced.models, token_budgets=TokenBudgets(app=1)
    ) as rt:
        assert (await (await _turn(rt, key, "hi")).result()).status == "completed"
        paused = await _turn(rt, key, "again")
        request = await _budget_request(paused)
        with pytest.raises(InvalidResumeInputError):
            await paused.resume(request.id, answer)
        assert [p.id for p in await paused.pending()] == [request.id]
        await paused.resume(request.id, {"allow": 1000})
        assert (await paused.result()).status == "completed"
    assert priced.model_calls == 2


async def test_no_budget_counts_nothing(run_local: LocalFactory) -> None:
    """Without budgets the ledger is never written (no cost per step)."""
    priced = priced_agent()
    key = _key()
    async with run_local([priced.agent], models=priced.models) as rt:
        assert (await (await _turn(rt, key, "hi")).result()).status == "completed"
        assert (await rt.sessions.token_totals(key)).used == {"session": 0, "user": 0, "app": 0}
