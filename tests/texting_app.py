"""An agent whose tools wait on gates in a directory: a second message can be sent while
the first invocation is in a slow tool, from this process or a worker process.

``task <label>`` makes the model call ``mark(label)`` (records ``marked:<label>`` in state at
once) and ``slow_step(label)`` (waits until ``<dir>/open-<label>`` exists) in parallel; the
model then sums up ``done <label>``. Every call of a tool is a line in ``<dir>/calls.jsonl``,
so a test counts how often each ran. The directory is ``$ADK_TEXTING_DIR``.
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.context import ToolContext
from adk_temporal.models import ModelRegistry, ScriptedModel, default_registry
from adk_temporal.models.scripted import ScriptedCall, ScriptedRule
from adk_temporal.tools import tool

TEXTING_APP = "texting"
DIR_ENV = "ADK_TEXTING_DIR"


def _dir() -> Path:
    return Path(os.environ[DIR_ENV])


def _record(name: str, label: str) -> None:
    with (_dir() / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps({"tool": name, "label": label}) + "\n")


def calls(directory: Path) -> list[tuple[str, str]]:
    """Every tool call so far, in order: ``(tool, label)``."""
    path = directory / "calls.jsonl"
    if not path.exists():
        return []
    return [(c["tool"], c["label"]) for c in map(json.loads, path.read_text().splitlines())]


def open_gate(directory: Path, label: str) -> None:
    """Let ``slow_step(label)`` finish."""
    (directory / f"open-{label}").touch()


def mark(label: str, ctx: ToolContext) -> dict[str, Any]:
    """Mark the task in the session's state."""
    _record("mark", label)
    ctx.state[f"marked:{label}"] = True
    return {"marked": label}


@tool(heartbeat_timeout=timedelta(seconds=3))
async def slow_step(label: str) -> dict[str, Any]:
    """Do the slow part of a task."""
    _record("slow_step", label)
    gate = _dir() / f"open-{label}"
    while not gate.exists():
        await asyncio.sleep(0.05)
    return {"done": label}


def models() -> ModelRegistry:
    """The default models plus ``scripted:texting``: ``task <label>`` calls both tools, their
    responses are summed up."""
    rule = ScriptedRule(
        r"task (?P<label>\w+)",
        [
            ScriptedCall("mark", {"label": "{label}"}),
            ScriptedCall("slow_step", {"label": "{label}"}),
        ],
    )
    registry = default_registry()
    registry.register(
        "scripted:texting",
        lambda name: ScriptedModel(
            [rule],
            name=name,
            summaries={"mark": "marked {marked}", "slow_step": "done {done}"},
        ),
    )
    return registry


def agent() -> Agent:
    """The agent the texting tests talk to."""
    return Agent(name="tasker", model="scripted:texting", tools=[mark, slow_step])


def app() -> App:
    """The app a worker process serves (``--app tests.texting_app:app``)."""
    return App(agents=[agent()], name=TEXTING_APP, models=models())
