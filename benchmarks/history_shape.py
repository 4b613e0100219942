"""History shape with small results: bytes of history per turn where bookkeeping dominates.

``history_growth.py`` measures turns whose two tool results are ~1 KB each, where payload
dominates. Here each turn is three model steps and two tool calls, one call per step (the
model asks, reads the ~50 B result, asks again, reads, answers), so what a turn adds is
mostly the fixed bookkeeping of each step and each run: ids, references, search attributes,
details and summaries. Ours: one invocation per turn; bare: a workflow per turn running the
same activities with the same payloads (``BareSequence``), on the same worker and server.

Run: ``python benchmarks/history_shape.py [--turns 10]`` (writes results/history_shape.json).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from statistics import median
from typing import Any

from _bare_sequence import CALLS_PER_TURN, SEQUENCE_ACTIVITIES, BareSequence, small_result
from _common import (
    APP,
    SERVER_NOTE,
    USER,
    breakdown,
    connect,
    dev_server,
    finish,
    history_bytes,
    print_table,
    scratch_dir,
    write_results,
)
from google.genai import types
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService

AGENT = "bench_sequence"


def small_lookup(topic: str) -> dict[str, str]:
    """Look a topic up (returns ~50 B)."""
    return small_result(topic)


class SequenceModel:
    """One call per step: asks ``small_lookup`` until the turn has two results, then answers."""

    name = "instant:sequence"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The next call of the turn, or the answer once both results are in."""
        done = 0
        topic = "t"
        for content in reversed(request.contents):
            texts = [p.text for p in content.parts or [] if p.text]
            if content.role == "user" and texts:
                topic = texts[0].removeprefix("look up ")
                break
            done += sum(1 for p in content.parts or [] if p.function_response)
        if done >= CALLS_PER_TURN:
            part = types.Part(text=f"Found {topic}.")
        else:
            call = types.FunctionCall(
                id=f"call-{topic}-{done + 1}",
                name="small_lookup",
                args={"topic": f"{topic}-{done}"},
            )
            part = types.Part(function_call=call)
        return LlmResponse(content=types.Content(role="model", parts=[part]), finish_reason="STOP")


async def _turns(client: Client, task_queue: str, turns: int) -> dict[str, list[list[Any]]]:
    adk = AdkClient(client, task_queue=task_queue)
    ours, bare = [], []
    for turn in range(1, turns + 1):
        handle = await adk.start(APP, USER, "shape", AGENT, f"look up t{turn}")
        result = await handle.result()
        if result.status != "completed":
            raise RuntimeError(f"turn {turn} ended {result.status}: {result.error}")
        ours.append(await client.get_workflow_handle(handle.workflow_id).fetch_history())
        started = await client.start_workflow(
            BareSequence.run, turn, id=f"bare-shape/{turn}", task_queue=task_queue
        )
        await started.result()
        bare.append(await started.fetch_history())
    return {
        "ours": [list(h.events) for h in ours],
        "bare": [list(h.events) for h in bare],
    }


async def main(turns: int) -> None:
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        models = ModelRegistry()
        models.register("instant:sequence", lambda _: SequenceModel())
        agent = Agent(AGENT, "instant:sequence", tools=[small_lookup])
        plugin = AdkPlugin(
            App([agent], models=models), stores=Stores(SqliteSessionService(Path(tmp) / "s.db"))
        )
        async with Worker(
            client,
            task_queue="bench-shape",
            plugins=[plugin],
            workflows=[BareSequence],
            activities=SEQUENCE_ACTIVITIES,
        ):
            runs = await _turns(client, "bench-shape", turns)
    # The first turn also creates the session and describes the agent: the steady turns
    # are the ones after it.
    sizes = {k: [history_bytes(events) for events in v] for k, v in runs.items()}
    steady = {k: median(v[1:]) for k, v in sizes.items()}
    ratio = steady["ours"] / steady["bare"]
    print(f"server: {SERVER_NOTE}")
    print_table(
        f"History per turn: {CALLS_PER_TURN + 1} model steps, {CALLS_PER_TURN} tool calls of ~50 B",
        ["turn", "ours B", "bare B", "ours/bare"],
        [
            [i + 1, o, b, o / b]
            for i, (o, b) in enumerate(zip(sizes["ours"], sizes["bare"], strict=True))
        ],
    )
    print(
        f"\nsteady turn (median of turns 2-{turns}): ours {steady['ours']:.0f} B, bare "
        f"{steady['bare']:.0f} B, ratio {ratio:.2f} (target <= 1.5)"
    )
    kinds = {k: breakdown(v[1]) for k, v in runs.items()}
    names = sorted(set(kinds["ours"]) | set(kinds["bare"]), key=lambda k: -kinds["ours"].get(k, 0))
    print_table(
        "Where turn 2's bytes go ('/payload' = payload data inside those events)",
        ["kind", "ours", "bare"],
        [[k, kinds["ours"].get(k, 0), kinds["bare"].get(k, 0)] for k in names],
    )
    write_results(
        "history_shape",
        {
            "turns": turns,
            "bytes_by_turn": sizes,
            "steady_turn_bytes": steady,
            "ratio": {"value": ratio, "target": "<= 1.5", "met": ratio <= 1.5},
            "breakdown_turn_2": kinds,
        },
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    asyncio.run(main(parser.parse_args().turns))
    finish()
