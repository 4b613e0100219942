"""Running a scenario on adk-temporal, recorded as the ADK side records it."""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable
from typing import Any

from google.genai import types

import adk_temporal.workflow as ours
from adk_temporal.agents import LlmAgent
from adk_temporal.app import App, Stores
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry, default_registry
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService, SessionService
from adk_temporal.tools import FunctionTool

from .record import event_record, normal
from .scenarios import SCENARIOS, Answer, Scenario

__all__ = [
    "IN_BOTH",
    "KEY",
    "MODELS",
    "PAUSING",
    "build",
    "names",
    "recorded",
    "run_in_process",
]

IN_BOTH = [
    "chain",
    "fan_out_join",
    "routes",
    "loop",
    "nested",
    "dynamic",
    "retry",
    "retry_unlisted",
    "timeout",
    "max_concurrency",
    "two_terminals",
    "llm_tool",
    "tool_node",
]
"""The scenarios both engines run from one message to the end."""

PAUSING = ["pause", "pause_rerun", "pause_in_branch"]
"""The scenarios that pause and are answered (by a later message on ADK; by an answer to
the waiting invocation here)."""

KEY = SessionKey("app", "u", "s-graph")
"""The session every scenario runs in (one store per run)."""


MODELS: ModelRegistry = default_registry()
"""The models the scenarios' agents name (``w.model``), with the default ones."""


class _DecidingModel:
    """A deterministic model: ``decide`` (the scenario's) picks each reply from the
    request's contents, as the fake model on the ADK side does."""

    def __init__(self, name: str, decide: Callable[[list[Any]], dict[str, Any]]) -> None:
        self._name = name
        self._decide = decide

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The reply ``decide`` picks: a text or one function call."""
        reply = self._decide(list(request.contents))
        if "call" in reply:
            part = types.Part(
                function_call=types.FunctionCall(name=reply["call"], args=reply["args"])
            )
        else:
            part = types.Part(text=reply["text"])
        return LlmResponse(content=types.Content(role="model", parts=[part]))


def _model(name: str, decide: Callable[[list[Any]], dict[str, Any]]) -> str:
    """Register a deciding model under ``name``; the name, for an agent's ``model``."""
    MODELS.register(name, lambda _: _DecidingModel(name, decide))
    return name


def names() -> Any:
    """Our names, as the scenarios use them."""
    found = {n: getattr(ours, n) for n in ours.__all__}
    return pytypes.SimpleNamespace(
        **found, LlmAgent=LlmAgent, model=_model, FunctionTool=FunctionTool
    )


def build(scenario: str) -> Scenario:
    """The scenario built with our names."""
    return SCENARIOS[scenario](names())


async def recorded(
    sessions: SessionService, error: str | None, key: SessionKey = KEY
) -> dict[str, Any]:
    """What session ``key`` holds after the run, as the ADK side records it."""
    session = await sessions.get(key)
    return {
        "events": [event_record(e) for e in session.events],
        "state": normal(session.state),
        "error": error,
    }


async def run_in_process(scenario: str) -> dict[str, Any]:
    """Run ``scenario`` on the in-process runner; its record."""
    built = build(scenario)
    sessions = InMemorySessionService()
    runner = Runner(App([built.workflow], models=MODELS), stores=Stores(sessions))
    message, *answers = built.messages
    assert isinstance(message, str)
    run = await runner.start(
        KEY.app_name, KEY.user_id, KEY.session_id, built.workflow.name, message
    )
    for answer in answers:
        assert isinstance(answer, Answer)
        await run.wait_for_status("awaiting_input")
        await run.resume(answer.interrupt_id, answer.response)
    result = await run.result()
    return await recorded(sessions, result.error if result.status == "failed" else None)
