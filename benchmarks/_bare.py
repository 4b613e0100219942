"""The bare baseline: a plain Temporal workflow with the control flow of an ADK turn.

A turn of the ADK agent under test is: a model step that asks for K parallel tool calls, the
K tool calls (~1 KB result each), and a model step that answers with text. ``BareWorkflow``
runs exactly that activity schedule with no-op activities and nothing else (no session
store, no search attributes, no events), so comparing against it isolates what the ADK
runtime adds. It runs either one turn per workflow run (like an ADK invocation) or every
turn of a session in one run (like Temporal's official ADK plugin).

Given ``status``, it also keeps the one piece of visibility an invocation must (the
architecture's ``AdkStatus``): the caller starts it with the five ADK search attributes and
it sets ``AdkStatus`` to ``completed`` before it returns, so a comparison against it shows
what is left once that bookkeeping is counted on both sides.

Kept apart from ``_common`` on purpose: the workflow sandbox re-imports this module for each
run, so it imports nothing but temporalio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.common import SearchAttributeKey

__all__ = [
    "BARE_ACTIVITIES",
    "MODEL_ACTIVITY",
    "STATUS_KEY",
    "TOOL_ACTIVITY",
    "TOOL_RESULT_CHARS",
    "BareCall",
    "BareInput",
    "BareModelInput",
    "BareModelReply",
    "BareWorkflow",
    "tool_result",
]

TOOL_RESULT_CHARS = 1000
"""Length of the text every tool returns, so each tool result is about 1 KB."""

MODEL_ACTIVITY = "bare_model"
"""Activity type of the bare model step."""

TOOL_ACTIVITY = "bare_tool"
"""Activity type of the bare tool call."""

STATUS_KEY = SearchAttributeKey.for_keyword("AdkStatus")
"""The search attribute an invocation sets as it ends (``BareInput.status``)."""

_TIMEOUT = timedelta(seconds=120)
_TEXT = ("The quick brown fox jumps over the lazy dog. " * 23)[:TOOL_RESULT_CHARS]


def tool_result(topic: str) -> dict[str, str]:
    """The ~1 KB response of every benchmark tool, ADK's and the bare one alike."""
    return {"topic": topic, "text": _TEXT}


@dataclass
class BareCall:
    """A function call as the bare model returns it."""

    id: str
    name: str
    args: dict[str, str]


@dataclass
class BareModelInput:
    """What the bare model step gets: where it is, and how many calls to ask for."""

    turn: int
    tools: int
    final: bool


@dataclass
class BareModelReply:
    """The bare model's reply: calls to run, or the turn's final text."""

    calls: list[BareCall] = field(default_factory=list)
    text: str = ""


@dataclass
class BareInput:
    """Start input of ``BareWorkflow``: ``turns`` turns of ``tools`` calls each."""

    turns: int
    tools: int
    first_turn: int = 1
    status: bool = False
    """Set ``AdkStatus`` to ``completed`` before returning, as an invocation does."""


@activity.defn(name=MODEL_ACTIVITY)
async def bare_model(inp: BareModelInput) -> BareModelReply:
    """An instant model: K calls for the first step of a turn, a short text for the last."""
    if inp.final:
        return BareModelReply(text=f"Found t{inp.turn}.")
    return BareModelReply(
        calls=[
            BareCall(id=f"call-{i}", name="lookup", args={"topic": f"t{inp.turn}-{i}"})
            for i in range(1, inp.tools + 1)
        ]
    )


@activity.defn(name=TOOL_ACTIVITY)
async def bare_tool(call: BareCall) -> dict[str, str]:
    """An instant tool returning ~1 KB."""
    return tool_result(call.args["topic"])


BARE_ACTIVITIES: list[Callable[..., Any]] = [bare_model, bare_tool]
"""The activities ``BareWorkflow`` needs on the worker."""


@workflow.defn(name="BareWorkflow")
class BareWorkflow:
    """Runs ``turns`` turns of: model step, K parallel tool calls, final model step."""

    @workflow.run
    async def run(self, inp: BareInput) -> int:
        """Run the turns; returns the number of tool calls made."""
        made = 0
        for turn in range(inp.first_turn, inp.first_turn + inp.turns):
            reply = await self._model(BareModelInput(turn=turn, tools=inp.tools, final=False))
            await asyncio.gather(
                *(
                    workflow.execute_activity(bare_tool, call, start_to_close_timeout=_TIMEOUT)
                    for call in reply.calls
                )
            )
            made += len(reply.calls)
            await self._model(BareModelInput(turn=turn, tools=inp.tools, final=True))
        if inp.status:
            workflow.upsert_search_attributes([STATUS_KEY.value_set("completed")])
        return made

    async def _model(self, inp: BareModelInput) -> BareModelReply:
        return await workflow.execute_activity(bare_model, inp, start_to_close_timeout=_TIMEOUT)
