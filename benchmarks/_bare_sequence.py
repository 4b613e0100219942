"""The bare baseline of ``history_shape.py``: one turn of three model steps and two tool
calls, one call per step, each tool returning ~50 B.

Kept apart on purpose: the workflow sandbox re-imports this module for each run, so it
imports nothing but temporalio.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

__all__ = [
    "CALLS_PER_TURN",
    "SEQUENCE_ACTIVITIES",
    "BareSequence",
    "small_result",
]

CALLS_PER_TURN = 2
"""Tool calls per turn, one per model step; the turn's last model step answers."""

_TIMEOUT = timedelta(seconds=120)


def small_result(topic: str) -> dict[str, str]:
    """The ~50 B result of every tool of the shape, ours and the bare one alike."""
    return {"topic": topic, "answer": "found, nothing unusual"}


@activity.defn(name="bare_sequence_model")
async def bare_sequence_model(turn: int, step: int) -> dict[str, Any]:
    """The bare model step: a call while the turn has fewer than two results, then text."""
    if step >= CALLS_PER_TURN:
        return {"text": f"Found t{turn}."}
    return {"call": {"id": f"call-t{turn}-{step + 1}", "name": "small_lookup"}}


@activity.defn(name="bare_sequence_tool")
async def bare_sequence_tool(topic: str) -> dict[str, str]:
    """The bare tool: the same ~50 B result."""
    return small_result(topic)


SEQUENCE_ACTIVITIES = [bare_sequence_model, bare_sequence_tool]
"""The activities ``BareSequence`` needs on the worker."""


@workflow.defn(name="BareSequence")
class BareSequence:
    """One turn: model step, tool, model step, tool, final model step."""

    @workflow.run
    async def run(self, turn: int) -> str:
        """Run the turn; returns the final text."""
        for step in range(CALLS_PER_TURN + 1):
            reply = await workflow.execute_activity(
                bare_sequence_model, args=[turn, step], start_to_close_timeout=_TIMEOUT
            )
            if "text" in reply:
                return str(reply["text"])
            await workflow.execute_activity(
                bare_sequence_tool, f"t{turn}-{step}", start_to_close_timeout=_TIMEOUT
            )
        return ""
