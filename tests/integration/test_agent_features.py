"""ADK agent features on Temporal: output_key, output_schema, include_contents="none",
generate_content_config, and token usage with a budget — through the real google-genai
client against the local fake Gemini server where the model's reply matters."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel

from adk_temporal.agents import Agent, SequentialAgent
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry
from adk_temporal.testing.fake_gemini import FakeGeminiServer

from ..commands import run_cli
from ..multi_agents import RecordingModel
from .conftest import WorkerFactory, gemini_models

pytestmark = pytest.mark.integration

APP = "features"
USER = "u-1"
MODEL = "gemini-2.5-flash"


class Forecast(BaseModel):
    """The forecaster's answer."""

    city: str
    high: int


def get_weather(city: str) -> dict[str, Any]:
    """Get the weather for a city.

    Args:
        city: The city.
    """
    return {"city": city, "high": 3}


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _forecaster(**kwargs: Any) -> Agent:
    return Agent(
        "forecaster",
        MODEL,
        "Answer with the forecast as JSON.",
        tools=[get_weather],
        output_key="forecast",
        output_schema=Forecast,
        generate_content_config=types.GenerateContentConfig(temperature=0.3),
        **kwargs,
    )


async def test_output_schema_valid_answer_is_stored_parsed_and_usage_is_summed(
    run_worker: WorkerFactory, gemini: FakeGeminiServer, dev_server: DevServer
) -> None:
    """The model is asked for JSON of the schema with the agent's own settings; the parsed
    answer lands under output_key; the tokens of both steps add up everywhere they show."""
    gemini.enqueue_function_call("get_weather", {"city": "Oslo"}, usage=(100, 10))
    gemini.enqueue_text('{"city": "Oslo", "high": 3}', usage=(130, 12))
    session_id = _session()
    async with run_worker([_forecaster()], models=gemini_models(gemini)) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "forecaster", "Oslo?")
        result = await handle.result()
        status = await handle.status()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
        shown = await run_cli(dev_server.address, "show", handle.workflow_id, "--json")
        text = await run_cli(dev_server.address, "show", handle.workflow_id)
    assert result.status == "completed"
    assert session.state["forecast"] == {"city": "Oslo", "high": 3}
    config = gemini.requests[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["temperature"] == 0.3
    schema = config.get("responseSchema") or config.get("responseJsonSchema")
    assert schema is not None and set(schema["properties"]) == {"city", "high"}
    totals = {"prompt_tokens": 230, "candidates_tokens": 22, "total_tokens": 252}
    assert result.usage.model_dump() == totals
    assert status.usage.model_dump() == totals
    assert json.loads(shown.stdout)["usage"] == totals
    assert "tokens   252 (230 prompt, 22 candidates)" in text.stdout
    model_events = [e for e in session.events if e.author == "forecaster" and e.usage_metadata]
    assert [e.usage_metadata.total_token_count for e in model_events if e.usage_metadata] == [
        110,
        142,
    ]


async def test_output_schema_invalid_answer_fails_the_invocation_and_keeps_the_answer(
    run_worker: WorkerFactory, gemini: FakeGeminiServer
) -> None:
    """An answer that is not JSON of the schema ends the invocation with OutputSchemaError;
    the answer stays in the session and nothing is written under output_key."""
    gemini.enqueue_text('{"city": "Oslo", "high": "warm"}')
    session_id = _session()
    async with run_worker([_forecaster()], models=gemini_models(gemini)) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "forecaster", "Oslo?")).result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.startswith("OutputSchemaError: agent 'forecaster'")
    assert "high: Input should be a valid integer" in result.error
    [answer] = [e for e in session.events if e.author == "forecaster"]
    assert answer.text() == '{"city": "Oslo", "high": "warm"}'
    assert answer.error_code == "OutputSchemaError"
    assert "forecast" not in session.state


async def test_token_budget_ends_the_invocation_after_the_step_that_went_over(
    run_worker: WorkerFactory, gemini: FakeGeminiServer
) -> None:
    """Past its budget the invocation fails with TokenBudgetExceeded; what the step
    produced is stored, and no further step runs."""
    gemini.enqueue_function_call("get_weather", {"city": "Oslo"}, usage=(100, 10))
    gemini.enqueue_function_call("get_weather", {"city": "Rome"}, usage=(150, 10))
    gemini.enqueue_text('{"city": "Rome", "high": 9}')
    session_id = _session()
    async with run_worker([_forecaster()], models=gemini_models(gemini)) as rt:
        handle = await rt.adk.start(
            APP, USER, session_id, "forecaster", "Oslo and Rome?", token_budget=200
        )
        result = await handle.result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    assert result.status == "failed"
    assert (
        result.error == "token budget of 200 exceeded: 270 tokens used (250 prompt, 20 candidates)"
    )
    assert result.usage.total_tokens == 270
    assert session.events[-1].error_code == "TokenBudgetExceeded"
    called = [c.args for e in session.events for c in e.function_calls()]
    assert called == [{"city": "Oslo"}, {"city": "Rome"}]
    answered = [r.response for e in session.events for r in e.function_responses()]
    assert answered == [{"city": "Oslo", "high": 3}]
    assert gemini.pending() == 1


async def test_include_contents_none_sends_only_the_current_turn(run_worker: WorkerFactory) -> None:
    """The reviewer (include_contents="none") sees only the drafter's latest output, in a
    session with an earlier turn; its text is stored under output_key."""
    drafter = RecordingModel(name="scripted:drafter", script=["draft one", "draft two"])
    # Seeing none of its own earlier turns, a scripted reviewer answers its first line again.
    reviewer = RecordingModel(name="scripted:reviewer", script=["looks fine", "never sent"])
    models = ModelRegistry()
    models.register("scripted:drafter", lambda _n: drafter)
    models.register("scripted:reviewer", lambda _n: reviewer)
    pipeline = SequentialAgent(
        "pipeline",
        sub_agents=[
            Agent("drafter", "scripted:drafter"),
            Agent("reviewer", "scripted:reviewer", include_contents="none", output_key="review"),
        ],
    )
    session_id = _session()
    async with run_worker([pipeline], models=models) as rt:
        first = await (await rt.adk.start(APP, USER, session_id, "pipeline", "topic A")).result()
        second = await (await rt.adk.start(APP, USER, session_id, "pipeline", "topic B")).result()
        session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    assert (first.status, second.status) == ("completed", "completed")
    seen = [p.text for c in reviewer.requests[-1].contents for p in c.parts or ()]
    assert seen == ["For context:", "[drafter] said: draft two"]
    drafter_seen = [p.text for c in drafter.requests[-1].contents for p in c.parts or ()]
    assert "topic A" in drafter_seen
    reviews = [e.actions.state_delta for e in session.events if e.author == "reviewer"]
    assert reviews == [{"review": "looks fine"}, {"review": "looks fine"}]
    assert session.state["review"] == "looks fine"
