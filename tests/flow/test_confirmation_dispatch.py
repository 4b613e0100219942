"""SPEC §1.6: which calls a confirmation pause re-dispatches, and how (CTX-F).

The re-dispatch rule lives in the flow (``InvocationFlow`` with its ``RequestBook``); these
tests drive that real rule in-process through ``Runner``, the same flow Temporal runs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent, ParallelAgent
from adk_temporal.confirmation import call_digest, check_reply_digest
from adk_temporal.context import ToolContext
from adk_temporal.errors import ConfirmationMismatchError, UnknownRequestIdError
from adk_temporal.events import Event, ToolConfirmation
from adk_temporal.flow.messages import PendingConfirmation, PendingRequest
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedModel
from adk_temporal.runner import LocalInvocation
from adk_temporal.tools import FunctionTool

from .conftest import LocalFactory, LocalRuntime

APP = "dispatch"
USER = "u-1"
REQUEST = "adk_request_confirmation"
WAITING = {"status": "waiting for approval"}


@dataclass(frozen=True)
class Entry:
    """One run of a tool handler: the call id, the arguments and the decision it saw."""

    call_id: str
    args: dict[str, Any]
    confirmation: ToolConfirmation | None


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def _registry(scripts: dict[str, list[Any]]) -> ModelRegistry:
    models = ModelRegistry()
    for name, script in scripts.items():
        models.register(f"scripted:{name}", partial(_scripted, script=script))
    return models


def _scripted(name: str, *, script: list[Any]) -> ScriptedModel:
    return ScriptedModel(name=name, script=script)


def _asking(
    name: str,
    seen: list[Entry],
    *,
    hint: str = "ok?",
    asks: Callable[[ToolConfirmation], tuple[str, Any] | None] = lambda _: None,
    reentered: asyncio.Event | None = None,
) -> FunctionTool:
    """A hand-written tool named ``name`` that asks for approval on its first run.

    Each run is recorded in ``seen``. A re-entered run asks again with the ``(hint,
    payload)`` that ``asks`` returns for the decision it got, if any, and sets
    ``reentered``.
    """

    async def handler(target: str, ctx: ToolContext) -> dict[str, Any]:
        """Act on the target once approved.

        Args:
            target: What to act on.
        """
        decision = ctx.tool_confirmation
        seen.append(Entry(ctx.function_call_id, {"target": target}, decision))
        if decision is None:
            ctx.request_confirmation(hint, {"target": target})
            return WAITING
        if reentered is not None:
            reentered.set()
        again = asks(decision)
        if again is not None:
            ctx.request_confirmation(*again)
            return WAITING
        return {"done": target} if decision.confirmed else {"status": "rejected"}

    return FunctionTool(handler, name=name)


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


def _responses(events: list[Event], name: str) -> list[types.FunctionResponse]:
    return [r for e in events for r in e.function_responses() if r.name == name]


def _request_calls(events: list[Event]) -> list[types.FunctionCall]:
    return [c for e in events for c in e.function_calls() if c.name == REQUEST]


def _model_calls(events: list[Event], name: str) -> list[types.FunctionCall]:
    return [c for e in events for c in e.function_calls() if c.name == name]


def _ids(events: list[Event], author: str) -> set[str]:
    """The ids of the function calls ``author``'s events make."""
    return {c.id or "" for e in events if e.author == author for c in e.function_calls()}


async def _paused(
    rt: LocalRuntime, session_id: str, agent: str, *, requests: int = 1
) -> tuple[LocalInvocation, list[PendingRequest]]:
    """Start ``agent`` and wait until it has ``requests`` open requests (of either kind)."""
    handle = await rt.adk.start(APP, USER, session_id, agent, "go")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    async with asyncio.timeout(30):
        # Parallel branches open their requests one by one; the runner has no awaitable
        # for "n requests open", so poll its public pending().
        while len(pending := await handle.pending()) < requests:
            await asyncio.sleep(0.01)
    return handle, pending


async def test_ctx_f15_approved_call_reenters_with_same_id_and_decision(
    run_local: LocalFactory,
) -> None:
    """An approval re-runs the original call (same id, name, args) with the answer as sent
    as ctx.tool_confirmation: its confirmed and payload, no hint, as ADK-Python hands it over
    (tests/unittests/flows/llm_flows/test_request_confirmation.py)."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen, hint="Buy?")]
    models = _registry({"buyer": [_call("buy_report", target="Hangzhou"), "done"]})
    session_id = _session()
    async with run_local([Agent("buyer", "scripted:buyer", tools=tools)], models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "buyer")
        await handle.confirm(request.id, True, payload={"price": 2})
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    [call] = _model_calls(events, "buy_report")
    assert request.function_call_id == call.id
    assert seen == [
        Entry(call.id or "", {"target": "Hangzhou"}, None),
        Entry(
            call.id or "",
            {"target": "Hangzhou"},
            ToolConfirmation(confirmed=True, payload={"price": 2}),
        ),
    ]
    assert [r.id for r in _responses(events, "buy_report")] == [call.id, call.id]
    assert _responses(events, "buy_report")[-1].response == {"done": "Hangzhou"}


async def test_ctx_f15_rejected_call_is_dispatched_with_confirmed_false(
    run_local: LocalFactory,
) -> None:
    """A rejection is dispatched too: the hand-written tool re-enters with confirmed=False."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen)]
    models = _registry({"buyer": [_call("buy_report", target="Paris"), "done"]})
    session_id = _session()
    async with run_local([Agent("buyer", "scripted:buyer", tools=tools)], models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "buyer")
        await handle.confirm(request.id, False)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    [first, again] = seen
    assert again.call_id == first.call_id == request.function_call_id
    assert again.confirmation == ToolConfirmation(confirmed=False)
    assert _responses(events, "buy_report")[-1].response == {"status": "rejected"}


async def test_ctx_f15_rejected_gated_call_answers_with_the_rejection_error(
    run_local: LocalFactory,
) -> None:
    """The static gate answers a rejected call with ``tool X call is rejected``, unrun."""
    ran: list[str] = []

    def send_email(to: str) -> dict[str, str]:
        """Send an email.

        Args:
            to: The recipient.
        """
        ran.append(to)
        return {"sent": to}

    tools = [FunctionTool(send_email, require_confirmation=True)]
    models = _registry({"mailer": [_call("send_email", to="li@example.com"), "done"]})
    session_id = _session()
    async with run_local([Agent("mailer", "scripted:mailer", tools=tools)], models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "mailer")
        await handle.confirm(request.id, False)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert ran == []
    [call] = _model_calls(events, "send_email")
    responses = _responses(events, "send_email")
    assert [r.id for r in responses] == [call.id, call.id]
    assert [r.response for r in responses] == [
        {"error": "tool send_email requires confirmation, please approve or reject"},
        {"error": "tool send_email call is rejected"},
    ]


async def test_ctx_f9_call_that_already_has_a_response_is_not_rerun(
    run_local: LocalFactory,
) -> None:
    """Only the calls that asked are re-dispatched; a call of the step that already has its
    response is not run again."""
    seen: list[Entry] = []
    looked_up: list[str] = []

    def lookup(city: str) -> dict[str, str]:
        """Look a city up.

        Args:
            city: The city.
        """
        looked_up.append(city)
        return {"city": city}

    tools = [FunctionTool(lookup), _asking("send_email", seen)]
    script = [[_call("lookup", city="Oslo"), _call("send_email", target="li")], "done"]
    models = _registry({"clerk": script})
    session_id = _session()
    async with run_local([Agent("clerk", "scripted:clerk", tools=tools)], models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "clerk")
        await handle.confirm(request.id, True)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert looked_up == ["Oslo"]
    assert [e.call_id for e in seen] == [request.function_call_id] * 2
    [reply_index] = [i for i, e in enumerate(events) if _responses([e], REQUEST)]
    redispatched = events[reply_index + 1]
    assert [r.id for r in redispatched.function_responses()] == [request.function_call_id]


async def test_ctx_f11_paused_calls_redispatch_in_request_order(run_local: LocalFactory) -> None:
    """Several paused calls are re-dispatched in the order their requests were made,
    whatever order the answers come in; the reply event keeps that order too."""
    seen: list[Entry] = []
    names = ["buy_report", "get_weather", "send_email"]
    tools = [_asking(name, seen) for name in names]
    script = [[_call(name, target=name) for name in names], "done"]
    models = _registry({"clerk": script})
    session_id = _session()
    async with run_local([Agent("clerk", "scripted:clerk", tools=tools)], models=models) as rt:
        handle, requests = await _paused(rt, session_id, "clerk")
        for request in (requests[1], requests[2], requests[0]):
            await handle.confirm(request.id, True, payload=request.tool)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    calls = [c for e in events for c in e.function_calls() if c.name in names]
    assert [p.tool for p in requests] == names
    assert [p.function_call_id for p in requests] == [c.id for c in calls]
    assert [c.id for c in _request_calls(events)] == [p.id for p in requests]
    assert [r.id for r in _responses(events, REQUEST)] == [p.id for p in requests]
    [reply_index] = [i for i, e in enumerate(events) if _responses([e], REQUEST)]
    redispatched = events[reply_index + 1]
    assert [r.id for r in redispatched.function_responses()] == [c.id for c in calls]
    assert [r.name for r in redispatched.function_responses()] == names
    decisions = {e.call_id: e.confirmation for e in seen if e.confirmation is not None}
    assert decisions == {c.id: ToolConfirmation(confirmed=True, payload=c.name) for c in calls}


async def test_ctx_f16_reentered_tool_asks_again_and_the_new_answer_resumes_it(
    run_local: LocalFactory,
) -> None:
    """A re-entered tool may ask again: a new request opens for the same call, the old one
    cannot be answered again, and the new answer is the decision the call resumes with."""
    seen: list[Entry] = []

    def again(decision: ToolConfirmation) -> tuple[str, Any] | None:
        return ("second approval", "again") if decision.payload == "first" else None

    tools = [_asking("buy_report", seen, hint="first approval", asks=again)]
    models = _registry({"buyer": [_call("buy_report", target="Oslo"), "done"]})
    session_id = _session()
    async with run_local([Agent("buyer", "scripted:buyer", tools=tools)], models=models) as rt:
        handle, [first] = await _paused(rt, session_id, "buyer")
        await handle.confirm(first.id, True, payload="first")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [second] = await handle.pending()
        with pytest.raises(UnknownRequestIdError, match="was already answered"):
            await handle.confirm(first.id, True, payload="first")
        await handle.confirm(second.id, True, payload="second")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert second.id != first.id
    assert second.function_call_id == first.function_call_id
    assert isinstance(second, PendingConfirmation)
    assert (second.hint, second.payload) == ("second approval", "again")
    assert [e.call_id for e in seen] == [first.function_call_id] * 3
    assert [e.confirmation for e in seen] == [
        None,
        ToolConfirmation(confirmed=True, payload="first"),
        ToolConfirmation(confirmed=True, payload="second"),
    ]
    assert [c.id for c in _request_calls(events)] == [first.id, second.id]
    assert _responses(events, "buy_report")[-1].response == {"done": "Oslo"}


async def test_ctx_f7_requests_get_distinct_ids(run_local: LocalFactory) -> None:
    """A confirmation id can never point at two calls: the runtime draws a fresh ``adk-`` id
    per request, each bound to its own call in the book and in the request event."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen), _asking("send_email", seen)]
    script = [[_call("buy_report", target="a"), _call("send_email", target="b")], "done"]
    models = _registry({"clerk": script})
    session_id = _session()
    async with run_local([Agent("clerk", "scripted:clerk", tools=tools)], models=models) as rt:
        handle, requests = await _paused(rt, session_id, "clerk", requests=2)
        for request in requests:
            await handle.confirm(request.id, True)
        await handle.result()
        events = await _events(rt, session_id)
    ids = [p.id for p in requests]
    assert len(set(ids)) == 2
    assert all(i.startswith("adk-") for i in ids)
    calls = [*_model_calls(events, "buy_report"), *_model_calls(events, "send_email")]
    assert [p.function_call_id for p in requests] == [c.id for c in calls]
    recorded = _request_calls(events)
    assert [c.id for c in recorded] == ids
    originals = [(c.args or {})["originalFunctionCall"] for c in recorded]
    assert [o["id"] for o in originals] == [c.id for c in calls]


async def test_ctx_f8_parallel_agents_resume_only_their_own_requests(
    run_local: LocalFactory,
) -> None:
    """Two agents paused at once: answering one agent's request re-dispatches that agent's
    call only; the other agent's call stays paused until its own request is answered."""
    left_seen: list[Entry] = []
    right_seen: list[Entry] = []
    right_back = asyncio.Event()
    left = Agent("left", "scripted:left", tools=[_asking("buy_report", left_seen, hint="left?")])
    right = Agent(
        "right",
        "scripted:right",
        tools=[_asking("buy_report", right_seen, hint="right?", reentered=right_back)],
    )
    models = _registry(
        {
            "left": [_call("buy_report", target="L"), "left done"],
            "right": [_call("buy_report", target="R"), "right done"],
        }
    )
    both = ParallelAgent("both", sub_agents=[left, right])
    session_id = _session()
    async with run_local([both], models=models) as rt:
        handle, requests = await _paused(rt, session_id, "both", requests=2)
        by_agent = {p.agent: p for p in requests}
        await handle.confirm(by_agent["right"].id, True, payload="R")
        async with asyncio.timeout(30):
            await right_back.wait()
        assert [p.id for p in await handle.pending()] == [by_agent["left"].id]
        assert [e.confirmation for e in left_seen] == [None]
        await handle.confirm(by_agent["left"].id, False, payload="L")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    hints = {p.agent: p.hint for p in requests if isinstance(p, PendingConfirmation)}
    assert hints == {"left": "left?", "right": "right?"}
    assert [e.confirmation for e in right_seen] == [
        None,
        ToolConfirmation(confirmed=True, payload="R"),
    ]
    assert [e.confirmation for e in left_seen] == [
        None,
        ToolConfirmation(confirmed=False, payload="L"),
    ]
    for agent, seen in (("left", left_seen), ("right", right_seen)):
        [call] = [c for c in _model_calls(events, "buy_report") if c.id in _ids(events, agent)]
        assert by_agent[agent].function_call_id == call.id
        assert {e.call_id for e in seen} == {call.id}
        answered = [e.author for e in events for r in e.function_responses() if r.id == call.id]
        assert answered == [agent, agent]


async def test_ctx_f8_an_answer_for_another_invocations_request_is_refused(
    run_local: LocalFactory,
) -> None:
    """A request of another agent's invocation is not in this one's book: answering it here
    is refused and resumes nothing; its own invocation resumes it."""
    mine: list[Entry] = []
    theirs: list[Entry] = []
    agents = [
        Agent("buyer", "scripted:buyer", tools=[_asking("buy_report", mine)]),
        Agent("seller", "scripted:seller", tools=[_asking("buy_report", theirs)]),
    ]
    models = _registry(
        {
            "buyer": [_call("buy_report", target="B"), "done"],
            "seller": [_call("buy_report", target="S"), "done"],
        }
    )
    async with run_local(agents, models=models) as rt:
        buyer, [own] = await _paused(rt, _session(), "buyer")
        seller, [other] = await _paused(rt, _session(), "seller")
        with pytest.raises(UnknownRequestIdError, match=f"open requests: {own.id}$"):
            await buyer.confirm(other.id, True)
        assert await buyer.pending() == [own]
        assert await seller.pending() == [other]
        await seller.confirm(other.id, True)
        await seller.result()
        assert [e.confirmation for e in mine] == [None]
        await buyer.confirm(own.id, True)
        await buyer.result()
    assert own.id != other.id
    assert [e.confirmation for e in theirs] == [None, ToolConfirmation(confirmed=True)]
    assert [e.confirmation for e in mine] == [None, ToolConfirmation(confirmed=True)]


async def test_ctx_f10_a_call_that_asks_twice_makes_one_request_and_runs_once(
    run_local: LocalFactory,
) -> None:
    """Asking twice in one run leaves one request, the latest; its answer re-runs the call
    once."""
    entries: list[ToolConfirmation | None] = []

    def buy_report(ctx: ToolContext) -> dict[str, str]:
        """Buy a report once approved."""
        entries.append(ctx.tool_confirmation)
        if ctx.tool_confirmation is None:
            ctx.request_confirmation("first", "old")
            ctx.request_confirmation("again", "new")
            return WAITING
        return {"status": "bought"}

    models = _registry({"buyer": [_call("buy_report"), "done"]})
    session_id = _session()
    agents = [Agent("buyer", "scripted:buyer", tools=[buy_report])]
    async with run_local(agents, models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "buyer")
        await handle.confirm(request.id, True, payload="new")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert isinstance(request, PendingConfirmation)
    assert (request.hint, request.payload) == ("again", "new")
    assert len(_request_calls(events)) == 1
    assert entries == [None, ToolConfirmation(confirmed=True, payload="new")]


async def test_ctx_f10_a_call_answered_twice_in_one_pause_is_dispatched_once(
    run_local: LocalFactory,
) -> None:
    """A call with a confirmation and an input request open is re-run once, with both
    answers."""
    entries: list[tuple[ToolConfirmation | None, Any]] = []

    def book_trip(ctx: ToolContext) -> dict[str, Any]:
        """Book a trip once approved and given dates."""
        dates = ctx.resumed_input()
        entries.append((ctx.tool_confirmation, dates.value if dates else None))
        if ctx.tool_confirmation is None:
            ctx.request_confirmation("book?")
            ctx.request_input("When?", {"type": "string"})
            return WAITING
        return {"booked": dates.value if dates else None}

    models = _registry({"agent": [_call("book_trip"), "done"]})
    session_id = _session()
    agents = [Agent("agent", "scripted:agent", tools=[book_trip])]
    async with run_local(agents, models=models) as rt:
        handle, [approval, question] = await _paused(rt, session_id, "agent", requests=2)
        await handle.confirm(approval.id, True)
        await handle.resume(question.id, "May")
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert (approval.kind, question.kind) == ("confirmation", "input")
    assert question.function_call_id == approval.function_call_id
    assert entries == [(None, None), (ToolConfirmation(confirmed=True), "May")]
    assert [r.response for r in _responses(events, "book_trip")] == [WAITING, {"booked": "May"}]


async def test_ctx_f12_recorded_reply_is_bound_to_its_request(run_local: LocalFactory) -> None:
    """A reply addressed by id alone is recorded with the request's digest, so the stored
    reply passes the call-binding check against the stored request."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen)]
    models = _registry({"buyer": [_call("buy_report", target="Oslo"), "done"]})
    session_id = _session()
    async with run_local([Agent("buyer", "scripted:buyer", tools=tools)], models=models) as rt:
        handle, [request] = await _paused(rt, session_id, "buyer")
        await handle.confirm(request.id, True)
        await handle.result()
        events = await _events(rt, session_id)
    [stored_request] = _request_calls(events)
    [reply] = _responses(events, REQUEST)
    digest = call_digest("buy_report", {"target": "Oslo"})
    assert isinstance(request, PendingConfirmation)
    assert request.call_digest == digest
    assert (stored_request.args or {})["callDigest"] == digest
    assert (reply.response or {})["callDigest"] == digest
    check_reply_digest(stored_request, reply.response)


async def test_ctx_f12_mismatched_reply_is_refused_and_the_call_is_not_resumed_by_it(
    run_local: LocalFactory,
) -> None:
    """An approval bound to other arguments is refused and its request stays open; the
    other call's answer is kept, and the call resumes only with a later fitting answer."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen), _asking("send_email", seen)]
    script = [[_call("buy_report", target="a"), _call("send_email", target="b")], "done"]
    models = _registry({"clerk": script})
    session_id = _session()
    async with run_local([Agent("clerk", "scripted:clerk", tools=tools)], models=models) as rt:
        handle, [buy, send] = await _paused(rt, session_id, "clerk", requests=2)
        forged = call_digest("buy_report", {})
        with pytest.raises(ConfirmationMismatchError, match="approves a different call"):
            await handle.confirm(buy.id, True, call_digest=forged)
        assert isinstance(send, PendingConfirmation)
        await handle.confirm(send.id, True, call_digest=send.call_digest)
        assert await handle.pending() == [buy]
        assert (await handle.status()).status == "awaiting_confirmation"
        assert [e.confirmation for e in seen] == [None, None]
        await handle.confirm(buy.id, False)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    decisions = {e.call_id: e.confirmation for e in seen if e.confirmation is not None}
    assert decisions == {
        buy.function_call_id: ToolConfirmation(confirmed=False),
        send.function_call_id: ToolConfirmation(confirmed=True),
    }
    assert [(r.id, (r.response or {})["confirmed"]) for r in _responses(events, REQUEST)] == [
        (buy.id, False),
        (send.id, True),
    ]


async def test_ctx_f11_a_later_message_resumes_nothing(run_local: LocalFactory) -> None:
    """Answers belong to the invocation that asked: a later invocation in the session
    re-runs no earlier call, and the earlier request cannot be answered in it."""
    seen: list[Entry] = []
    tools = [_asking("buy_report", seen)]
    models = _registry({"buyer": [_call("buy_report", target="Oslo"), "done", "hello"]})
    session_id = _session()
    async with run_local([Agent("buyer", "scripted:buyer", tools=tools)], models=models) as rt:
        first, [request] = await _paused(rt, session_id, "buyer")
        await first.confirm(request.id, True)
        await first.result()
        before = await _events(rt, session_id)
        later = await rt.adk.start(APP, USER, session_id, "buyer", "hi")
        with pytest.raises(UnknownRequestIdError, match="open requests: none"):
            await later.confirm(request.id, True)
        result = await later.result()
        after = await _events(rt, session_id)
    assert result.final_text == "hello"
    assert len(seen) == 2
    assert _responses(after, "buy_report") == _responses(before, "buy_report")
    assert _responses(after, REQUEST) == _responses(before, REQUEST)


async def test_ctx_f13_recorded_replies_keep_their_wire_shape(run_local: LocalFactory) -> None:
    """The reply events the runtime stores keep their keys and key order, for a confirmation
    and for an input (replay tests do not compare them; this test does)."""
    seen: list[Entry] = []

    def ask_date(ctx: ToolContext) -> dict[str, str]:
        """Ask for a date."""
        answer = ctx.resumed_input()
        if answer is None:
            ctx.request_input("When?")
            return {"status": "waiting for a date"}
        return {"date": str(answer.value)}

    tools = [_asking("plan", seen), FunctionTool(ask_date)]
    models = _registry({"planner": [[_call("plan", target="x"), _call("ask_date")], "done"]})
    session_id = _session()
    agents = [Agent("planner", "scripted:planner", tools=tools)]
    async with run_local(agents, models=models) as rt:
        handle, [approval, question] = await _paused(rt, session_id, "planner", requests=2)
        await handle.confirm(approval.id, True, payload={"n": 1})
        await handle.resume(question.id, {"day": "May 1"})
        await handle.result()
        events = await _events(rt, session_id)
    [confirmed] = _responses(events, REQUEST)
    [answered] = _responses(events, "adk_request_input")
    reply = dict(confirmed.response or {})
    assert list(reply) == ["confirmed", "payload", "callDigest", "waitedSeconds", "answered"]
    assert reply.pop("waitedSeconds") >= 0
    assert {**reply.pop("answered"), "at": 0} == {"by": None, "channel": "in-process", "at": 0}
    assert isinstance(approval, PendingConfirmation)
    assert reply == {"confirmed": True, "payload": {"n": 1}, "callDigest": approval.call_digest}
    value = dict(answered.response or {})
    assert list(value) == ["input", "waitedSeconds", "answered"]
    assert value.pop("waitedSeconds") >= 0
    assert value.pop("answered")["channel"] == "in-process"
    assert value == {"input": {"day": "May 1"}}
