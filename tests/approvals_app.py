"""An app whose tools carry approval policies, for the flow, integration, crash and replay
tiers: ``refund`` (2 of the finance group, no self-approval), ``credit`` (one approver,
standing grants), ``wire`` (reminded, reassigned, then expired), ``ship`` (an approval
holds 1.5 s; the first attempt of each call fails and the retry comes 3 s later, finding the
approval stale)
and ``payout`` (a precheck refuses amounts over a limit).

Each tool writes a line per side effect to the file named by ``ADK_TEST_EFFECTS`` (worker
subprocesses share it with the test), or to :data:`EFFECTS` in this process.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

import pytest
from temporalio.common import RetryPolicy

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.approvals import ApprovalPolicy, Grant, GrantTerms, StaleRequestError
from adk_temporal.audit import AuditEntry, audit_entries
from adk_temporal.context import ToolContext
from adk_temporal.flow.messages import (
    AdkStatus,
    InvocationStatus,
    PendingConfirmation,
    PendingRequest,
)
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule
from adk_temporal.tools import tool

APP = "approvals"
AGENT = "clerk"
USER = "u-shop"
EFFECTS_ENV = "ADK_TEST_EFFECTS"

EFFECTS: list[dict[str, Any]] = []
"""The side effects of tools run in this process (without ``ADK_TEST_EFFECTS``)."""

_FAILED_ONCE: set[str] = set()


def _effect(name: str, ctx: ToolContext, **fields: Any) -> None:
    line = {"tool": name, "session": ctx.session_id, "call": ctx.function_call_id, **fields}
    path = os.environ.get(EFFECTS_ENV)
    if path is None:
        EFFECTS.append(line)
        return
    with Path(path).open("a") as log:
        log.write(json.dumps(line) + "\n")


def effects(path: Path | None = None) -> list[dict[str, Any]]:
    """The side effects so far: from ``path`` (a worker subprocess's), else this process's."""
    if path is None:
        return list(EFFECTS)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@tool(approvals=2, approvers=["finance"], requester_may_approve=False)
def refund(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Refund an amount to the customer."""
    _effect("refund", ctx, amount=amount)
    return {"refunded": amount}


@tool(approval=ApprovalPolicy(grantable=True))
def credit(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Credit an amount to the customer's account."""
    _effect("credit", ctx, amount=amount)
    return {"credited": amount}


WIRE_POLICY = ApprovalPolicy(
    approvers=("payments",),
    remind_after=timedelta(seconds=2),
    reassign_after=timedelta(seconds=4),
    reassign_to="treasury",
    expire_after=timedelta(seconds=6),
)
"""``wire``'s policy: reminded at 2 s, reassigned to treasury at 4 s, rejected at 6 s."""


@tool(approval=WIRE_POLICY)
def wire(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Wire an amount to a supplier."""
    _effect("wire", ctx, amount=amount)
    return {"wired": amount}


def _first_attempt_fails(ctx: ToolContext) -> None:
    # Keyed by the call's idempotency key: scripted call ids repeat across sessions.
    if ctx.idempotency_key not in _FAILED_ONCE:
        _FAILED_ONCE.add(ctx.idempotency_key)
        raise ConnectionError("the warehouse did not answer")


@tool(
    max_age=timedelta(seconds=1.5),
    retry_policy=RetryPolicy(initial_interval=timedelta(seconds=3), maximum_attempts=5),
)
def ship(item: str, ctx: ToolContext) -> dict[str, Any]:
    """Ship an item to the customer."""
    _first_attempt_fails(ctx)
    _effect("ship", ctx, item=item)
    return {"shipped": item}


def _within_limit(args: dict[str, Any], ctx: Any) -> str | None:
    amount = args.get("amount", 0)
    return f"{amount} is over the payout limit of 100" if amount > 100 else None


@tool(require_confirmation=True, precheck=_within_limit)
def payout(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Pay out an amount."""
    _effect("payout", ctx, amount=amount)
    return {"paid": amount}


_RULES = [
    ScriptedRule(rf"{name} (?P<value>\w+)", [ScriptedCall(name, {arg: "{value}"})])
    for name, arg in (
        ("refund", "amount"),
        ("credit", "amount"),
        ("wire", "amount"),
        ("ship", "item"),
        ("payout", "amount"),
    )
]


def models() -> ModelRegistry:
    """``scripted:clerk``: one tool call per message (``refund 30``), then a summary."""
    registry = ModelRegistry()
    registry.register("scripted:clerk", lambda name: ScriptedModel(name=name, rules=_RULES))
    return registry


def clerk() -> Agent:
    """The agent with every tool of this module."""
    return Agent(AGENT, "scripted:clerk", tools=[refund, credit, wire, ship, payout])


def app(**settings: Any) -> App:
    """The app (``settings``: more App fields)."""
    return App([clerk()], name=APP, models=models(), **settings)


class _Run(Protocol):
    async def wait_for_status(
        self, *statuses: AdkStatus, timeout: float = 60.0
    ) -> InvocationStatus: ...

    async def pending(self) -> list[PendingRequest]: ...


def tool_effects(name: str) -> list[dict[str, Any]]:
    """This process's side effects of tool ``name``."""
    return [e for e in EFFECTS if e["tool"] == name]


async def start(
    rt: Any, message: str, *, session: str | None = None, by: str = "carol"
) -> tuple[Any, str]:
    """Start ``message`` as ``by`` in ``session`` (a new one when ``None``) of user ``USER``;
    the run's handle and the session id."""
    session = session or f"s-{uuid.uuid4().hex[:8]}"
    run = await rt.adk.start(APP, USER, session, AGENT, message, started_by=by)
    return run, session


async def paused(run: _Run) -> PendingConfirmation:
    """The one confirmation ``run`` waits for, once it waits."""
    await run.wait_for_status("awaiting_confirmation", timeout=60)
    [request] = await run.pending()
    assert isinstance(request, PendingConfirmation)
    return request


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 90.0) -> None:
    """Wait until ``check()`` holds (polled), at most ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


async def audit(rt: Any, session: str) -> list[AuditEntry]:
    """The audit entries of ``USER``'s ``session`` in ``rt``'s session store."""
    stored = await rt.sessions.get(SessionKey(APP, USER, session))
    return audit_entries(stored.events)


async def stale_then_shipped(run: Any) -> PendingConfirmation:
    """``ship lamp`` approved, its retry past max_age: the request re-opens under a new id
    naming the old (nothing shipped), the old id is refused as stale, and approvals of the
    re-opened request (again, while a loaded box starts the call late) ship it. The first
    request."""
    first = await paused(run)
    await run.confirm(first.id, True, answered_by="bob")

    async def reopened() -> bool:
        return any(p.id != first.id for p in await run.pending())

    await until(reopened)
    [second] = await run.pending()
    assert isinstance(second, PendingConfirmation)
    assert second.reopened_from == first.id and "max_age" in second.hint
    assert not shipped(run, first)
    with pytest.raises(StaleRequestError, match=second.id):
        await run.confirm(first.id, True, answered_by="bob")
    while (await run.status()).status == "awaiting_confirmation":
        [again] = await run.pending()
        await run.confirm(again.id, True, answered_by="bob")
        await until(functools.partial(_moved_on, run, again.id))
    return first


def shipped(run: Any, request: PendingConfirmation) -> list[dict[str, Any]]:
    """The ``ship`` effects of ``request``'s call in ``run``'s session (call ids repeat
    across sessions)."""
    session = run.workflow_id.rsplit("/", 1)[-1]
    return [
        e
        for e in tool_effects("ship")
        if (e["session"], e["call"]) == (session, request.function_call_id)
    ]


async def _moved_on(run: Any, request_id: str) -> bool:
    return request_id not in {p.id for p in await run.pending()}


async def granted_twice(rt: Any) -> tuple[str, list[AuditEntry], Grant]:
    """``credit 20`` approved by bob with a grant (2 calls, amount <= 50, 2 h), then credit
    30 and 40 in the session (each must complete unasked) and credit 45 (must pause, then
    cancelled): the session, its audit and the grant as stored."""
    run, session = await start(rt, "credit 20")
    request = await paused(run)
    terms = GrantTerms(max_calls=2, where="amount <= 50", ttl=timedelta(hours=2))
    await run.confirm(request.id, True, answered_by="bob", grant=terms)
    await run.result()
    for amount in (30, 40):
        later, _ = await start(rt, f"credit {amount}", session=session)
        assert (await later.result()).status == "completed"
    third, _ = await start(rt, "credit 45", session=session)
    assert (await paused(third)).tool == "credit"
    await third.cancel()
    [grant] = await rt.sessions.list_grants(APP, USER, session)
    return session, await audit(rt, session), grant


async def wired_quick_and_slow(rt: Any) -> tuple[str, str]:
    """``wire 5`` approved at once by pam (payments), then ``wire 7`` left unanswered until
    its policy rejects it (it must complete): the two sessions, and checks of their audit —
    the quick one a lone approval, the slow one reminded, reassigned to treasury, expired."""
    quick, quick_session = await start(rt, "wire 5")
    request = await paused(quick)
    await quick.confirm(request.id, True, answered_by="pam", groups=["payments"])
    await quick.result()
    slow, session = await start(rt, "wire 7")
    await paused(slow)
    assert (await slow.result()).status == "completed"
    assert [e.decision for e in await audit(rt, quick_session)] == ["approved"]
    entries = await audit(rt, session)
    assert [e.decision for e in entries] == ["reminded", "reassigned", "expired"]
    assert entries[1].assignee == "treasury"
    assert 7 not in [e["amount"] for e in tool_effects("wire")]
    return quick_session, session
