"""An agent's final answer as output: output_key, output_schema, and the request config."""

from __future__ import annotations

import pytest
from google.genai import types
from pydantic import BaseModel

from adk_temporal.agents import Agent
from adk_temporal.errors import OutputSchemaError
from adk_temporal.events import Event
from adk_temporal.output import record_output


class Forecast(BaseModel):
    """What the forecaster must answer."""

    city: str
    high: int
    note: str | None = None


def _answer(*parts: types.Part) -> Event:
    return Event(author="forecaster", content=types.Content(role="model", parts=list(parts)))


def test_output_key_stores_the_final_text_without_thoughts() -> None:
    """The text parts, joined, thoughts left out, land in the event's state delta."""
    agent = Agent("forecaster", "m", output_key="forecast")
    event = _answer(
        types.Part(text="thinking…", thought=True),
        types.Part(text="Sunny, "),
        types.Part(text="12"),
    )
    record_output(agent, event)
    assert event.actions.state_delta == {"forecast": "Sunny, 12"}


def test_output_schema_stores_the_parsed_value_without_nones() -> None:
    """A valid JSON answer is stored as its parsed value (None fields left out, as in ADK)."""
    agent = Agent("forecaster", "m", output_key="forecast", output_schema=Forecast)
    event = _answer(types.Part(text='{"city": "Oslo", "high": 3}'))
    record_output(agent, event)
    assert event.actions.state_delta == {"forecast": {"city": "Oslo", "high": 3}}


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"city": "Oslo"}', "high: Field required"),
        ('{"city": "Oslo", "high": "warm"}', "high: Input should be a valid integer"),
        ("Sunny in Oslo", "<root>: Invalid JSON"),
    ],
)
def test_output_schema_refuses_an_answer_that_does_not_match(answer: str, problem: str) -> None:
    """An invalid answer raises OutputSchemaError naming agent, schema and field; no delta."""
    agent = Agent("forecaster", "m", output_key="forecast", output_schema=Forecast)
    event = _answer(types.Part(text=answer))
    with pytest.raises(OutputSchemaError, match=problem) as caught:
        record_output(agent, event)
    assert "agent 'forecaster'" in str(caught.value)
    assert "output_schema Forecast" in str(caught.value)
    assert event.actions.state_delta == {}


def test_output_schema_with_an_empty_answer_stores_nothing() -> None:
    """As in ADK, an empty answer is not validated and not stored."""
    agent = Agent("forecaster", "m", output_key="forecast", output_schema=Forecast)
    event = _answer(types.Part(text="  "))
    record_output(agent, event)
    assert event.actions.state_delta == {}


def test_request_config_asks_for_json_of_the_schema_and_keeps_the_agents_config() -> None:
    """The model is asked for JSON of the schema; the agent's own settings pass through."""
    config = types.GenerateContentConfig(temperature=0.2)
    agent = Agent("forecaster", "m", output_schema=Forecast, generate_content_config=config)
    assert agent.request_config is not None
    assert agent.request_config.response_mime_type == "application/json"
    assert agent.request_config.response_schema is Forecast
    assert agent.request_config.temperature == 0.2
    assert config.response_schema is None
    assert Agent("plain", "m", generate_content_config=config).request_config is config


def test_agent_refuses_bad_output_and_contents_options() -> None:
    """A non-model output_schema or an unknown include_contents is refused, naming the agent."""
    with pytest.raises(TypeError, match="agent 'a': output_schema must be a pydantic model"):
        Agent("a", "m", output_schema=dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agent 'a': include_contents must be 'default' or"):
        Agent("a", "m", include_contents="all")  # type: ignore[arg-type]
