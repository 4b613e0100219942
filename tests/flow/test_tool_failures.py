"""Tool failures and values that cannot be kept (SPEC §3 edges), on the in-process runner.

The same rules hold on Temporal (``tests/integration/test_hostile_inputs.py``): a tool that
raises is retried under its retry policy and only then does the model see the error; a
``ToolError`` and invalid arguments reach the model at once; a value that cannot be encoded
or is over its budget becomes an error for that call, and the tool never runs again for it.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from google.genai import types
from temporalio.common import RetryPolicy

from adk_temporal.agents import Agent
from adk_temporal.budgets import Budgets
from adk_temporal.context import ToolContext
from adk_temporal.errors import BudgetExceededError, ToolError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry, ScriptedModel
from adk_temporal.tools import as_tool, tool

from .conftest import LocalFactory, LocalRuntime

APP = "edges"
USER = "u-1"
FAST = RetryPolicy(initial_interval=timedelta(milliseconds=10), maximum_attempts=4)


def _registry(script: list[Any]) -> ModelRegistry:
    models = ModelRegistry()
    models.register("scripted:edges", lambda n: ScriptedModel(name=n, script=script))
    return models


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.function_responses() if r.name == name
    ]


async def _run(run_local: LocalFactory, tools: list[Any], **runner: Any) -> list[Event]:
    call = types.FunctionCall(name=as_tool(tools[0]).name, args={})
    agent = Agent("edgy", "scripted:edges", tools=tools)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry([call, "done"]), **runner) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "edgy", "go")).result()
        assert result.status == "completed", result.error
        return await _events(rt, session_id)


async def test_a_raising_tool_is_retried_then_the_model_sees_the_error(
    run_local: LocalFactory,
) -> None:
    """ConnectionError on every attempt: the policy's 4 attempts run, then {"error": ...}."""
    attempts: list[int] = []

    @tool(retry_policy=FAST)
    def flaky() -> dict[str, str]:
        """Call a service that is down."""
        attempts.append(1)
        raise ConnectionError("payments API unreachable")

    events = await _run(run_local, [flaky])
    assert len(attempts) == 4
    assert _responses(events, "flaky") == [{"error": "payments API unreachable"}]


async def test_a_tool_that_recovers_on_retry_answers_normally(run_local: LocalFactory) -> None:
    """Two transient failures, then success: the model sees only the success."""
    attempts: list[int] = []

    @tool(retry_policy=FAST)
    def recovers() -> dict[str, int]:
        """Succeed on the third try."""
        attempts.append(1)
        if len(attempts) < 3:
            raise TimeoutError("slow")
        return {"attempts": len(attempts)}

    events = await _run(run_local, [recovers])
    assert _responses(events, "recovers") == [{"attempts": 3}]


async def test_a_tool_error_reaches_the_model_without_retries(run_local: LocalFactory) -> None:
    """ToolError means "no retry can fix this": one attempt."""
    attempts: list[int] = []

    @tool(retry_policy=FAST)
    def refuses() -> dict[str, str]:
        """Refuse."""
        attempts.append(1)
        raise ToolError("card declined")

    events = await _run(run_local, [refuses])
    assert len(attempts) == 1
    assert _responses(events, "refuses") == [{"error": "card declined"}]


async def test_on_failure_fail_invocation_fails_the_run(run_local: LocalFactory) -> None:
    """A tool declared on_failure="fail_invocation" fails the invocation after its attempts."""

    @tool(retry_policy=FAST, on_failure="fail_invocation")
    def critical() -> dict[str, str]:
        """Must work."""
        raise ConnectionError("ledger down")

    agent = Agent("edgy", "scripted:edges", tools=[critical])
    call = types.FunctionCall(name="critical", args={})
    async with run_local([agent], models=_registry([call, "done"])) as rt:
        result = await (await rt.adk.start(APP, USER, "s-fail", "edgy", "go")).result()
        events = await _events(rt, "s-fail")
    assert result.status == "failed"
    assert result.error == "ConnectionError: ledger down"
    assert events[-1].error_code == "ConnectionError"


@pytest.mark.parametrize(
    ("write", "reason"),
    [
        (lambda ctx: ctx.state.__setitem__("w", object()), "cannot be encoded as JSON"),
        (lambda ctx: ctx.state.__setitem__("w", float("nan")), "is NaN or infinite"),
        (lambda ctx: ctx.state.__setitem__("w", "x" * 300_000), "over the state_delta_bytes"),
    ],
    ids=["object", "nan", "oversized"],
)
async def test_state_that_cannot_be_kept_is_an_error_for_the_model_once(
    run_local: LocalFactory, write: Any, reason: str
) -> None:
    """The side effect runs once; the model learns why; no delta is stored."""
    runs: list[int] = []

    def writes(ctx: ToolContext) -> dict[str, str]:
        """Write state."""
        runs.append(1)
        write(ctx)
        return {"status": "written"}

    events = await _run(run_local, [writes])
    assert len(runs) == 1
    [response] = _responses(events, "writes")
    assert response["error"].startswith("tool writes returned what cannot be kept: ")
    assert reason in response["error"]
    assert all("w" not in e.actions.state_delta for e in events)


async def test_a_response_over_its_budget_is_an_error_for_the_model(
    run_local: LocalFactory,
) -> None:
    """tool_response_bytes bounds what a tool may return; the session keeps the error."""

    def dumps() -> dict[str, str]:
        """Return a lot."""
        return {"blob": "z" * 5000}

    events = await _run(run_local, [dumps], budgets=Budgets(tool_response_bytes=4096))
    [response] = _responses(events, "dumps")
    assert "the response is 5011 bytes, over the tool_response_bytes budget of 4096" in str(
        response
    )


async def test_a_message_over_its_budget_is_refused_before_anything_starts(
    run_local: LocalFactory,
) -> None:
    """message_bytes: the runner (like the client) refuses before a session is touched."""
    agent = Agent("edgy", "scripted:edges")
    async with run_local([agent], models=_registry(["hi"])) as rt:
        with pytest.raises(BudgetExceededError, match=r"the message is .* over the message_bytes"):
            await rt.adk.start(APP, USER, "s-big", "edgy", "m" * 300_000)
        assert await rt.sessions.list(APP, USER) == []


class _Counted(ScriptedModel):
    """A scripted model that counts its calls."""

    calls = 0

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Count the call, then reply as scripted."""
        type(self).calls += 1
        return await super().generate(request)


@pytest.mark.parametrize(
    "reply",
    [
        "z" * 600_000,
        types.FunctionCall(name="echo", args={"blob": "z" * 600_000}),
    ],
    ids=["text", "call-arguments"],
)
async def test_a_reply_over_its_budget_fails_the_step_at_once_and_stores_nothing(
    run_local: LocalFactory, reply: Any
) -> None:
    """A 600 KB reply (over model_reply_bytes): one model call, no retry, the failure
    names the budget, the reply is not stored; the next message in the session works."""
    _Counted.calls = 0
    models = ModelRegistry()
    models.register("scripted:big", lambda n: _Counted(name=n, script=[reply]))
    models.register("scripted:ok", lambda n: ScriptedModel(name=n, script=["fine"]))
    agents = [Agent("wordy", "scripted:big"), Agent("brief", "scripted:ok")]
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local(agents, models=models) as rt:
        failed = await (await rt.adk.start(APP, USER, session_id, "wordy", "go")).result()
        assert failed.status == "failed"
        assert failed.error is not None and "model_reply_bytes budget of 524288" in failed.error
        assert _Counted.calls == 1
        events = await _events(rt, session_id)
        assert all(len(e.model_dump_json()) < 10_000 for e in events)
        assert [e.error_code for e in events if e.error_code] == ["BudgetExceededError"]
        after = await (await rt.adk.start(APP, USER, session_id, "brief", "again")).result()
    assert (after.status, after.final_text) == ("completed", "fine")
