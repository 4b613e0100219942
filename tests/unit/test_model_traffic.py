"""Model traffic rules as pure logic: reading a provider's wait, model limits, the bound on
a wait, and the in-process runner honouring a wait."""

from __future__ import annotations

import email.utils
from datetime import timedelta
from typing import Any

import pytest

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.errors import ModelUnavailableError
from adk_temporal.model_limits import (
    ModelLimit,
    ModelLimitError,
    limit_for,
    model_queue,
    parse_model_limit,
)
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry, ScriptedModel
from adk_temporal.models.retry_after import retry_after_seconds
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "body", "wait"),
    [
        ({"Retry-After": "2"}, None, 2.0),
        ({"retry-after": "1.5"}, None, 1.5),
        ({"Retry-After": email.utils.formatdate(NOW + 30, usegmt=True)}, None, 30.0),
        ({"Retry-After": email.utils.formatdate(NOW - 30, usegmt=True)}, None, 0.0),
        (
            None,
            {
                "error": {
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"}
                    ]
                }
            },
            27.0,
        ),
        (
            {"Retry-After": "5"},
            {
                "error": {
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "9s"}
                    ]
                }
            },
            9.0,
        ),
        ({"Retry-After": "soon"}, {"error": {"details": "nope"}}, None),
        (None, None, None),
    ],
    ids=["seconds", "fraction", "date", "past-date", "retry-info", "longer-wins", "junk", "none"],
)
def test_the_providers_wait_is_read_from_the_header_or_retry_info(
    headers: dict[str, str] | None, body: Any, wait: float | None
) -> None:
    """Retry-After in seconds or as an HTTP date, Gemini's RetryInfo; the longer wins; junk is
    no wait at all."""
    assert retry_after_seconds(headers, body, now=NOW) == wait


def test_the_error_names_the_wait_and_run_errors_carry_none_by_default() -> None:
    """ModelUnavailableError carries the provider's wait and says it; other run errors
    leave the back-off to the retry policy."""
    err = ModelUnavailableError(429, "quota", retry_after=2.0)
    assert err.retry_after == 2.0
    assert str(err) == "model unavailable (HTTP 429): quota; the provider asks to retry after 2 s"
    assert ModelUnavailableError(503, "busy").retry_after is None


@pytest.mark.parametrize(
    ("spec", "limit"),
    [
        ("gemini-*=5/s", ModelLimit("gemini-*", 5.0)),
        ("gemini-*=5/s,4", ModelLimit("gemini-*", 5.0, 4)),
        ("gemini-2.5-pro=0.5,1@pro", ModelLimit("gemini-2.5-pro", 0.5, 1, "pro")),
        ("claude-*=,2", ModelLimit("claude-*", None, 2)),
    ],
)
def test_model_limits_parse_from_the_worker_flag(spec: str, limit: ModelLimit) -> None:
    """PATTERN=RATE/s[,CONCURRENCY][@NAME]."""
    assert parse_model_limit(spec) == limit


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("gemini-*", "expected PATTERN=RATE/s"),
        ("gemini-*=", "expected PATTERN=RATE/s"),
        ("gemini-*=fast", "expected PATTERN=RATE/s"),
        ("gemini-*=0/s", "requests_per_second must be above 0"),
        ("gemini-*=1/s,0", "concurrency must be at least 1"),
        ("=1/s", "needs a model-name pattern"),
    ],
)
def test_malformed_model_limits_are_refused_naming_the_problem(spec: str, problem: str) -> None:
    """A typed error (a ValueError) that says what is wrong."""
    with pytest.raises(ModelLimitError, match=problem) as caught:
        parse_model_limit(spec)
    assert isinstance(caught.value, ValueError)


def test_the_first_matching_limit_applies_and_names_its_queue() -> None:
    """Limits are matched in order; the queue sits beside the invocations' task queue."""
    limits = [ModelLimit("gemini-2.5-pro", 1), ModelLimit("gemini-*", 5)]
    assert limit_for(limits, "gemini-2.5-pro") == limits[0]
    assert limit_for(limits, "gemini-2.5-flash") == limits[1]
    assert limit_for(limits, "claude-3") is None
    assert limits[1].group == "gemini"
    assert model_queue("adk-temporal", limits[0].group) == "adk-temporal/models/gemini-2.5-pro"


class _Limited(ScriptedModel):
    """Answers 429 with a long wait the first time, then as scripted."""

    calls = 0

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Refuse once, asking for a day's wait, then reply."""
        type(self).calls += 1
        if type(self).calls == 1:
            raise ModelUnavailableError(429, "quota", retry_after=86_400.0)
        return await super().generate(request)


async def test_a_wait_beyond_the_workers_bound_is_shortened_and_honoured_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A provider asking for a day is held to the bound (here 0.05 s): the runner waits
    that long, not the policy's back-off, and the step succeeds on its second attempt."""
    slept: list[float] = []
    real_sleep = __import__("asyncio").sleep

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr("adk_temporal.runner.asyncio.sleep", sleep)
    _Limited.calls = 0
    models = ModelRegistry()
    models.register("scripted:limited", lambda n: _Limited(name=n, script=["fine"]))
    runner = Runner(
        App(
            [Agent("agent", "scripted:limited")],
            models=models,
            max_retry_after=timedelta(milliseconds=50),
        ),
        stores=Stores(InMemorySessionService()),
    )
    result = await runner.run("app", "u", "s", "agent", "hi")
    assert (result.status, result.final_text) == ("completed", "fine")
    assert _Limited.calls == 2
    assert slept == [0.05]
