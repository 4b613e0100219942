"""Cumulative token budgets on Temporal (issue 26, item 4): counted across continue-as-new
and invocations in the session store, paused with an input request any answer path can
answer — the client's checked update, the CLI, a raw signal — and refused cleanly."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.devserver import DevServer
from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import PostgresSessionService, SessionService, SqliteSessionService
from adk_temporal.testing.fake_gemini import FakeGeminiServer
from adk_temporal.usage import MAX_TOKENS, SCOPES, TokenBudgets

from ..commands import run_cli
from ..priced import TOKENS_PER_REPLY, priced_agent
from .conftest import WorkerFactory, gemini_models

pytestmark = pytest.mark.integration

APP = "budgeted"
USER = "u-1"


def _key() -> SessionKey:
    return SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")


async def _runs(client: Client, workflow_id: str) -> int:
    return len([w async for w in client.list_workflows(f"WorkflowId = '{workflow_id}'")])


async def test_a_budget_crossed_granted_crossed_again_and_refused_across_continue_as_new(
    run_worker: WorkerFactory, temporal_client: Client, dev_server: DevServer
) -> None:
    """Six tally calls in one turn at 100 tokens a reply, budget 250, handing over every
    few events: three steps run, the fourth asks; granted 150 through the CLI it runs, the
    fifth asks again and is refused. The invocation fails with TokenBudgetRefused after
    several runs; each tool ran once per step that asked for it, four model calls in all."""
    priced = priced_agent(calls=6)
    key = _key()
    async with run_worker(
        [priced.agent], models=priced.models, token_budgets=TokenBudgets(session=250)
    ) as rt:
        handle = await rt.adk.start(*key, "assistant", "count", continue_as_new_after_events=4)
        await handle.wait_for_status("awaiting_input", timeout=60)
        [request] = await handle.pending()
        assert (request.tool, request.args) == (
            "adk_token_budget",
            {"scope": "session", "limit": 250, "used": 300},
        )
        answered = await run_cli(
            dev_server.address,
            "resume",
            handle.workflow_id,
            request.id,
            "--input",
            '{"allow": 150}',
            "--task-queue",
            rt.task_queue,
        )
        assert answered.returncode == 0, answered.stderr
        await handle.wait_for_status("awaiting_input", timeout=60)
        [again] = await handle.pending()
        assert again.id != request.id
        assert again.args == {"scope": "session", "limit": 400, "used": 400}
        await handle.resume(again.id, {"allow": 0})
        result = await handle.result()
        session = await rt.sessions.get(key)
        totals = await rt.sessions.token_totals(key)
    assert result.status == "failed"
    assert result.error is not None and "was not raised" in result.error
    assert priced.model_calls == 4 and priced.tool_runs == ["1", "2", "3", "4"]
    assert await _runs(temporal_client, handle.workflow_id) > 1
    assert session.events[-1].error_code == "TokenBudgetRefused"
    assert (totals.used["session"], totals.granted["session"]) == (400, 150)


async def test_gemini_usage_counts_towards_a_user_budget_across_invocations(
    run_worker: WorkerFactory, gemini: FakeGeminiServer
) -> None:
    """The tokens Gemini reports (usageMetadata, through the real google-genai client) are
    what the ledger counts: a second invocation of the user starts over the budget and
    waits; a raw signal answers it and the model is called once more."""
    gemini.enqueue_text("first", usage=(90, 20))
    gemini.enqueue_text("second", usage=(10, 5))
    agent = Agent("assistant", "gemini-2.5-flash", "Answer.")
    first, second = _key(), _key()
    async with run_worker(
        [agent], models=gemini_models(gemini), token_budgets=TokenBudgets(user=100)
    ) as rt:
        done = await (await rt.adk.start(*first, "assistant", "hi")).result()
        assert done.status == "completed"
        paused = await rt.adk.start(*second, "assistant", "hi again")
        await paused.wait_for_status("awaiting_input", timeout=60)
        [request] = await paused.pending()
        assert request.args == {"scope": "user", "limit": 100, "used": 110}
        await rt.client.get_workflow_handle(paused.workflow_id).signal(
            "adk_resume", {"interrupt_id": request.id, "input": {"allow": 50}}
        )
        result = await paused.result()
        totals = await rt.sessions.token_totals(second)
    assert (result.status, result.final_text) == ("completed", "second")
    assert (totals.used["user"], totals.granted["user"]) == (125, 50)


@pytest.mark.parametrize(
    "allow", [10**30, 2**63, 1e30, 7.5], ids=["10**30", "2**63", "1e30", "7.5"]
)
async def test_a_grant_beyond_the_ledger_is_refused_where_it_enters_and_changes_nothing(
    run_worker: WorkerFactory, allow: int | float
) -> None:
    """A grant over MAX_TOKENS (10**30, 2**63, 1e30) or not an integer is refused by the
    checked answer with a typed error and, sent as a raw signal, recorded as refused: the
    request stays open, the ledger holds no grant, the model is not called; a valid grant
    then completes the run (before the bound, every step failed with OverflowError)."""
    priced = priced_agent()
    key = _key()
    async with run_worker(
        [priced.agent], models=priced.models, token_budgets=TokenBudgets(session=50)
    ) as rt:
        assert (await (await rt.adk.start(*key, "assistant", "hi")).result()).status == "completed"
        paused = await rt.adk.start(*key, "assistant", "again")
        await paused.wait_for_status("awaiting_input", timeout=60)
        [request] = await paused.pending()
        with pytest.raises(InvalidResumeInputError, match="allow"):
            await paused.resume(request.id, {"allow": allow})
        raw = rt.client.get_workflow_handle(paused.workflow_id)
        await raw.signal("adk_resume", {"interrupt_id": request.id, "input": {"allow": allow}})
        async with asyncio.timeout(60):
            while not [s for s in (await paused.status()).ignored_signals if request.id in s]:
                await asyncio.sleep(0.1)
        assert [p.id for p in await paused.pending()] == [request.id]
        assert (await rt.sessions.token_totals(key)).granted == dict.fromkeys(SCOPES, 0)
        assert priced.model_calls == 1
        await paused.resume(request.id, {"allow": MAX_TOKENS})
        result = await paused.result()
        totals = await rt.sessions.token_totals(key)
    assert result.status == "completed"
    assert totals.granted["session"] == MAX_TOKENS and priced.model_calls == 2


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
async def test_twenty_runs_of_one_user_at_once_spend_the_budget_once(
    run_worker: WorkerFactory, request: pytest.FixtureRequest, tmp_path: Path, store: str
) -> None:
    """20 runs of one user start together against TokenBudgets(user=500), 100 tokens a
    step: each step reserves its worst case before its model call, so together they spend
    at most 500 plus one step (here 500: five complete) and the other fifteen pause for a
    grant, as a budget reached does; no reservation is left. Before reservations every run
    read the same total: 2,000 tokens spent, none paused."""
    priced = priced_agent(max_output_tokens=20, latency=0.5)
    sessions: SessionService = (
        SqliteSessionService(tmp_path / "budget.db")
        if store == "sqlite"
        else PostgresSessionService(request.getfixturevalue("postgres_dsn"))
    )
    keys = [_key() for _ in range(20)]
    try:
        async with run_worker(
            [priced.agent],
            models=priced.models,
            token_budgets=TokenBudgets(user=500),
            sessions=sessions,
            max_cached_workflows=100,
        ) as rt:
            handles = await asyncio.gather(*(rt.adk.start(*k, "assistant", "go") for k in keys))
            ended = await asyncio.gather(
                *(h.wait_for_status("completed", "awaiting_input", timeout=120) for h in handles)
            )
            totals = await sessions.token_totals(keys[0])
    finally:
        await sessions.close()
    completed = [s for s in ended if s.status == "completed"]
    assert totals.used["user"] <= 500 + TOKENS_PER_REPLY
    assert totals.used["user"] == TOKENS_PER_REPLY * len(completed) == 100 * priced.model_calls
    assert len(completed) == 5 and len(ended) - len(completed) == 15
    assert totals.reserved == dict.fromkeys(SCOPES, 0)
