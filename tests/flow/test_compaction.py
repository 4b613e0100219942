"""Events compaction on the in-process runner: the summary replaces the older turns in the
model's view, the raw events stay stored, and a pending approval survives a compaction.

Ported from ADK-Python's tests/unittests/apps/test_compaction.py (compaction after every
``compaction_interval`` invocations) and tests/unittests/flows/llm_flows/test_contents.py
(the summary in place of the compacted events); the pause rule answers ADK #4740.
"""

from __future__ import annotations

import uuid

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.compaction import DEFAULT_COMPACTION_PROMPT, EventsCompactionConfig
from adk_temporal.ids import SessionKey
from adk_temporal.summarizers import FunctionSummarizer
from adk_temporal.tools import FunctionTool
from tests.adk_models import queue_registry

from .conftest import LocalFactory

APP, USER = "app", "u-1"


def _texts(contents: list[types.Content]) -> list[str]:
    return [p.text or "" for c in contents for p in c.parts or [] if p.text]


async def test_every_second_invocation_compacts_and_the_next_turn_reads_the_summary(
    run_local: LocalFactory,
) -> None:
    """Two turns, then the summarizer (the agent's model, with the documented prompt) runs;
    the third turn's model sees the summary and its own message only, while the session
    still stores every raw event and the summarizer's tokens count in the invocation's."""
    replies = ["answer one", "answer two", "SUMMARY of one and two", "answer three"]
    models, model = queue_registry("m", replies)
    config = EventsCompactionConfig(compaction_interval=2)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local(
        [Agent(name="agent", model="m")], models=models, events_compaction_config=config
    ) as rt:
        for message in ("one", "two", "three"):
            result = await rt.adk.run(*key, "agent", message)
            assert result.status == "completed"
        summary_request, third = model.requests[2], model.requests[3]
        assert _texts(summary_request.contents)[0].startswith(DEFAULT_COMPACTION_PROMPT)
        assert _texts(third.contents) == ["SUMMARY of one and two", "three"]
        stored = (await rt.sessions.get(key)).events
        assert [e.text() for e in stored if e.author == "user" and e.text()] == [
            "one",
            "two",
            "three",
        ]
        assert sum(1 for e in stored if e.actions.compaction is not None) == 1


async def test_a_pending_approval_is_not_compacted_and_the_tool_reenters_once(
    run_local: LocalFactory,
) -> None:
    """Compaction triggers while an approval is pending: it covers only the turn before,
    the approval still works, the tool runs exactly once, and the model then sees its call
    and response next to the summary (ADK #4740 summarised the confirmation away)."""
    ran: list[str] = []

    def pay(amount: int) -> dict[str, str]:
        """Pay an amount."""
        ran.append(str(amount))
        return {"paid": str(amount)}

    call = types.FunctionCall(name="pay", args={"amount": 5})
    replies: list[str | types.FunctionCall] = ["hello", call, "SUMMARY: greeted", "paid 5"]
    models, model = queue_registry("m", replies)
    agent = Agent(name="agent", model="m", tools=[FunctionTool(pay, require_confirmation=True)])
    config = EventsCompactionConfig(compaction_interval=2)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local([agent], models=models, events_compaction_config=config) as rt:
        first = await rt.adk.run(*key, "agent", "hi")
        handle = await rt.adk.start(*key, "agent", "pay 5")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        (request,) = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        assert result.status == "completed", result
        assert ran == ["5"]
        stored = (await rt.sessions.get(key)).events
        (compaction,) = [e.actions.compaction for e in stored if e.actions.compaction]
        by_id = {e.id: e for e in stored}
        assert by_id[compaction.end_event_id].invocation_id == first.invocation_id
        last = model.requests[-1]
        assert _texts(last.contents)[:2] == ["SUMMARY: greeted", "pay 5"]
        parts = [p for c in last.contents for p in c.parts or []]
        assert any(p.function_call and p.function_call.name == "pay" for p in parts)
        assert any(p.function_response and p.function_response.name == "pay" for p in parts)


async def test_a_function_can_summarise(run_local: LocalFactory) -> None:
    """A plain function registered as the summarizer model gets the prompt and the
    conversation as text; what it returns is the summary the next turn reads."""
    seen: list[str] = []

    async def summarise(text: str) -> str:
        seen.append(text)
        return "users asked one and two"

    models, model = queue_registry("m", ["answer one", "answer two", "answer three"])
    models.register("by-function", lambda name: FunctionSummarizer(name, summarise))
    config = EventsCompactionConfig(compaction_interval=2, summarizer_model="by-function")
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local(
        [Agent(name="agent", model="m")], models=models, events_compaction_config=config
    ) as rt:
        for message in ("one", "two", "three"):
            assert (await rt.adk.run(*key, "agent", message)).status == "completed"
    [text] = seen
    assert text.startswith(DEFAULT_COMPACTION_PROMPT) and "answer two" in text
    assert _texts(model.requests[2].contents) == ["users asked one and two", "three"]
