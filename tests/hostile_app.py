"""The agents of the hostile-input tests, served by real ``adk-temporal worker`` processes.

Every tool records each run of its side effect in the ledger file named by
``HOSTILE_LEDGER``, so a test counts side effects across worker processes and retries.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from google.genai import types
from temporalio.common import RetryPolicy

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.context import ToolContext
from adk_temporal.errors import ToolError
from adk_temporal.models import GeminiModel, ModelFactory, ModelRegistry, ScriptedModel
from adk_temporal.tools import tool

LEDGER_ENV = "HOSTILE_LEDGER"
"""Names the file each side effect appends a line to."""

GEMINI_ENV = "HOSTILE_GEMINI_URL"
"""Where the ``gemini-*`` models of this app send requests."""

BIG = 1_200_000
"""Bytes of each of the two parallel large results (together over Temporal's 2 MB)."""

HUGE_REPLY = 2_500_000
"""Bytes of the model replies over every budget (and over Temporal's 2 MB payload limit)."""

FAST_RETRIES = RetryPolicy(
    maximum_attempts=5, initial_interval=timedelta(milliseconds=100), backoff_coefficient=2.0
)


def record(effect: str) -> None:
    """Append one side effect to the ledger."""
    with open(Path(os.environ[LEDGER_ENV]), "a") as ledger:
        ledger.write(effect + "\n")


def effects(path: Path) -> list[str]:
    """The side effects recorded so far, in order."""
    return path.read_text().split() if path.exists() else []


def big_result(n: int) -> dict[str, Any]:
    """Fetch a large result.

    Args:
        n: Which one.
    """
    record(f"big:{n}")
    return {"n": n, "body": "x" * BIG}


async def pay(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Pay an amount, once a human approved.

    Args:
        amount: How much.
    """
    if ctx.tool_confirmation is None:
        ctx.request_confirmation(hint=f"Pay {amount}?", payload={"amount": amount})
        return {"status": "waiting for approval"}
    if not ctx.tool_confirmation.confirmed:
        return {"status": "rejected"}
    record(f"pay:{amount}")
    return {"status": "paid", "amount": amount}


RELEASE_ENV = "HOSTILE_RELEASE"
"""Names the file whose appearance lets ``slow_charge`` return."""


def slow_charge(amount: int) -> dict[str, Any]:
    """Charge an amount, then wait for the bank's answer.

    Args:
        amount: How much.
    """
    record(f"slow_charge:{amount}")
    release = Path(os.environ[RELEASE_ENV])
    for _ in range(600):
        if release.exists():
            break
        time.sleep(0.05)
    return {"status": "charged", "amount": amount}


def bad_state(ctx: ToolContext) -> dict[str, str]:
    """Write state JSON cannot hold."""
    record("bad_state")
    ctx.state["w"] = object()
    return {"status": "written"}


def huge() -> dict[str, str]:
    """Return a 3 MB string."""
    record("huge")
    return {"body": "y" * 3_000_000}


@tool(retry_policy=FAST_RETRIES)
def flaky() -> dict[str, str]:
    """Call a service that is down."""
    record("flaky")
    raise ConnectionError("ledger service unreachable")


@tool(retry_policy=FAST_RETRIES)
def refuses() -> dict[str, str]:
    """Charge a card that is declined."""
    record("refuses")
    raise ToolError("card declined")


async def save_large(ctx: ToolContext) -> dict[str, int]:
    """Save a 30 MB artifact."""
    record("save_large")
    assert ctx.artifacts is not None
    part = types.Part.from_bytes(data=b"\0" * 30_000_000, mime_type="application/octet-stream")
    return {"version": await ctx.artifacts.save("large.bin", part)}


def _call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


_SCRIPTS: dict[str, tuple[list[Any], list[Any]]] = {
    "big_pair": ([big_result], [[_call("big_result", n=1), _call("big_result", n=2)], "done"]),
    "pay_pair": ([pay], [[_call("pay", amount=1), _call("pay", amount=2)], "done"]),
    "bad_state": ([bad_state], [_call("bad_state"), "done"]),
    "huge": ([huge], [_call("huge"), "done"]),
    "flaky": ([flaky], [_call("flaky"), "done"]),
    "refuses": ([refuses], [_call("refuses"), "done"]),
    "save_large": ([save_large], [_call("save_large"), "done"]),
    "slow_charge": ([slow_charge], [_call("slow_charge", amount=5), "done"]),
    "wordy": ([], ["z" * HUGE_REPLY]),
    "wordy_call": ([], [_call("echo", blob="z" * HUGE_REPLY)]),
}


def _scripted(script: list[Any]) -> ModelFactory:
    """Builds scripted models that reply with ``script``."""
    return lambda name: ScriptedModel(name=name, script=script)


def _app() -> App:
    models = ModelRegistry()
    agents = []
    for name, (tools, script) in _SCRIPTS.items():
        model = f"scripted:{name}"
        models.register(model, _scripted(script))
        agents.append(Agent(name, model, tools=tools))
    models.register(
        "gemini-*",
        lambda n: GeminiModel(n, api_key="test", base_url=os.environ.get(GEMINI_ENV, "")),
    )
    agents.append(Agent("gemini_agent", "gemini-2.5-flash"))
    return App(agents=agents, models=models)


app = _app()
"""What ``adk-temporal worker --app tests.hostile_app:app`` serves."""
