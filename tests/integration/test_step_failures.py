"""How Temporal treats failing steps: non-retryable 4xx, retried 429, an unknown agent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.genai import types
from temporalio.client import WorkflowFailureError

from adk_temporal.agents import Agent
from adk_temporal.context import ToolContext
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import (
    GeminiModel,
    ModelRegistry,
    ScriptedModel,
)
from adk_temporal.testing.fake_gemini import FakeGeminiServer
from adk_temporal.tools import tool
from adk_temporal.workflows.messages import ADK_STATUS

from .conftest import Runtime, WorkerFactory

pytestmark = pytest.mark.integration

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


async def _events(rt: Runtime, session_id: str) -> list[Event]:
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


async def test_gemini_4xx_fails_the_workflow_without_retrying(run_worker: WorkerFactory) -> None:
    """A 400 from the Gemini API (real client, fake server) is non-retryable: one request."""
    with FakeGeminiServer() as gemini:
        gemini.enqueue_error(400, "Invalid JSON payload received.")
        models = ModelRegistry()
        models.register(
            "gemini-*", lambda n: GeminiModel(n, api_key="test", base_url=gemini.base_url)
        )
        agent = Agent("g", "gemini-2.5-flash")
        session_id = _session()
        async with run_worker([agent], models=models) as rt:
            handle = await rt.adk.start(APP, USER, session_id, "g", "hi")
            with pytest.raises(WorkflowFailureError) as failure:
                await handle.result()
            events = await _events(rt, session_id)
        assert len(gemini.requests) == 1
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "ModelRequestError"
    assert "HTTP 400" in str(cause)
    assert events[-1].error_code == "ModelRequestError"


async def test_gemini_429_is_retried_by_temporal(run_worker: WorkerFactory) -> None:
    """A rate-limited model call is retried under the activity's policy, then succeeds."""
    with FakeGeminiServer() as gemini:
        gemini.enqueue_error(429, "slow down")
        gemini.enqueue_text("Hello after a retry.")
        models = ModelRegistry()
        models.register(
            "gemini-*", lambda n: GeminiModel(n, api_key="test", base_url=gemini.base_url)
        )
        agent = Agent("g", "gemini-2.5-flash", instruction="Be brief.")
        async with run_worker([agent], models=models) as rt:
            result = await (await rt.adk.start(APP, USER, _session(), "g", "hi")).result()
        requests = gemini.requests
    assert result.final_text == "Hello after a retry."
    assert len(requests) == 2
    body = requests[1].body
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert "test" not in str(body)  # the API key never enters a request body


async def test_unknown_agent_fails_the_run_with_a_typed_error_and_failed_status(
    run_worker: WorkerFactory, temporal_client: Any
) -> None:
    """Starting an agent the worker does not serve fails fast, visibly, without retries."""
    agent = Agent("known", "scripted:x")
    session_id = _session()
    async with run_worker([agent]) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "unknown_agent", "hi")
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
        description = await handle.describe()
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "UnknownAgentError"
    assert "unknown agent 'unknown_agent'; this worker serves: known" in str(cause)
    status = description.typed_search_attributes.get(ADK_STATUS)
    assert status == "failed"
