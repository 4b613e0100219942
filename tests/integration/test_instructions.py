"""SPEC §1.11 instruction templates and providers on Temporal, through a real worker: the
model-step activity renders them, and what it renders is what the Gemini API receives
(the real google-genai client against the local fake server).

Follows ADK-Go ``agent/llmagent/llmagent_test.go`` ``TestInstructionProvider`` and
``internal/llminternal/instruction_processor_test.go`` ``TestInjectSessionState`` ("missing
required state variable").
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import WorkflowFailureError

from adk_temporal.agents import Agent
from adk_temporal.context import ReadonlyContext, ToolContext
from adk_temporal.ids import SessionKey
from adk_temporal.testing.fake_gemini import FakeGeminiServer

from .conftest import WorkerFactory, gemini_models

pytestmark = pytest.mark.integration

APP = "instructions"
USER = "u-1"
MODEL = "gemini-2.5-flash"


def _key() -> SessionKey:
    return SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")


def remember(city: str, ctx: ToolContext) -> dict[str, str]:
    """Remember the city the user asked about.

    Args:
        city: The city.
    """
    ctx.state["last_city"] = city
    return {"status": "noted"}


async def test_templated_instruction_and_async_provider_reach_the_model(
    run_worker: WorkerFactory, gemini: FakeGeminiServer
) -> None:
    """The async global provider's text (untemplated) precedes the templated instruction,
    rendered afresh by each model-step activity from the state as it is then."""
    calls: list[str] = []

    async def house_rules(ctx: ReadonlyContext) -> str:
        calls.append(ctx.agent_name)
        return f"House rules for {ctx.agent_name}; {{user_name}} stays as written."

    agent = Agent(
        "helper",
        MODEL,
        "Help {user_name}. Last city: {last_city?}.",
        global_instruction=house_rules,
        tools=[remember],
    )
    gemini.enqueue_function_call("remember", {"city": "Oslo"})
    gemini.enqueue_text("Noted Oslo.")
    key = _key()
    async with run_worker([agent], models=gemini_models(gemini)) as rt:
        await rt.sessions.create(key, state={"user_name": "Ada"})
        handle = await rt.adk.start(*key, "helper", "remember Oslo")
        result = await handle.result()
    assert result.final_text == "Noted Oslo."
    rules = "House rules for helper; {user_name} stays as written."
    assert [r.body["systemInstruction"]["parts"][0]["text"] for r in gemini.requests] == [
        f"{rules}\n\nHelp Ada. Last city: .",
        f"{rules}\n\nHelp Ada. Last city: Oslo.",
    ]
    assert calls == ["helper", "helper"]


async def test_missing_key_fails_the_invocation_at_once_with_the_typed_error(
    run_worker: WorkerFactory, gemini: FakeGeminiServer
) -> None:
    """A missing non-optional key is a non-retryable InstructionKeyError: one attempt of the
    step (the provider ran once), no model request, the failure and the session's last event
    name it and the key."""
    calls: list[str] = []

    def house_rules(ctx: ReadonlyContext) -> str:
        calls.append(ctx.agent_name)
        return "Be kind."

    agent = Agent("strict", MODEL, "Help {user_name}.", global_instruction=house_rules)
    key = _key()
    async with run_worker([agent], models=gemini_models(gemini)) as rt:
        handle = await rt.adk.start(*key, "strict", "hi")
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
        events = (await rt.sessions.get(key)).events
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "InstructionKeyError"
    assert "state key 'user_name'" in str(cause)
    assert "agent 'strict'" in str(cause)
    assert calls == ["strict"]
    assert gemini.requests == []
    assert events[-1].error_code == "InstructionKeyError"
