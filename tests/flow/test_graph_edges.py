"""Graph workflows at their edges, in-process: a malformed answer is refused and the pause
stays open, a cancelled graph stops its nodes, a large output reaches the next node from
the store, an LLM agent node fails with its typed error and pauses for a tool's approval,
and a tool node refuses an input it cannot take."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.audit import audit_entries
from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.flow.graph_messages import INLINE_VALUE_BYTES
from adk_temporal.ids import SessionKey
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.tools import FunctionTool
from adk_temporal.workflow import START, RequestInput, Workflow
from tests.adk_models import call, queue_registry

KEY = SessionKey("app", "u", "s-edges")


def _runner(graph: Workflow | Agent, *others: Workflow) -> tuple[Runner, InMemorySessionService]:
    sessions = InMemorySessionService()
    return Runner(App([graph, *others]), stores=Stores(sessions)), sessions


async def test_an_answer_breaking_the_schema_is_refused_and_the_pause_stays() -> None:
    """A RequestInput's response_schema is enforced where the answer enters; a valid answer
    then completes the graph."""

    def ask(node_input: Any) -> RequestInput:
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        return RequestInput(interrupt_id="q-n", message="A number?", response_schema=schema)

    def use(node_input: dict[str, Any]) -> int:
        return int(node_input["n"]) * 2

    runner, _ = _runner(Workflow(name="numbers", edges=[(START, ask, use)]))
    run = await runner.start(KEY.app_name, KEY.user_id, KEY.session_id, "numbers", "go")
    await run.wait_for_status("awaiting_input")
    with pytest.raises(InvalidResumeInputError):
        await run.resume("q-n", {"n": "seven"})
    assert [p.id for p in await run.pending()] == ["q-n"]
    await run.resume("q-n", {"n": 7})
    assert (await run.result()).final_text == "14"


async def test_a_cancelled_graph_stops_its_running_nodes() -> None:
    """Cancelling a graph while one branch waits and another runs stops both and stores
    one cancellation event."""
    started = asyncio.Event()

    async def slow(node_input: Any) -> str:
        started.set()
        await asyncio.sleep(60)
        return "late"

    def ask(node_input: Any) -> RequestInput:
        return RequestInput(interrupt_id="q-wait", message="Wait")

    runner, sessions = _runner(Workflow(name="both", edges=[(START, (slow, ask))]))
    run = await runner.start(KEY.app_name, KEY.user_id, KEY.session_id, "both", "go")
    await run.wait_for_status("awaiting_input")
    await asyncio.wait_for(started.wait(), 30)
    await run.cancel()
    assert (await run.result()).status == "cancelled"
    events = (await sessions.get(KEY)).events
    assert [e.error_code for e in events if e.error_code] == ["Cancelled"]


async def test_a_large_output_reaches_the_next_node_from_the_store() -> None:
    """An output over the inline limit crosses as its event's id; the next node gets it
    whole."""

    def big(node_input: Any) -> str:
        return "x" * (INLINE_VALUE_BYTES * 20)

    def measure(node_input: str) -> int:
        return len(node_input)

    runner, _ = _runner(Workflow(name="sizes", edges=[(START, big, measure)]))
    result = await runner.run(KEY.app_name, KEY.user_id, KEY.session_id, "sizes", "go")
    assert result.final_text == str(INLINE_VALUE_BYTES * 20)


async def test_an_agent_node_whose_model_is_unknown_fails_with_its_typed_error() -> None:
    """An LLM agent node whose model no registry resolves fails the graph; the model step's
    typed error is stored once."""
    agent = Agent("helper", "no-such-model")
    runner, sessions = _runner(Workflow(name="agentic", edges=[(START, agent)]))
    result = await runner.run(KEY.app_name, KEY.user_id, KEY.session_id, "agentic", "go")
    assert result.status == "failed"
    errors = [e for e in (await sessions.get(KEY)).events if e.error_code]
    assert [e.error_code for e in errors] == ["UnknownModelError"]


async def test_a_tool_confirmation_inside_an_llm_node_is_a_durable_pause() -> None:
    """A tool needing approval inside an LLM agent node pauses the graph as any pause: it is
    listed as pending, answered by the same path, and the agent's answer flows on."""
    paid: list[int] = []

    def pay(amount: int) -> dict[str, Any]:
        """Pay an amount."""
        paid.append(amount)
        return {"paid": amount}

    models, _ = queue_registry("queue", [call("pay", amount=5), "paid 5"])
    agent = Agent("cashier", "queue", tools=[FunctionTool(pay, require_confirmation=True)])

    def receipt(node_input: str) -> str:
        return f"receipt: {node_input}"

    graph = Workflow(name="paying", edges=[(START, agent, receipt)])
    sessions = InMemorySessionService()
    runner = Runner(App([graph], models=models), stores=Stores(sessions))
    run = await runner.start(KEY.app_name, KEY.user_id, KEY.session_id, "paying", "pay it")
    await run.wait_for_status("awaiting_confirmation")
    assert (await run.status()).nodes == {"cashier": "waiting"}
    [request] = await run.pending()
    assert request.tool == "pay" and paid == []
    await run.confirm(request.id, True)
    result = await run.result()
    assert (result.status, result.final_text, paid) == ("completed", "receipt: paid 5", [5])
    assert (await run.status()).nodes == {"cashier": "done", "receipt": "done"}
    node_events = [e for e in (await sessions.get(KEY)).events if e.author == "cashier"]
    assert {e.node_info.path for e in node_events if e.node_info} == {"paying@1/cashier@1"}
    assert all(e.node_info is not None for e in node_events)


async def test_a_tool_node_refuses_an_input_it_cannot_take() -> None:
    """A tool node given a value that is no dict, for a tool of two parameters, fails with
    ADK's TypeError, stored as the node's error event."""

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    runner, sessions = _runner(Workflow(name="adding", edges=[(START, FunctionTool(add))]))
    result = await runner.run(KEY.app_name, KEY.user_id, KEY.session_id, "adding", "[1, 2]")
    assert result.status == "failed"
    errors = [e for e in (await sessions.get(KEY)).events if e.error_code]
    assert [e.error_code for e in errors] == ["TypeError"]
    assert "must be a dictionary of tool arguments" in (errors[0].error_message or "")


async def test_who_answered_a_graph_pause_is_recorded_beside_adks_payload() -> None:
    """The answer to a RequestInput is stored as sent (ADK's shape); who answered, through
    which channel and when is in the event's custom metadata, and the audit trail lists it.
    While it waits, the run's status names the waiting node."""

    def ask(node_input: Any) -> RequestInput:
        return RequestInput(interrupt_id="q-who", message="Who?")

    runner, sessions = _runner(Workflow(name="asking", edges=[(START, ask)]))
    run = await runner.start(KEY.app_name, KEY.user_id, KEY.session_id, "asking", "go")
    await run.wait_for_status("awaiting_input")
    assert (await run.status()).nodes == {"ask": "waiting"}
    await run.resume("q-who", {"name": "ada"})
    assert (await run.result()).status == "completed"
    events = (await sessions.get(KEY)).events
    [answer] = [e for e in events if e.author == "user" and e.function_responses()]
    assert answer.function_responses()[0].response == {"name": "ada"}
    record = (answer.custom_metadata or {})["answered"]["q-who"]
    assert record["channel"] == "in-process" and record["at"] > 0
    [entry] = audit_entries(events)
    assert (entry.request_id, entry.decision, entry.channel) == ("q-who", "answered", "in-process")
