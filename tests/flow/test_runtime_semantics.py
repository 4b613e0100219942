"""ADK semantics through the invocation flow: gates, callbacks, endings, errors, temp state."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.context import CallbackContext, ToolContext
from adk_temporal.events import Event
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey
from adk_temporal.memory import InMemoryMemoryService
from adk_temporal.models import (
    LlmRequest,
    LlmResponse,
    ModelRegistry,
    ScriptedModel,
)
from adk_temporal.sessions.session import Session
from adk_temporal.tools import FunctionTool, tool

from .conftest import LocalFactory, LocalRuntime

APP = "semantics"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def _registry(name: str, script: list[Any]) -> ModelRegistry:
    models = ModelRegistry()
    models.register(name, lambda n: ScriptedModel(name=n, script=script))
    return models


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.function_responses() if r.name == name
    ]


@tool(require_confirmation=lambda args: args["amount"] > 100)
def transfer_money(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Move money; large amounts need approval.

    Args:
        amount: How much.
    """
    ctx.state["moved"] = amount
    return {"moved": amount}


@pytest.mark.parametrize("approve", [True, False])
async def test_static_gate_pauses_large_calls_and_honours_the_answer(
    run_local: LocalFactory, approve: bool
) -> None:
    """require_confirmation's predicate gates the call; approval runs it, rejection refuses."""
    models = _registry(
        "scripted:bank",
        [_call("transfer_money", amount=5), _call("transfer_money", amount=500), "done"],
    )
    agent = Agent("bank", "scripted:bank", tools=[transfer_money])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "bank", "pay")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        assert request.args == {"amount": 500}
        assert isinstance(request, PendingConfirmation)
        assert request.hint == "Please approve or reject the tool call transfer_money()."
        await handle.confirm(request.id, approve)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    responses = _responses(events, "transfer_money")
    assert responses[0] == {"moved": 5}
    assert responses[1] == {
        "error": "tool transfer_money requires confirmation, please approve or reject"
    }
    if approve:
        assert responses[2] == {"moved": 500}
    else:
        assert responses[2] == {"error": "tool transfer_money call is rejected"}


async def test_callbacks_shape_the_run_and_their_deltas_reach_events(
    run_local: LocalFactory,
) -> None:
    """Model and tool callbacks run worker-side; a model callback's artifact save is recorded."""
    seen: list[str] = []

    async def before_model(ctx: CallbackContext, request: LlmRequest) -> None:
        ctx.state["model_calls"] = int(ctx.state.get("model_calls", 0)) + 1
        assert ctx.artifacts is not None
        await ctx.artifacts.save("prompt.txt", types.Part(text=str(len(request.contents))))

    def before_tool(ctx: ToolContext, tool: FunctionTool, args: dict[str, Any]) -> None:
        seen.append(f"before {tool.name}")

    def after_tool(
        ctx: ToolContext, tool: FunctionTool, args: dict[str, Any], response: dict[str, Any]
    ) -> dict[str, Any]:
        return {**response, "checked": True}

    def lookup(city: str) -> dict[str, str]:
        """Look a city up.

        Args:
            city: The city.
        """
        return {"city": city}

    models = _registry("scripted:cb", [_call("lookup", city="Paris"), "ok"])
    agent = Agent(
        "cb",
        "scripted:cb",
        tools=[lookup],
        before_model_callback=before_model,
        before_tool_callback=before_tool,
        after_tool_callback=after_tool,
    )
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "cb", "go")).result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
    assert result.final_text == "ok"
    assert seen == ["before lookup"]
    assert _responses(events, "lookup") == [{"city": "Paris", "checked": True}]
    model_events = [e for e in events if e.author == "cb" and not e.function_responses()]
    assert [e.actions.artifact_delta for e in model_events] == [
        {"prompt.txt": 1},
        {"prompt.txt": 2},
    ]
    assert state["model_calls"] == 2


class _RecordingModel:
    """Answers every request with "ok" and keeps the texts of the contents it was sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[list[str]] = []

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Record the request's texts, answer "ok"."""
        self.seen.append([p.text or "" for c in request.contents for p in c.parts or []])
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def test_a_callback_changing_the_request_changes_only_that_request(
    run_local: LocalFactory,
) -> None:
    """The worker reuses the contents it built for the next step; what a before-model
    callback does to its request stays in that request."""
    model = _RecordingModel("recording")

    def before_model(ctx: CallbackContext, request: LlmRequest) -> None:
        first = request.contents[0].parts
        assert first is not None
        first[0].text = "tampered"
        request.contents.append(types.Content(role="user", parts=[types.Part(text="injected")]))

    models = ModelRegistry()
    models.register("recording", lambda name: model)
    agent = Agent("cb", "recording", before_model_callback=before_model)
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        for message in ("hello", "again"):
            await (await rt.adk.start(APP, USER, session_id, "cb", message)).result()
        stored = [e.text() for e in await _events(rt, session_id)]
    assert model.seen == [
        ["tampered", "injected"],
        ["tampered", "ok", "again", "injected"],
    ]
    assert stored == ["hello", "ok", "again", "ok"]


async def test_before_agent_content_ends_the_invocation_without_a_model_call(
    run_local: LocalFactory,
) -> None:
    """A before-agent callback that returns content answers for the agent."""

    def closed(ctx: CallbackContext) -> types.Content:
        return types.Content(role="model", parts=[types.Part(text="We are closed today.")])

    models = _registry("scripted:shop", ["should not be called"])
    agent = Agent("shop", "scripted:shop", before_agent_callback=closed)
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "shop", "hi")).result()
        events = await _events(rt, session_id)
    assert result.final_text == "We are closed today."
    assert [e.text() for e in events] == ["hi", "We are closed today."]


async def test_tool_ending_the_invocation_stops_before_the_next_model_call(
    run_local: LocalFactory,
) -> None:
    """ctx.actions.end_invocation = True is honoured after the step."""

    def hang_up(ctx: ToolContext) -> dict[str, str]:
        """End the conversation."""
        ctx.actions.end_invocation = True
        return {"status": "bye"}

    models = _registry("scripted:phone", [_call("hang_up"), "never said"])
    agent = Agent("phone", "scripted:phone", tools=[hang_up])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "phone", "bye")).result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert result.steps == 1
    assert events[-1].actions.end_invocation
    assert "never said" not in [e.text() for e in events]


async def test_step_limit_fails_the_invocation_with_an_error_event(
    run_local: LocalFactory,
) -> None:
    """A model that keeps calling tools stops at max_steps, recorded as an error event."""

    def again() -> dict[str, str]:
        """Do it again."""
        return {"status": "again"}

    models = _registry("scripted:loop", [_call("again")] * 10)
    agent = Agent("loop", "scripted:loop", tools=[again])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "loop", "go", max_steps=3)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "failed"
    assert result.error == "step limit of 3 model steps reached"
    assert events[-1].error_code == "StepLimitExceeded"
    assert len([e for e in events if e.function_calls()]) == 3


async def test_blocked_model_reply_is_recorded_and_fails_the_invocation(
    run_local: LocalFactory,
) -> None:
    """An error response (blocked, empty) becomes an event and a failed status, not a crash."""
    blocked = LlmResponse(error_code="SAFETY", error_message="blocked for safety")
    models = _registry("scripted:blocked", [blocked])
    agent = Agent("blocked", "scripted:blocked")
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "blocked", "hi")
        result = await handle.result()
        status = await handle.status()
        events = await _events(rt, session_id)
    assert result.status == "failed"
    assert result.error == "blocked for safety"
    assert status.status == "failed"
    assert events[-1].error_code == "SAFETY"


async def test_temp_state_lives_for_the_invocation_only(run_local: LocalFactory) -> None:
    """temp: keys reach later steps of the invocation but are never persisted."""

    def remember(ctx: ToolContext) -> dict[str, str]:
        """Remember a scratch value."""
        ctx.state["temp:scratch"] = "x1"
        return {"status": "noted"}

    def recall(ctx: ToolContext) -> dict[str, Any]:
        """Recall the scratch value."""
        return {"scratch": ctx.state.get("temp:scratch")}

    models = _registry("scripted:temp", [_call("remember"), _call("recall"), "done"])
    agent = Agent("temp", "scripted:temp", tools=[remember, recall])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        await (await rt.adk.start(APP, USER, session_id, "temp", "go")).result()
        events = await _events(rt, session_id)
        state = await rt.sessions.get_state(SessionKey(APP, USER, session_id))
    assert _responses(events, "recall") == [{"scratch": "x1"}]
    assert "temp:scratch" not in state
    assert all("temp:scratch" not in e.actions.state_delta for e in events)


async def test_search_memory_reads_the_configured_memory_service(
    run_local: LocalFactory,
) -> None:
    """ctx.search_memory searches the user's sessions in the worker's memory service."""
    memory = InMemoryMemoryService()
    past = Session(id="old", app_name=APP, user_id=USER)
    past.events.append(
        Event(
            id="e1",
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="I love Lisbon")]),
        )
    )
    await memory.add_session(past)

    async def recall_city(ctx: ToolContext) -> dict[str, Any]:
        """Find what the user said about Lisbon."""
        found = await ctx.search_memory("Lisbon")
        return {"memories": [(m.content.parts or [])[0].text for m in found.memories]}

    models = _registry("scripted:mem", [_call("recall_city"), "done"])
    agent = Agent("mem", "scripted:mem", tools=[recall_city])
    session_id = _session()
    async with run_local([agent], models=models, memory_service=memory) as rt:
        await (await rt.adk.start(APP, USER, session_id, "mem", "go")).result()
        events = await _events(rt, session_id)
    assert _responses(events, "recall_city") == [{"memories": ["I love Lisbon"]}]


async def test_a_reentered_tool_may_ask_for_confirmation_again(run_local: LocalFactory) -> None:
    """Two-step approval: after the first yes the tool asks again; a new request opens."""

    def launch(ctx: ToolContext) -> dict[str, str]:
        """Launch, after two approvals."""
        confirmation = ctx.tool_confirmation
        if confirmation is None:
            ctx.request_confirmation("first approval", {"step": 1})
            return {"status": "waiting for approval"}
        if confirmation.payload == {"step": 1} and confirmation.confirmed:
            ctx.request_confirmation("second approval", {"step": 2})
            return {"status": "waiting for second approval"}
        return {"status": "launched" if confirmation.confirmed else "aborted"}

    models = _registry("scripted:launch", [_call("launch"), "done"])
    agent = Agent("launcher", "scripted:launch", tools=[launch])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "launcher", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [first] = await handle.pending()
        await handle.confirm(first.id, True, payload={"step": 1})
        async with asyncio.timeout(30):
            while [p.id for p in await handle.pending()] in ([], [first.id]):
                await asyncio.sleep(0.1)
        [second] = await handle.pending()
        assert isinstance(second, PendingConfirmation)
        assert second.hint == "second approval"
        assert second.function_call_id == first.function_call_id
        await handle.confirm(second.id, True, payload={"step": 2})
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert [r["status"] for r in _responses(events, "launch")] == [
        "waiting for approval",
        "waiting for second approval",
        "launched",
    ]


async def test_tools_see_the_message_that_started_the_invocation(
    run_local: LocalFactory,
) -> None:
    """ctx.user_content inside a tool is the invocation's user message, not None."""

    def echo(ctx: ToolContext) -> dict[str, Any]:
        """Repeat what the user asked."""
        content = ctx.user_content
        return {"asked": content.parts[0].text if content and content.parts else None}

    models = _registry("scripted:echo", [_call("echo"), "done"])
    agent = Agent("echoer", "scripted:echo", tools=[echo])
    session_id = _session()
    async with run_local([agent], models=models) as rt:
        await (await rt.adk.start(APP, USER, session_id, "echoer", "what did I ask?")).result()
        events = await _events(rt, session_id)
    assert _responses(events, "echo") == [{"asked": "what did I ask?"}]
