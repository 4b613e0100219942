"""The limits Temporal sets, measured: tool calls per invocation, large results, streaming.

Three parts, each printing its figures (the load average beside them):

1. **Tool calls.** One invocation whose model asks for K parallel ``lookup`` calls (~50 B
   each) per step until it made N (``--calls 4000 --per-step 10``), and one of single
   calls (``--sequential-calls 500``, K = 1): history events and bytes per tool call, how
   many calls the first run holds before Temporal suggests continuing as new, how many runs
   the invocation took, and whether it completed — on the App's defaults and with
   ``App.local_steps`` (``lookup`` local). Temporal's limits: 51,200 events and 50 MiB per
   run (it suggests continuing as new at 4 Ki events or 4 MiB... whichever it reports).
2. **Large results.** One invocation of 40 calls returning 1 MB each (4 steps × 10 at once):
   the run's history bytes (target < 100 KB: responses stay in the session store).
3. **Streaming beside an approval.** A parallel agent: one branch streams a long Gemini
   reply (the fake server, SSE), the other calls a tool that asks for approval. 12
   subscribers follow the session (``follow_session`` + ``with_partials``, the store's
   side channel, never a Temporal update), and while the reply streams the approval is sent
   by checked update: it must be accepted (Temporal allows 10 updates in flight per run;
   our subscribers hold none). Latency: the fake server writing an SSE event → each
   subscriber yielding the piece holding its last character (median, p90, max).

Run: ``python benchmarks/temporal_limits.py [--parts calls,large,stream]`` (writes
results/temporal_limits.json).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from _bare_sequence import small_result
from _common import (
    APP,
    LARGE_RESULT_BYTES,
    USER,
    connect,
    dev_server,
    finish,
    history_bytes,
    median,
    percentile,
    print_table,
    scratch_dir,
    write_results,
)
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.agents import Agent, ParallelAgent
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.dispatch import LocalSteps
from adk_temporal.following import StoreReads, follow_session, with_partials
from adk_temporal.ids import SessionKey
from adk_temporal.models import GeminiModel, LlmRequest, LlmResponse, ModelRegistry, ScriptedModel
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.testing.fake_gemini import FakeGeminiServer
from adk_temporal.tools import tool

SUBSCRIBERS = 12
REPLY_CHARS = 2400
CHUNK_CHARS = 24
CHUNK_DELAY = 0.03
LOCAL_MARKER = "core_local_activity"


def lookup(topic: str) -> dict[str, str]:
    """Look a topic up (returns ~50 B)."""
    return small_result(topic)


def fetch_large(topic: str) -> dict[str, str]:
    """Fetch a large document about a topic (returns ~1 MB)."""
    return {"topic": topic, "body": "x" * LARGE_RESULT_BYTES}


@tool(require_confirmation=True)
def place_order(item: str) -> dict[str, str]:
    """Place an order (a human approves it first)."""
    return {"ordered": item}


class FanOutModel:
    """Asks for K calls of its tool per step until N were made, then answers.

    The user says "N by K"; each call's topic is ``N/K#i``, so the next step reads where
    it stands from the last responses alone, whatever the session holds.
    """

    def __init__(self, name: str, tool_name: str) -> None:
        self.name = name
        self._tool = tool_name

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The next K calls, or the answer."""
        last = request.contents[-1].parts or []
        topics = [
            str((p.function_response.response or {})["topic"])
            for p in last
            if p.function_response is not None
        ]
        if topics:
            plan, _, done = max(topics, key=lambda t: int(t.split("#")[1])).partition("#")
            total, per = (int(x) for x in plan.split("/"))
            made = int(done)
        else:
            total, per = (int(x) for x in "".join(p.text or "" for p in last).split(" by "))
            made = 0
        if made >= total:
            part = [types.Part(text=f"made {made} calls")]
        else:
            part = [
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"c{i}", name=self._tool, args={"topic": f"{total}/{per}#{i}"}
                    )
                )
                for i in range(made + 1, min(made + per, total) + 1)
            ]
        return LlmResponse(content=types.Content(role="model", parts=part), finish_reason="STOP")


def limits_app(gemini: FakeGeminiServer, local: bool) -> App:
    """Agents ``fanout`` (lookup), ``large`` (fetch_large) and ``pair`` (a streaming
    writer beside a buyer whose order needs approval)."""
    models = ModelRegistry()
    models.register("instant:fanout", lambda n: FanOutModel(n, "lookup"))
    models.register("instant:large", lambda n: FanOutModel(n, "fetch_large"))
    models.register("gemini-*", lambda n: GeminiModel(n, api_key="bench", base_url=gemini.base_url))
    buy = [types.FunctionCall(name="place_order", args={"item": "a report"}), "ordered"]
    models.register("scripted:buyer", lambda n: ScriptedModel(name=n, script=buy))
    agents = [
        Agent("fanout", "instant:fanout", tools=[lookup]),
        Agent("large", "instant:large", tools=[fetch_large]),
        ParallelAgent(
            "pair",
            sub_agents=[
                Agent("writer", "gemini-2.5-flash", "Write."),
                Agent("buyer", "scripted:buyer", "Buy.", tools=[place_order]),
            ],
        ),
    ]
    steps = LocalSteps(tools={"lookup", "fetch_large"}) if local else None
    return App(agents, models=models, local_steps=steps)


def load() -> float:
    """The 1-minute load average now."""
    return os.getloadavg()[0]


async def runs_of(client: Client, workflow_id: str) -> list[list[HistoryEvent]]:
    """Every run of a workflow id, oldest first, as its history events."""
    ids = [wf.run_id async for wf in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    return [
        list((await client.get_workflow_handle(workflow_id, run_id=r).fetch_history()).events)
        for r in reversed(ids)
    ]


def tool_calls_in(events: list[HistoryEvent]) -> int:
    """Tool calls a run made: tool activities scheduled plus local ones recorded."""
    scheduled = sum(
        1
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == "adk_tool_call"
    )
    local = sum(
        1
        for e in events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == LOCAL_MARKER
        and b"adk_tool_call" in e.marker_recorded_event_attributes.details["data"].payloads[0].data
    )
    return scheduled + local


async def fan_out(adk: AdkClient, agent: str, calls: int, per_step: int) -> dict[str, Any]:
    """One invocation of ``calls`` calls, ``per_step`` at a time; its history per call."""
    session = f"{agent}-{calls}-{per_step}-{uuid.uuid4().hex[:6]}"
    began, first_load = time.perf_counter(), load()
    handle = await adk.start(
        APP, USER, session, agent, f"{calls} by {per_step}", max_steps=calls // per_step + 5
    )
    result = await handle.result()
    seconds = time.perf_counter() - began
    runs = await runs_of(adk.client, handle.workflow_id)
    events = sum(len(r) for r in runs)
    size = sum(history_bytes(r) for r in runs)
    return {
        "calls": calls,
        "per_step": per_step,
        "status": result.status,
        "answer": result.final_text,
        "runs": len(runs),
        "calls_in_first_run": tool_calls_in(runs[0]),
        "events_in_first_run": len(runs[0]),
        "events_per_call": events / calls,
        "bytes_per_call": size / calls,
        "largest_run_bytes": max(history_bytes(r) for r in runs),
        "seconds": seconds,
        "load": [first_load, load()],
    }


async def follower(
    sessions: SqliteSessionService,
    key: SessionKey,
    got: list[tuple[float, int]],
    final: list[str],
) -> None:
    """One subscriber: (time, characters so far) for every piece of the writer's reply, and
    the reply's stored text once it is stored."""
    reads = StoreReads()
    chars = 0
    stream = with_partials(sessions, key, follow_session(sessions, key, reads=reads), None, reads)
    async with contextlib.aclosing(stream) as events:
        async for event in events:
            if event.author != "writer":
                continue
            if event.partial:
                chars += len(event.text())
                got.append((time.perf_counter(), chars))
            elif event.text():
                final.append(event.text())


async def stream_beside_approval(
    adk: AdkClient, sessions: SqliteSessionService, gemini: FakeGeminiServer
) -> dict[str, Any]:
    """Part 3 (see the module docstring)."""
    reply = ("Clear skies over Oslo, a light northern wind, cold nights. " * 60)[:REPLY_CHARS]
    gemini.enqueue_text_stream(reply, chunk_chars=CHUNK_CHARS, delay_seconds=CHUNK_DELAY)
    session = f"pair-{uuid.uuid4().hex[:6]}"
    key = SessionKey(APP, USER, session)
    await sessions.create(key)
    first_event = gemini.events_sent
    got: list[list[tuple[float, int]]] = [[] for _ in range(SUBSCRIBERS)]
    finals: list[list[str]] = [[] for _ in range(SUBSCRIBERS)]
    followers = [
        asyncio.ensure_future(follower(sessions, key, g, f))
        for g, f in zip(got, finals, strict=True)
    ]
    handle = await adk.start(APP, USER, session, "pair", "go", stream=True)
    refused, accepted_while_streaming = await approve_while_streaming(handle, gemini, first_event)
    result = await handle.result()
    async with asyncio.timeout(30):  # the followers' last polls
        while not all(finals):
            await asyncio.sleep(0.05)
    for task in followers:
        task.cancel()
    await asyncio.gather(*followers, return_exceptions=True)
    sent = gemini.sent_at[first_event:]
    latencies = [
        at - sent[min(math.ceil(chars / CHUNK_CHARS), len(sent)) - 1]
        for pieces in got
        for at, chars in pieces
    ]
    return {
        "subscribers": SUBSCRIBERS,
        "status": result.status,
        "approval_refused": refused,
        "approval_accepted_while_streaming": accepted_while_streaming,
        "pieces_per_subscriber": [len(g) for g in got],
        "whole_reply_per_subscriber": [f == [reply] for f in finals],
        "streamed_chars_per_subscriber": [g[-1][1] if g else 0 for g in got],
        "latency_ms": {
            "median": median(latencies) * 1000,
            "p90": percentile(latencies, 90) * 1000,
            "max": max(latencies) * 1000 if latencies else float("nan"),
        },
        "load": load(),
    }


async def approve_while_streaming(
    handle: InvocationHandle, gemini: FakeGeminiServer, first_event: int
) -> tuple[int, bool]:
    """Approve the buyer's order by checked update once the writer's reply is streaming;
    (refusals, whether it was accepted before the reply's last chunk went out)."""
    async with asyncio.timeout(60):
        while gemini.events_sent <= first_event + 5:
            await asyncio.sleep(0.01)
        while not (pending := await handle.pending()):
            await asyncio.sleep(0.02)
    refused = 0
    try:
        await handle.confirm(pending[0].id, True)  # the checked update
    except Exception as err:  # any refusal is counted and shown
        print(f"approval refused: {type(err).__name__}: {err}")
        refused += 1
    return refused, gemini.events_sent < first_event + math.ceil(REPLY_CHARS / CHUNK_CHARS)


@asynccontextmanager
async def serving(
    client: Client, gemini: FakeGeminiServer, root: Path, local: bool
) -> AsyncIterator[tuple[AdkClient, SqliteSessionService]]:
    """A worker of :func:`limits_app` in this process, and a client of its queue."""
    queue = f"limits-{uuid.uuid4().hex[:8]}"
    sessions = SqliteSessionService(root / f"sessions-{local}.db")
    plugin = AdkPlugin(limits_app(gemini, local), stores=Stores(sessions))
    async with Worker(client, task_queue=queue, plugins=[plugin]):
        yield AdkClient(client, task_queue=queue, session_service=sessions), sessions
    await sessions.close()


async def main(options: argparse.Namespace) -> None:
    parts = options.parts.split(",")
    found: dict[str, Any] = {"load_at_start": load()}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server, FakeGeminiServer() as gemini:
        client = await connect(server.address)
        for local in (False, True):
            name = "local_steps" if local else "defaults"
            async with serving(client, gemini, Path(tmp), local) as (adk, sessions):
                if "calls" in parts:
                    found[f"calls_{name}"] = [
                        await fan_out(adk, "fanout", options.calls, options.per_step),
                        await fan_out(adk, "fanout", options.sequential_calls, 1),
                    ]
                if "large" in parts:
                    found[f"large_{name}"] = await fan_out(adk, "large", 40, 10)
                if "stream" in parts and not local:
                    found["stream"] = await stream_beside_approval(adk, sessions, gemini)
            print(f"{name} done (load {load():.1f})", flush=True)
    report(found)
    write_results("temporal_limits", found)


def report(found: dict[str, Any]) -> None:
    """Print the three parts' tables."""
    rows = [
        [
            key.removeprefix("calls_").removeprefix("large_"),
            r["calls"],
            r["per_step"],
            r["status"],
            r["runs"],
            r["calls_in_first_run"],
            r["events_per_call"],
            r["bytes_per_call"],
            r["largest_run_bytes"],
            r["seconds"],
            f"{r['load'][0]:.1f}-{r['load'][1]:.1f}",
        ]
        for key, value in found.items()
        if key.startswith(("calls_", "large_"))
        for r in (value if isinstance(value, list) else [value])
    ]
    if rows:
        print_table(
            "Tool calls in one invocation (history over all its runs)",
            [
                "",
                "calls",
                "per step",
                "status",
                "runs",
                "calls in run 1",
                "events/call",
                "bytes/call",
                "largest run B",
                "s",
                "load",
            ],
            rows,
        )
    stream = found.get("stream")
    if stream is not None:
        print(
            f"\nstreaming to {stream['subscribers']} subscribers beside an approval by checked "
            f"update: {stream['status']}, approvals refused {stream['approval_refused']}, "
            f"accepted while streaming {stream['approval_accepted_while_streaming']}, every "
            f"subscriber got the whole reply {all(stream['whole_reply_per_subscriber'])}; "
            f"latency median {stream['latency_ms']['median']:.0f} ms, p90 "
            f"{stream['latency_ms']['p90']:.0f} ms, max {stream['latency_ms']['max']:.0f} ms "
            f"(load {stream['load']:.1f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--parts", default="calls,large,stream")
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--per-step", type=int, default=10)
    parser.add_argument("--sequential-calls", type=int, default=500)
    asyncio.run(main(parser.parse_args()))
    finish()
