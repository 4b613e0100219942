"""The App is the one configuration: every setting of one App takes effect in-process, and
the Temporal plugin built from the same App reads each setting from it (issue 42, item 2).

Before, the CLI's in-process paths re-spelled the App as keyword arguments and dropped four
settings (``request_timeout``, ``max_retry_after``, ``token_budgets``,
``events_compaction_config``); here one App with every field set drives a ``Runner`` through
a compaction, a Retry-After bound, an expired request, a memory search and a budget pause.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.compaction import DEFAULT_COMPACTION_PROMPT, EventsCompactionConfig
from adk_temporal.context import ToolContext
from adk_temporal.errors import AppNotServedError, ModelUnavailableError
from adk_temporal.flow.budget_requests import BUDGET_TOOL
from adk_temporal.ids import SessionKey
from adk_temporal.memory import InMemoryMemoryService
from adk_temporal.model_limits import ModelLimit
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.notifications import Notifications
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService, Session
from adk_temporal.usage import TokenBudgets

APP = "configured"
MODEL = "scripted:configured"
TOKENS = 100


def _last_user_turn(request: LlmRequest) -> tuple[str, bool]:
    """The text of the turn's user message, and whether a tool already answered in it."""
    answered = False
    for content in reversed(request.contents):
        parts = content.parts or []
        if content.role == "user" and any(p.text for p in parts):
            return next(p.text or "" for p in parts if p.text), answered
        answered = answered or any(p.function_response for p in parts)
    return "", answered


class _Model:
    """Replies by the turn's message, each reply costing :data:`TOKENS` tokens: ``buy`` and
    ``recall`` call their tools, ``flaky`` answers 429 asking for a day once, a compaction
    prompt gets a summary."""

    def __init__(self) -> None:
        self.requests: list[LlmRequest] = []
        self.refused = 0

    @property
    def name(self) -> str:
        return MODEL

    async def generate(self, request: LlmRequest) -> LlmResponse:
        self.requests.append(request)
        text, answered = _last_user_turn(request)
        if text.startswith(DEFAULT_COMPACTION_PROMPT):
            return self._reply(types.Part(text="SUMMARY"))
        if text == "flaky" and not self.refused:
            self.refused += 1
            raise ModelUnavailableError(429, "quota", retry_after=86_400.0)
        if text in ("buy", "recall") and not answered:
            return self._reply(types.Part(function_call=types.FunctionCall(name=text, args={})))
        return self._reply(types.Part(text=f"ok {text}"))

    @staticmethod
    def _reply(part: types.Part) -> LlmResponse:
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=TOKENS - 10, candidates_token_count=10, total_token_count=TOKENS
        )
        return LlmResponse(content=types.Content(role="model", parts=[part]), usage=usage)


async def buy(ctx: ToolContext) -> dict[str, Any]:
    """Buy, once approved; the request names no deadline of its own."""
    decision = ctx.tool_confirmation
    if decision is None:
        ctx.request_confirmation("buy?")
        return {"status": "waiting for approval"}
    return {"confirmed": decision.confirmed, "expired": decision.expired}


async def recall(ctx: ToolContext) -> dict[str, Any]:
    """Search the user's memory."""
    found = await ctx.search_memory("hangzhou")
    return {"memories": len(found.memories)}


def _app(model: _Model) -> App:
    """An App with every field set."""
    models = ModelRegistry()
    models.register(MODEL, lambda _name: model)
    return App(
        agents=[Agent("assistant", MODEL, tools=[buy, recall])],
        name=APP,
        models=models,
        memory_service=InMemoryMemoryService(),
        request_timeout=timedelta(milliseconds=200),
        notifications=Notifications(["http://127.0.0.1:9/never"], secret=b"s" * 32),
        model_limits=[ModelLimit("scripted:*", requests_per_second=1.0)],
        max_retry_after=timedelta(milliseconds=50),
        token_budgets=TokenBudgets(session=TOKENS * 8),
        events_compaction_config=EventsCompactionConfig(compaction_interval=2),
    )


def _responses(session: Session, name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {})
        for e in session.events
        for r in e.function_responses()
        if r.name == name
    ]


async def test_every_app_setting_takes_effect_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """One App drives the runner: Retry-After held to 50 ms, a compaction after every second
    invocation, an unanswered request expiring after 200 ms, a memory search, and the
    session's token budget pausing a later turn; the Temporal-only settings (notifications,
    model limits) change nothing in-process."""
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr("adk_temporal.runner.asyncio.sleep", sleep)
    model = _Model()
    sessions = InMemorySessionService()
    runner = Runner(_app(model), stores=Stores(sessions))
    key = SessionKey(APP, "u-1", f"s-{uuid.uuid4().hex[:8]}")

    flaky = await runner.run(*key, "assistant", "flaky")
    assert (flaky.status, flaky.final_text, model.refused) == ("completed", "ok flaky", 1)
    assert slept == [0.05]
    assert (await runner.run(*key, "assistant", "recall")).status == "completed"
    bought = await runner.start(*key, "assistant", "buy")
    assert (await bought.result()).status == "completed"

    session = await sessions.get(key)
    assert _responses(session, "recall") == [{"memories": 0}]
    assert _responses(session, "buy")[-1] == {"confirmed": False, "expired": True}
    assert any(e.actions.compaction is not None for e in session.events)
    assert any(_last_user_turn(r)[0].startswith(DEFAULT_COMPACTION_PROMPT) for r in model.requests)

    paused = None
    for turn in range(8):
        run = await runner.start(*key, "assistant", f"turn {turn}")
        status = await run.wait_for_status("completed", "awaiting_input", timeout=30)
        if status.status == "awaiting_input":
            paused = run
            break
    assert paused is not None, "the session budget never paused a turn"
    [request] = await paused.pending()
    await paused.cancel()
    assert (request.tool, request.args["scope"]) == (BUDGET_TOOL, "session")


async def test_a_named_apps_runner_refuses_another_app() -> None:
    """A runner of app "configured" refuses a run of app "other" before anything runs."""
    model = _Model()
    sessions = InMemorySessionService()
    runner = Runner(_app(model), stores=Stores(sessions))
    with pytest.raises(AppNotServedError, match="serves app 'configured', not 'other'"):
        await runner.start("other", "u-1", "s-1", "assistant", "hi")
    assert model.requests == []


def test_the_plugin_reads_every_setting_from_the_same_app() -> None:
    """AdkPlugin built from the App serves its agents, models, stores and every setting
    under the App's own names, the Temporal-only ones included."""
    from adk_temporal.plugin import AdkPlugin

    model = _Model()
    app = _app(model)
    sessions = InMemorySessionService()
    services = AdkPlugin(app, stores=Stores(sessions)).services
    assert services.app is app
    assert services.sessions is sessions and services.artifacts is None
    assert services.models is app.models and services.app_name == APP
    assert list(services.agents) == ["assistant"]
    assert services.model_group(MODEL) == "scripted"
    assert services.notify is not None and services.notify.events == ["paused"]
    in_process = Runner(app, stores=Stores(sessions)).services
    assert in_process.notify is None and in_process.model_group(MODEL) is None
