"""A configuration error fails its step at once, naming what to set: a Gemini API key that
is missing, invalid or without rights (GeminiModel, the real google-genai client, against
the fake Gemini server), through a real worker, never after minutes of retries."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError

from adk_temporal.agents import Agent
from adk_temporal.errors import ModelConfigurationError, ModelRequestError
from adk_temporal.models import GeminiModel, LlmRequest, ModelRegistry
from adk_temporal.testing.fake_gemini import FakeGeminiServer

from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

MODEL = "gemini-2.5-flash"
KEY_INVALID: dict[str, Any] = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ],
    }
}
"""What the Gemini API answers a request made with a key it does not know."""

REFUSALS = [
    pytest.param(400, KEY_INVALID, id="400-key-invalid"),
    pytest.param(
        401,
        {
            "error": {
                "code": 401,
                "message": "Request had invalid credentials.",
                "status": "UNAUTHENTICATED",
            }
        },
        id="401",
    ),
    pytest.param(
        403,
        {
            "error": {
                "code": 403,
                "message": "Method doesn't allow unregistered callers.",
                "status": "PERMISSION_DENIED",
            }
        },
        id="403",
    ),
]


def _request() -> LlmRequest:
    return LlmRequest(
        model=MODEL, contents=[types.Content(role="user", parts=[types.Part(text="hi")])]
    )


@pytest.mark.parametrize(("status", "body"), REFUSALS)
async def test_a_refused_key_is_a_configuration_error_naming_what_to_set(
    gemini: FakeGeminiServer, status: int, body: dict[str, Any]
) -> None:
    """400 API_KEY_INVALID, 401 and 403 raise ModelConfigurationError (not a plain request
    error) carrying the API's message and the variables to set, after one HTTP attempt."""
    gemini.enqueue_response(body, status=status)
    model = GeminiModel(MODEL, api_key="AIza-not-a-key", base_url=gemini.base_url)
    with pytest.raises(ModelConfigurationError) as caught:
        await model.generate(_request())
    assert caught.value.status == status
    assert body["error"]["message"] in str(caught.value)
    assert "GOOGLE_API_KEY" in str(caught.value)
    assert len(gemini.requests) == 1


async def test_an_ordinary_bad_request_stays_a_request_error(gemini: FakeGeminiServer) -> None:
    """A 400 about the request, not the key, is still ModelRequestError."""
    gemini.enqueue_error(400, "Invalid JSON payload received.")
    model = GeminiModel(MODEL, api_key="AIza-key", base_url=gemini.base_url)
    with pytest.raises(ModelRequestError):
        await model.generate(_request())


def test_no_key_at_all_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without GOOGLE_API_KEY, GEMINI_API_KEY or Vertex settings, building the model raises
    ModelConfigurationError (a ValueError, as before) naming what to set."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelConfigurationError, match="GOOGLE_API_KEY") as caught:
        GeminiModel(MODEL)
    assert isinstance(caught.value, ValueError) and caught.value.status is None


async def _model_step_attempts(client: Client, workflow_id: str) -> list[int]:
    """The attempt at which each model step of the run last started."""
    model_steps: set[int] = set()
    attempts: list[int] = []
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if (
                event.activity_task_scheduled_event_attributes.activity_type.name
                == "adk_model_step"
            ):
                model_steps.add(event.event_id)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            if started.scheduled_event_id in model_steps:
                attempts.append(started.attempt)
    return attempts


async def _fails_at_once(run_worker: WorkerFactory, models: ModelRegistry) -> str:
    """Run an agent on ``models``: the run fails with ModelConfigurationError after one
    attempt of its one step; returns the failure's message."""
    agent = Agent("g", MODEL)
    async with run_worker([agent], models=models) as rt:
        handle = await rt.adk.start("config", "u-1", f"s-{uuid.uuid4().hex[:8]}", "g", "hi")
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
        # Attempt 1 only: the worker's retry policy allows 10 (~5.5 minutes of back-off).
        assert await _model_step_attempts(rt.client, handle.workflow_id) == [1]
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "ModelConfigurationError"
    return str(cause)


@pytest.mark.parametrize(("status", "body"), REFUSALS)
async def test_a_refused_key_fails_the_run_at_once(
    run_worker: WorkerFactory, gemini: FakeGeminiServer, status: int, body: dict[str, Any]
) -> None:
    """Through a real worker, a refused key fails the model step on its first attempt,
    typed, saying what to set; the fake server saw one request."""
    gemini.enqueue_response(body, status=status)
    models = ModelRegistry()
    models.register(
        "gemini-*", lambda n: GeminiModel(n, api_key="AIza-not-a-key", base_url=gemini.base_url)
    )
    message = await _fails_at_once(run_worker, models)
    assert f"HTTP {status}" in message and "GOOGLE_API_KEY" in message
    assert len(gemini.requests) == 1


async def test_a_worker_without_a_key_fails_the_run_at_once(
    run_worker: WorkerFactory, gemini: FakeGeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real worker with no GOOGLE_API_KEY at all, the model step fails on its
    first attempt, typed, saying what to set; no request is made."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    models = ModelRegistry()
    models.register("gemini-*", lambda n: GeminiModel(n, base_url=gemini.base_url))
    message = await _fails_at_once(run_worker, models)
    assert "no credentials" in message and "GOOGLE_API_KEY" in message
    assert gemini.requests == []
