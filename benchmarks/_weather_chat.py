"""The weather chat of ``naive_schedule.py``: the agent, and its worker process.

A turn is three model steps and two sequential tool calls ("weather in A then B": the model
asks for A, reads the ~50 B forecast, asks for B, reads, answers), the shape where a
runtime's own round trips and bookkeeping are most of a turn. The bare workflow of the
same shape is ``_bare_sequence.BareSequence``.

Run as a script this module is one worker process serving one kind: ``ours`` (the App's
defaults, the SQLite store), ``ours_local`` (with ``App.local_steps``), ``ours_plain``
(also no group commit: the settings of the release before), or ``bare`` (the bare workflow
only). It records when each activity started (``time.perf_counter``, a clock all processes
of the machine share) and writes them to ``--timings`` when its stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from _bare_sequence import CALLS_PER_TURN, SEQUENCE_ACTIVITIES, BareSequence, small_result
from _common import connect, finish
from google.genai import types
from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    Worker,
)

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.dispatch import LocalSteps
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService

__all__ = ["AGENT", "KINDS", "MODEL_ACTIVITIES", "get_weather", "weather_app"]

AGENT = "weather_chat"
"""The agent every ``ours`` kind serves."""

KINDS = ("ours", "ours_local", "ours_plain", "bare")
"""What a worker process of this module can serve."""

MODEL_ACTIVITIES = ("adk_model_step", "bare_sequence_model")
"""Activity types of a model step, ours and the bare workflow's."""

_STARTS: list[tuple[str, str, float]] = []


def get_weather(city: str) -> dict[str, str]:
    """Get today's weather for a city (returns ~50 B)."""
    return small_result(city)


class ChatModel:
    """An instant model: one call per step until the turn has two forecasts, then text."""

    name = "instant:weather-chat"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The turn's next call, or the answer once both forecasts are in."""
        done, topic = 0, "t"
        for content in reversed(request.contents):
            texts = [p.text for p in content.parts or [] if p.text]
            if content.role == "user" and texts:
                topic = texts[0].removeprefix("weather in ")
                break
            done += sum(1 for p in content.parts or [] if p.function_response)
        if done >= CALLS_PER_TURN:
            part = types.Part(text=f"Found {topic}.")
        else:
            call = types.FunctionCall(
                id=f"call-{topic}-{done + 1}", name="get_weather", args={"city": f"{topic}-{done}"}
            )
            part = types.Part(function_call=call)
        return LlmResponse(content=types.Content(role="model", parts=[part]), finish_reason="STOP")


def weather_app(kind: str) -> App:
    """The app a kind serves: ``ours_local`` runs its short steps locally."""
    models = ModelRegistry()
    models.register(ChatModel.name, lambda _: ChatModel())
    agent = Agent(AGENT, ChatModel.name, tools=[get_weather])
    local = LocalSteps(tools={"get_weather"}) if kind == "ours_local" else None
    return App([agent], models=models, local_steps=local)


class _Timed(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _TimedActivity(next)


class _TimedActivity(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        _STARTS.append((info.workflow_run_id or "", info.activity_type, time.perf_counter()))
        return await super().execute_activity(input)


async def _serve(address: str, task_queue: str, data_dir: Path, kind: str, timings: Path) -> None:
    client = await connect(address)
    options: dict[str, Any] = {"interceptors": [_Timed()]}
    if kind == "bare":
        options.update(workflows=[BareSequence], activities=SEQUENCE_ACTIVITIES)
    else:
        store = SqliteSessionService(data_dir / "sessions.db", group_commit=kind != "ours_plain")
        options["plugins"] = [AdkPlugin(weather_app(kind), stores=Stores(store))]
    async with Worker(client, task_queue=task_queue, **options):
        print("ready", flush=True)
        # Waiting on stdin in a thread keeps the event loop free for the worker.
        await asyncio.to_thread(sys.stdin.read)
    timings.write_text(json.dumps(_STARTS))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="weather chat worker process")
    parser.add_argument("--address", required=True)
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--kind", required=True, choices=KINDS)
    parser.add_argument("--timings", required=True, type=Path)
    options = parser.parse_args()
    asyncio.run(
        _serve(options.address, options.task_queue, options.data_dir, options.kind, options.timings)
    )
    finish()
