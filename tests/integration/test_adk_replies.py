"""Model replies as ADK reads them, on Temporal through a real worker (issue 28, item 8).

A thought-only reply makes the workflow step again (a model step whose result has no calls),
an empty reply ends the agent's turn with no event, and a model that only thinks stops at
the step limit. Every workflow task replays from history (``max_cached_workflows=0``), so
these runs also prove the new path deterministic.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmResponse, ModelRegistry, ScriptedModel, ScriptedReply

from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

APP = "replies"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _thought(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text, thought=True)])
    )


def _scripted(script: list[ScriptedReply]) -> Callable[[str], ScriptedModel]:
    return lambda name: ScriptedModel(name=name, script=script)


def _models(**scripts: list[ScriptedReply]) -> ModelRegistry:
    models = ModelRegistry()
    for name, script in scripts.items():
        models.register(f"scripted:{name}", _scripted(script))
    return models


async def test_thought_only_and_empty_replies_on_temporal(run_worker: WorkerFactory) -> None:
    """Thinking first, the agent answers at its second model step, the thought stored; an
    empty reply completes with no answer, no event and no output_key; a model that only
    thinks fails at the step limit (ADK-Go agent/llmagent/llmagent_test.go,
    TestThoughtOnlyTurnDoesNotEndInvocation; internal/llminternal/base_flow.go runOneStep)."""
    models = _models(
        thinker=[_thought("let me think"), "the answer"],
        quiet=[LlmResponse()],
        ponderer=[_thought(f"hmm {i}") for i in range(6)],
    )
    agents = [
        Agent("thinker", "scripted:thinker", output_key="answer"),
        Agent("quiet", "scripted:quiet", output_key="answer"),
        Agent("ponderer", "scripted:ponderer"),
    ]
    thinking, silent, pondering = _session(), _session(), _session()
    async with run_worker(agents, models=models) as rt:
        answered = await (await rt.adk.start(APP, USER, thinking, "thinker", "hi")).result()
        empty = await (await rt.adk.start(APP, USER, silent, "quiet", "hi")).result()
        stuck = await (
            await rt.adk.start(APP, USER, pondering, "ponderer", "hi", max_steps=3)
        ).result()
        thought = await rt.sessions.get(SessionKey(APP, USER, thinking))
        quiet = await rt.sessions.get(SessionKey(APP, USER, silent))
    assert (answered.status, answered.final_text, answered.steps) == ("completed", "the answer", 2)
    assert [[p.thought for p in e.parts()] for e in thought.events] == [[None], [True], [None]]
    assert thought.state == {"answer": "the answer"}
    assert (empty.status, empty.final_text, empty.steps) == ("completed", "", 1)
    assert [e.author for e in quiet.events] == ["user"]
    assert quiet.state == {}
    assert (stuck.status, stuck.steps) == ("failed", 3)
    assert stuck.error is not None and "step limit of 3" in stuck.error
