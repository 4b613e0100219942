"""Deadlines on requests and cancellation, on the in-process runner (SPEC §3).

The same flow runs on Temporal, where the deadline is a durable timer
(``tests/integration/test_operator_control.py``).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.context import ToolContext
from adk_temporal.errors import UnknownRequestIdError
from adk_temporal.events import Event, ToolConfirmation
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry, ScriptedModel

from .conftest import LocalFactory, LocalRuntime

APP = "deadlines"
USER = "u-1"


def _registry(script: list[Any]) -> ModelRegistry:
    models = ModelRegistry()
    models.register("scripted:dl", lambda n: ScriptedModel(name=n, script=script))
    return models


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


REQUEST = "adk_request_confirmation"


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.function_responses() if r.name == name
    ]


async def approve_later(ctx: ToolContext) -> dict[str, Any]:
    """Do something once approved within a short deadline."""
    decision = ctx.tool_confirmation
    if decision is None:
        ctx.request_confirmation("go ahead?", timeout=timedelta(milliseconds=200))
        return {"status": "waiting for approval"}
    return {"confirmed": decision.confirmed, "expired": decision.expired}


def ask_dates(ctx: ToolContext) -> dict[str, Any]:
    """Ask for dates within a short deadline."""
    answer = ctx.resumed_input()
    if answer is None and not ctx.input_expired():
        ctx.request_input("When?", {"type": "string"}, timeout=0.2)
        return {"status": "waiting for dates"}
    return {"dates": answer.value if answer else None, "expired": ctx.input_expired()}


async def test_an_unanswered_confirmation_expires_as_a_rejection(run_local: LocalFactory) -> None:
    """No answer within the deadline: the tool re-enters rejected, marked expired; the
    reply event says so; a late answer is refused and reported."""
    call = types.FunctionCall(name="approve_later", args={})
    agent = Agent("dl", "scripted:dl", tools=[approve_later])
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        run = await rt.adk.start(APP, USER, session_id, "dl", "go")
        await run.wait_for_status("awaiting_confirmation")
        [request] = await run.pending()
        assert request.expires_at is not None
        result = await run.result()
        with pytest.raises(UnknownRequestIdError, match="expired at"):
            await run.confirm(request.id, True)
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert _responses(events, "approve_later")[-1] == {"confirmed": False, "expired": True}
    [request_call] = [c for e in events for c in e.function_calls() if c.name == REQUEST]
    reply = _responses(events, REQUEST)[0]
    assert reply.pop("waitedSeconds") >= 0.2  # it expired: its deadline had passed
    assert reply == {
        "confirmed": False,
        "expired": True,
        "callDigest": (request_call.args or {})["callDigest"],
    }


async def test_an_unanswered_input_expires_as_missing(run_local: LocalFactory) -> None:
    """The tool re-enters without the input and input_expired() says why."""
    call = types.FunctionCall(name="ask_dates", args={})
    agent = Agent("dl", "scripted:dl", tools=[ask_dates])
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "dl", "go")).result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert _responses(events, "ask_dates")[-1] == {"dates": None, "expired": True}
    [reply] = _responses(events, "adk_request_input")
    assert reply.pop("waitedSeconds") >= 0.2
    assert reply == {"expired": True}


async def test_an_answer_before_the_deadline_wins(run_local: LocalFactory) -> None:
    """Answered in time: the deadline changes nothing."""
    call = types.FunctionCall(name="approve_later", args={})
    agent = Agent("dl", "scripted:dl", tools=[approve_later])
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        run = await rt.adk.start(APP, USER, "s-in-time", "dl", "go")
        await run.wait_for_status("awaiting_confirmation")
        [request] = await run.pending()
        await run.confirm(request.id, True)
        await run.result()
        events = await _events(rt, "s-in-time")
    assert _responses(events, "approve_later")[-1] == {"confirmed": True, "expired": False}


async def test_cancelling_a_waiting_run_closes_it_and_frees_the_session(
    run_local: LocalFactory,
) -> None:
    """Cancelled while waiting: one cancellation event, no open request, next message runs."""

    async def buy(ctx: ToolContext) -> dict[str, str]:
        """Buy, once approved."""
        if ctx.tool_confirmation is None:
            ctx.request_confirmation("buy?")
            return {"status": "waiting for approval"}
        return {"status": "bought"}

    call = types.FunctionCall(name="buy", args={})
    agent = Agent("dl", "scripted:dl", tools=[buy])
    async with run_local([agent], models=_registry([call, "done", "again"])) as rt:
        run = await rt.adk.start(APP, USER, "s-cancel", "dl", "go")
        await run.wait_for_status("awaiting_confirmation")
        await run.cancel()
        result = await run.result()
        assert await run.pending() == []
        events = await _events(rt, "s-cancel")
        assert [e.error_code for e in events if e.error_code] == ["Cancelled"]
        nxt = await (await rt.adk.start(APP, USER, "s-cancel", "dl", "hello")).result()
    assert result.status == "cancelled"
    assert nxt.status == "completed"


async def test_a_cancelled_tool_sees_cancelled_error(run_local: LocalFactory) -> None:
    """A long tool is interrupted with asyncio.CancelledError and the run ends cancelled."""
    seen: list[str] = []
    started = asyncio.Event()

    async def slow() -> dict[str, str]:
        """Take a long time."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return {"status": "done"}

    call = types.FunctionCall(name="slow", args={})
    agent = Agent("dl", "scripted:dl", tools=[slow])
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        run = await rt.adk.start(APP, USER, "s-slow", "dl", "go")
        await started.wait()
        await run.cancel()
        result = await run.result()
        events = await _events(rt, "s-slow")
    assert seen == ["cancelled"]
    assert result.status == "cancelled"
    assert events[-1].error_code == "Cancelled"


def _effects_then_cancellation(events: list[Event], tool: str) -> list[str]:
    """The session's story: each call, each response and the cancellation, in order."""
    story: list[str] = []
    for event in events:
        story += [f"call {c.name}" for c in event.function_calls() if c.name == tool]
        story += [f"response {r.response}" for r in event.function_responses() if r.name == tool]
        if event.error_code:
            story.append(event.error_code)
    return story


async def test_a_sync_tool_that_finishes_after_the_cancel_is_waited_for_and_stored(
    run_local: LocalFactory,
) -> None:
    """A thread cannot be interrupted: the cancelled run waits for the tool's thread and
    stores its response (the charge it made) before the cancellation event."""
    import threading

    charged: list[int] = []
    running = threading.Event()
    release = threading.Event()

    def charge(amount: int) -> dict[str, Any]:
        """Charge the card.

        Args:
            amount: How much.
        """
        charged.append(amount)
        running.set()
        release.wait(30)
        return {"charged": amount}

    call = types.FunctionCall(name="charge", args={"amount": 7})
    agent = Agent("dl", "scripted:dl", tools=[charge])
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        run = await rt.adk.start(APP, USER, "s-thread", "dl", "go")
        await asyncio.to_thread(running.wait, 30)
        cancelling = asyncio.ensure_future(run.cancel())
        await asyncio.sleep(0)
        release.set()
        await cancelling
        result = await run.result()
        events = await _events(rt, "s-thread")
    assert charged == [7]
    assert result.status == "cancelled"
    assert _effects_then_cancellation(events, "charge") == [
        "call charge",
        "response {'charged': 7}",
        "Cancelled",
    ]


async def test_a_cancel_during_the_next_model_step_keeps_the_tool_responses(
    run_local: LocalFactory,
) -> None:
    """Cancelled while the model answers the tool's response: the response (with its state
    delta) is stored before the cancellation event, not lost with the model step."""
    thinking = asyncio.Event()

    class Slow(ScriptedModel):
        async def generate(self, request: LlmRequest) -> LlmResponse:
            if request.contents[-1].parts and request.contents[-1].parts[0].function_response:
                thinking.set()
                await asyncio.sleep(60)
            return await super().generate(request)

    async def pay(ctx: ToolContext) -> dict[str, Any]:
        """Pay."""
        ctx.state["paid"] = True
        return {"paid": True}

    models = ModelRegistry()
    call = types.FunctionCall(name="pay", args={})
    models.register("scripted:dl", lambda n: Slow(name=n, script=[call, "done"]))
    async with run_local([Agent("dl", "scripted:dl", tools=[pay])], models=models) as rt:
        run = await rt.adk.start(APP, USER, "s-next", "dl", "go")
        await thinking.wait()
        await run.cancel()
        result = await run.result()
        events = await _events(rt, "s-next")
        state = await rt.sessions.get_state(SessionKey(APP, USER, "s-next"))
    assert result.status == "cancelled"
    assert _effects_then_cancellation(events, "pay") == [
        "call pay",
        "response {'paid': True}",
        "Cancelled",
    ]
    assert state["paid"] is True


async def approve_someone_else(ctx: ToolContext) -> dict[str, Any]:
    """Record a confirmation for a call this step did not make."""
    ctx.actions.requested_tool_confirmations["call-elsewhere"] = ToolConfirmation(hint="?")
    return {"status": "done"}


async def test_ctx_f6_confirmation_for_a_call_the_step_did_not_make_does_not_pause(
    run_local: LocalFactory,
) -> None:
    """No request event is built for a foreign call id: the step goes on to the model."""
    call = types.FunctionCall(name="approve_someone_else", args={})
    agent = Agent("dl", "scripted:dl", tools=[approve_someone_else])
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry([call, "finished"])) as rt:
        run = await rt.adk.start(APP, USER, session_id, "dl", "go")
        result = await run.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert not [c for e in events for c in e.function_calls() if c.name == REQUEST]
    assert _responses(events, "approve_someone_else") == [{"status": "done"}]
    assert events[-1].text() == "finished"
