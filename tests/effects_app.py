"""An app whose transfer tool has an effect nothing can deduplicate, for the in-doubt tests.

Every run of ``transfer`` (and of its compensating ``reverse``) appends a line to the file
``ADK_TEST_EFFECTS`` names, whatever its idempotency key: the test counts effects there.
``transfer`` notes a provider id in its receipt first, then makes its effect, then reaches
the fault point ``tool.after_side_effect``, where an armed worker dies.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.context import ToolContext
from adk_temporal.faults import fault_point
from adk_temporal.models import ModelRegistry, ScriptedModel, ScriptedReply
from adk_temporal.tools import tool

__all__ = ["APP_NAME", "EFFECTS_ENV", "app", "effects"]

APP_NAME = "transfers"
EFFECTS_ENV = "ADK_TEST_EFFECTS"


def _record(kind: str, key: str) -> int:
    """Append one effect; how many of ``kind`` there are now."""
    path = Path(os.environ[EFFECTS_ENV])
    with path.open("a+") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        ledger.write(json.dumps({"kind": kind, "key": key}) + "\n")
        ledger.flush()
        ledger.seek(0)
        return sum(1 for line in ledger if json.loads(line)["kind"] == kind)


def effects(path: Path) -> list[dict[str, str]]:
    """Every effect recorded so far, in order."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def lookup(account: str) -> dict[str, str]:
    """Look an account up (no effect)."""
    return {"account": account, "status": "open"}


async def reverse(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Reverse a transfer."""
    receipt = ctx.effect_receipt
    assert receipt is not None
    _record("reverse", str(receipt.details.get("provider_id")))
    return {"reversed": amount}


@tool(
    effects="external",
    compensate=reverse,
    # A lost worker's attempt times out soon, so the next one finds the call in doubt.
    start_to_close_timeout=timedelta(seconds=4),
)
async def transfer(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Transfer money: an effect no provider deduplicates."""
    await ctx.note_effect(provider_id=f"tr-{ctx.function_call_id[-6:]}")
    count = _record("transfer", ctx.idempotency_key)
    fault_point("tool.after_side_effect")
    return {"transferred": amount, "count": count}


def _models() -> ModelRegistry:
    script: list[ScriptedReply] = [
        types.FunctionCall(name="lookup", args={"account": "a-1"}),
        types.FunctionCall(name="transfer", args={"amount": 5}),
        "done",
    ]
    models = ModelRegistry()
    models.register("scripted:transfers", lambda n: ScriptedModel(name=n, script=script))
    return models


app = App(
    agents=[Agent("payer", "scripted:transfers", tools=[lookup, transfer])],
    name=APP_NAME,
    models=_models(),
)
