"""SPEC §1.11 instruction templates and providers, on the in-process runner: what the model
receives as its system instruction.

The cases follow ADK-Python ``tests/unittests/flows/llm_flows/test_instructions.py`` and
ADK-Go ``agent/llmagent/llmagent_test.go`` ``TestInstructionProvider`` (cited per test), run
through the whole invocation flow instead of the request processor alone.
"""

from __future__ import annotations

import uuid
from typing import Any

from google.genai import types

from adk_temporal.agents import Agent, SequentialAgent
from adk_temporal.artifacts.requests import SaveRequest
from adk_temporal.context import ReadonlyContext, ToolContext
from adk_temporal.events import Event
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ids import SessionKey
from adk_temporal.instructions import inject_session_state
from adk_temporal.models import (
    LlmRequest,
    LlmResponse,
    Model,
    ModelFactory,
    ModelRegistry,
    ScriptedModel,
)

from .conftest import LocalFactory, LocalRuntime

APP = "instructions"
USER = "u-1"


class _Recorder(ScriptedModel):
    """A scripted model that keeps the system instruction of every request it answers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.instructions: list[str | None] = []

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Record the request's system instruction, then answer from the script."""
        self.instructions.append(request.system_instruction)
        return await super().generate(request)


def _always(model: Model) -> ModelFactory:
    """A factory that returns ``model`` whatever name it is asked for."""
    return lambda _name: model


def _models(**recorders: _Recorder) -> ModelRegistry:
    """Models ``scripted:<name>`` answered by the given recorders."""
    models = ModelRegistry()
    for name, recorder in recorders.items():
        models.register(f"scripted:{name}", _always(recorder))
    return models


def _session() -> SessionKey:
    return SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")


async def _run(
    rt: LocalRuntime, key: SessionKey, agent: str, message: str = "hi"
) -> InvocationResult:
    handle = await rt.adk.start(key.app_name, key.user_id, key.session_id, agent, message)
    return await handle.result()


async def _events(rt: LocalRuntime, key: SessionKey) -> list[Event]:
    return (await rt.sessions.get(key)).events


async def test_template_reads_session_state_with_scope_prefixes(run_local: LocalFactory) -> None:
    """``{key}`` reads the session's state (``app:`` and ``user:`` scopes too) and a missing
    ``{key?}`` is empty (ADK-Python test_build_system_instruction_with_namespace)."""
    model = _Recorder(fallback_text="ok")
    agent = Agent(
        "helper",
        "scripted:m",
        "Help {user_name} ({user:tier}, {app:region}). Last city: {last_city?}. {not-a-name}",
    )
    key = _session()
    async with run_local([agent], models=_models(m=model)) as rt:
        state = {"user_name": "Ada", "user:tier": "gold", "app:region": "eu"}
        await rt.sessions.create(key, state=state)
        result = await _run(rt, key, "helper")
    assert result.status == "completed", result.error
    assert model.instructions == ["Help Ada (gold, eu). Last city: . {not-a-name}"]


async def test_template_is_filled_again_at_every_step(run_local: LocalFactory) -> None:
    """Each model step renders the template from the state as it is then: a tool's write
    (session and ``temp:`` scope) shows in the next request of the same invocation."""

    def remember(city: str, ctx: ToolContext) -> dict[str, str]:
        """Remember the city.

        Args:
            city: The city.
        """
        ctx.state["last_city"] = city
        ctx.state["temp:mood"] = "curious"
        return {"status": "noted"}

    call = types.FunctionCall(name="remember", args={"city": "Paris"})
    model = _Recorder(script=[call, "done"])
    agent = Agent(
        "helper", "scripted:m", "Last city: {last_city?}. Mood: {temp:mood?}.", tools=[remember]
    )
    async with run_local([agent], models=_models(m=model)) as rt:
        result = await _run(rt, _session(), "helper")
    assert result.final_text == "done"
    assert model.instructions == [
        "Last city: . Mood: .",
        "Last city: Paris. Mood: curious.",
    ]


async def test_artifact_placeholder_inserts_the_artifact_text(run_local: LocalFactory) -> None:
    """``{artifact.name}`` is the latest version's text; a missing optional one is empty."""
    model = _Recorder(fallback_text="ok")
    agent = Agent("reader", "scripted:m", "Notes: {artifact.notes.txt}|{artifact.other.txt?}")
    key = _session()
    async with run_local([agent], models=_models(m=model)) as rt:
        await rt.sessions.create(key)
        for text in ("old", "Buy milk."):
            part = types.Part(text=text)
            await rt.artifacts.save(SaveRequest.of(key, file_name="notes.txt", part=part))
        await _run(rt, key, "reader")
    assert model.instructions == ["Notes: Buy milk.|"]


async def test_async_provider_runs_with_a_readonly_context_and_is_not_templated(
    run_local: LocalFactory,
) -> None:
    """An async instruction provider gets the read-only context of the step; its braces
    reach the model as written (ADK-Python test_async_function_system_instruction)."""
    seen: list[tuple[str, str, Any]] = []

    async def instruction(ctx: ReadonlyContext) -> str:
        seen.append((ctx.agent_name, ctx.invocation_id, ctx.state.get("user_name")))
        return f"Provider for {ctx.state['user_name']}; template {{user_name}} intact."

    model = _Recorder(fallback_text="ok")
    agent = Agent("helper", "scripted:m", instruction)
    key = _session()
    async with run_local([agent], models=_models(m=model)) as rt:
        await rt.sessions.create(key, state={"user_name": "Ada"})
        result = await _run(rt, key, "helper")
    assert model.instructions == ["Provider for Ada; template {user_name} intact."]
    assert seen == [("helper", result.invocation_id, "Ada")]


async def test_provider_may_ask_for_templating_with_inject_session_state(
    run_local: LocalFactory,
) -> None:
    """A provider that calls inject_session_state gets the template rules (ADK-Go
    instructionutil.InjectSessionState)."""

    async def instruction(ctx: ReadonlyContext) -> str:
        return await inject_session_state("Hello {user_name}{suffix?}.", ctx)

    model = _Recorder(fallback_text="ok")
    key = _session()
    async with run_local([Agent("h", "scripted:m", instruction)], models=_models(m=model)) as rt:
        await rt.sessions.create(key, state={"user_name": "Ada"})
        await _run(rt, key, "h")
    assert model.instructions == ["Hello Ada."]


async def test_root_global_instruction_precedes_the_transferred_agent_s_own(
    run_local: LocalFactory,
) -> None:
    """The root's global instruction (templated) comes first for the root and for a sub-agent
    it transfers to, a blank line before each one's own (ADK-Python
    test_global_system_instruction; ADK-Go instructionsRequestProcessor)."""
    transfer = types.FunctionCall(name="transfer_to_agent", args={"agent_name": "billing"})
    root_model = _Recorder(script=[transfer])
    sub_model = _Recorder(fallback_text="Your bill is paid.")
    billing = Agent("billing", "scripted:sub", "Handle bills.", description="Bills.")
    root = Agent(
        "desk",
        "scripted:root",
        "Route requests.",
        global_instruction="You work for {app:company}.",
        sub_agents=[billing],
    )
    key = _session()
    async with run_local([root], models=_models(root=root_model, sub=sub_model)) as rt:
        await rt.sessions.create(key, state={"app:company": "Acme"})
        result = await _run(rt, key, "desk", "pay my bill")
    assert result.final_text == "Your bill is paid."
    [root_instruction] = root_model.instructions
    [sub_instruction] = sub_model.instructions
    # Transfer guidance, if any, follows the instructions.
    assert (root_instruction or "").startswith("You work for Acme.\n\nRoute requests.")
    assert (sub_instruction or "").startswith("You work for Acme.\n\nHandle bills.")


async def test_under_a_workflow_root_each_agent_uses_its_own_global_instruction(
    run_local: LocalFactory,
) -> None:
    """When the tree's root is not an LLM agent, an agent's own global instruction applies
    and no other agent's does (ADK-Go instructionsRequestProcessor's fallback)."""
    first_model = _Recorder(fallback_text="one")
    second_model = _Recorder(fallback_text="two")
    first = Agent("first", "scripted:a", "First.", global_instruction="Global of first.")
    second = Agent("second", "scripted:b", "Second.")
    pipeline = SequentialAgent("pipeline", sub_agents=[first, second])
    models = _models(a=first_model, b=second_model)
    async with run_local([pipeline], models=models) as rt:
        await _run(rt, _session(), "pipeline")
    assert first_model.instructions == ["Global of first.\n\nFirst."]
    assert second_model.instructions == ["Second."]


async def test_missing_key_fails_the_invocation_at_once_naming_the_key(
    run_local: LocalFactory,
) -> None:
    """A missing non-optional key fails the step on its first attempt (the global provider
    runs once), the model is never called, and the failure names the key and the agent."""
    calls: list[str] = []

    def shared(ctx: ReadonlyContext) -> str:
        calls.append(ctx.agent_name)
        return "Be kind."

    model = _Recorder(fallback_text="ok")
    agent = Agent("strict", "scripted:m", "Help {user_name}.", global_instruction=shared)
    key = _session()
    async with run_local([agent], models=_models(m=model)) as rt:
        result = await _run(rt, key, "strict")
        events = await _events(rt, key)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.startswith("InstructionKeyError: ")
    assert "state key 'user_name'" in result.error
    assert "agent 'strict'" in result.error
    assert calls == ["strict"]
    assert model.instructions == []
    assert events[-1].error_code == "InstructionKeyError"
