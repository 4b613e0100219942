"""Calls of tools with external effects that may or may not have taken effect, on the
in-process runner (issue 41, "In-doubt tool calls").

A tool declared ``effects="external"`` gets a receipt before its code runs; a call whose
code raised (here; on Temporal also one whose worker was lost, see
``tests/integration/test_in_doubt.py``) is never run again by itself: it is listed in doubt
and waits for an operator's ``done``, ``retry``, ``fail`` or ``compensate``, each recorded in
the audit with who gave it and each producing at most one effect.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.audit import audit_entries
from adk_temporal.context import ToolContext
from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.events import Event
from adk_temporal.flow.doubt_requests import DOUBT_REQUEST_PREFIX
from adk_temporal.flow.messages import PendingInput
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedModel
from adk_temporal.tools import tool

from .conftest import LocalFactory, LocalRuntime

APP = "payments"
USER = "u-1"


@dataclass
class Ledger:
    """What the provider saw: each charge and refund, and how often the charge may fail."""

    charges: list[int] = field(default_factory=list)
    refunds: list[str] = field(default_factory=list)
    failures: int = 1


def _agent(ledger: Ledger) -> tuple[Agent, ModelRegistry]:
    async def refund(amount: int, ctx: ToolContext) -> dict[str, Any]:
        """Refund a charge."""
        receipt = ctx.effect_receipt
        assert receipt is not None
        ledger.refunds.append(str(receipt.details.get("provider_id")))
        return {"refunded": amount}

    @tool(effects="external", compensate=refund)
    async def charge(amount: int, ctx: ToolContext) -> dict[str, Any]:
        """Charge the customer."""
        await ctx.note_effect(provider_id=f"p-{len(ledger.charges) + 1}")
        ledger.charges.append(amount)
        if ledger.failures:
            ledger.failures -= 1
            raise ConnectionError("the provider hung up after charging")
        return {"charged": amount}

    call = types.FunctionCall(name="charge", args={"amount": 5})
    models = ModelRegistry()
    models.register("scripted:pay", lambda n: ScriptedModel(name=n, script=[call, "done"]))
    return Agent("payer", "scripted:pay", tools=[charge]), models


async def _in_doubt(rt: LocalRuntime, session_id: str) -> tuple[Any, PendingInput]:
    run = await rt.adk.start(APP, USER, session_id, "payer", "pay 5")
    await run.wait_for_status("awaiting_input", timeout=30)
    [request] = await run.pending()
    assert isinstance(request, PendingInput)
    return run, request


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


def _charge_response(events: list[Event]) -> dict[str, Any]:
    [reply] = [r for e in events for r in e.function_responses() if r.name == "charge"]
    return dict(reply.response or {})


async def test_a_call_that_raised_is_in_doubt_and_listed_with_what_is_known(
    run_local: LocalFactory,
) -> None:
    """The charge raised after charging: it is not run again; the request names the call,
    the error, the provider id it noted, and offers compensate (it has a compensator)."""
    ledger = Ledger()
    agent, models = _agent(ledger)
    async with run_local([agent], models=models) as rt:
        run, request = await _in_doubt(rt, "s-listed")
        await run.cancel()
    assert request.id.startswith(DOUBT_REQUEST_PREFIX)
    assert (request.tool, request.args) == ("charge", {"amount": 5})
    assert "ConnectionError: the provider hung up after charging" in request.message
    assert "'provider_id': 'p-1'" in request.message
    assert request.input_schema is not None
    assert request.input_schema["properties"]["resolution"]["enum"] == [
        "done",
        "retry",
        "fail",
        "compensate",
    ]
    assert ledger.charges == [5]


@pytest.mark.parametrize(
    ("answer", "charges", "refunds", "seen"),
    [
        ({"resolution": "done", "result": {"charged": 5}}, [5], [], {"charged": 5}),
        ({"resolution": "retry"}, [5, 5], [], {"charged": 5}),
        (
            {"resolution": "fail", "reason": "the provider shows no charge"},
            [5],
            [],
            {
                "error": "tool charge call may not have taken effect and was resolved as "
                "failed: the provider shows no charge"
            },
        ),
        ({"resolution": "compensate"}, [5], ["p-1"], {"compensated": {"refunded": 5}}),
    ],
    ids=["done", "retry", "fail", "compensate"],
)
async def test_each_resolution_has_one_effect_and_one_audit_entry(
    run_local: LocalFactory,
    answer: dict[str, Any],
    charges: list[int],
    refunds: list[str],
    seen: dict[str, Any],
) -> None:
    """Resolved by alice: done gives the model her result, retry charges once more, fail
    gives an error with her reason, compensate refunds the noted charge once; each is one
    audit entry, resolved, with her name."""
    ledger = Ledger()
    agent, models = _agent(ledger)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=models) as rt:
        run, request = await _in_doubt(rt, session_id)
        await run.resume(request.id, answer, answered_by="alice")
        result = await run.result()
        events = await _events(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "done")
    assert (ledger.charges, ledger.refunds) == (charges, refunds)
    assert _charge_response(events) == seen
    [entry] = [e for e in audit_entries(events) if e.request_id == request.id]
    assert (entry.decision, entry.resolution, entry.answered_by, entry.tool) == (
        "resolved",
        answer["resolution"],
        "alice",
        "charge",
    )


async def test_a_malformed_resolution_is_refused_and_the_call_stays_in_doubt(
    run_local: LocalFactory,
) -> None:
    """An unknown resolution is refused with the schema's reason; nothing runs; a valid one
    then resolves the call."""
    ledger = Ledger()
    agent, models = _agent(ledger)
    async with run_local([agent], models=models) as rt:
        run, request = await _in_doubt(rt, "s-refused")
        with pytest.raises(InvalidResumeInputError, match="resolution"):
            await run.resume(request.id, {"resolution": "ignore"})
        assert [r.id for r in await run.pending()] == [request.id]
        await run.resume(request.id, {"resolution": "fail"})
        assert (await run.result()).status == "completed"
    assert ledger.charges == [5]


async def test_a_tool_without_external_effects_cannot_note_one() -> None:
    """``note_effect`` belongs to tools declared external: others get a clear error."""

    async def plain(ctx: ToolContext) -> dict[str, Any]:
        """Nothing external."""
        await ctx.note_effect(provider_id="x")
        return {}

    with pytest.raises(ValueError, match="compensate= needs effects='external'"):
        tool(effects="idempotent", compensate=plain)(plain)
