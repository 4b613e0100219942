"""Streaming: how soon a follower sees the model's first words, and what streaming costs history.

One agent answers one prompt from the fake Gemini server (the real google-genai client over
HTTP): streamed, the same 600-character reply comes as SSE events of 24 characters 30 ms
apart; not streamed, it comes whole. For each session store (SQLite — worker and follower on
separate connections to one file, as two processes on a machine — and PostgreSQL when its
binaries are installed, the follower on its own connection as on another machine):

* **first-piece latency**: from the moment the fake server wrote the reply's first SSE event
  to the moment ``InvocationHandle.stream()`` yielded the first partial event, both read
  with ``time.perf_counter()`` in this process (the worker runs in-process too);
* **history bytes** of the invocation's run (one model step) streamed and not, measured side
  by side (runs alternate), and their ratio.

Goals: first piece within 300 ms of the model's first chunk; a streamed step's history
within 5 % of a non-streamed one's.

Run: ``python benchmarks/streaming.py [--runs 10]`` (writes results/streaming.json).
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from _common import (
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
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.models import GeminiModel, ModelRegistry
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SessionService, SqliteSessionService
from adk_temporal.testing.fake_gemini import FakeGeminiServer
from adk_temporal.testing.postgres import PostgresNotInstalledError, PostgresServer

APP = "bench_stream"
USER = "u-bench"
REPLY = ("The forecast for Oslo: clear skies, a light wind from the north, cold. " * 9)[:600]
CHUNK_CHARS = 24
CHUNK_DELAY = 0.03
LATENCY_GOAL = 0.300
HISTORY_GOAL = 1.05

StoreFactory = Callable[[], SessionService]


def _models(gemini: FakeGeminiServer) -> ModelRegistry:
    models = ModelRegistry()
    models.register(
        "gemini-*", lambda name: GeminiModel(name, api_key="bench", base_url=gemini.base_url)
    )
    return models


@asynccontextmanager
async def _serving(
    client: Client, gemini: FakeGeminiServer, open_store: StoreFactory
) -> AsyncIterator[AdkClient]:
    """A worker on one store connection and a client following through another."""
    task_queue = f"bench-{uuid.uuid4().hex[:8]}"
    plugin = AdkPlugin(
        App([Agent("writer", "gemini-2.5-flash", "Answer.")], models=_models(gemini)),
        stores=Stores(open_store()),
    )
    async with Worker(client, task_queue=task_queue, plugins=[plugin]), open_store() as reader:
        yield AdkClient(client, task_queue=task_queue, session_service=reader)


async def _run(adk: AdkClient, gemini: FakeGeminiServer, streamed: bool) -> tuple[float, int]:
    """One invocation; returns (first-piece latency or nan, history bytes of its run)."""
    if streamed:
        gemini.enqueue_text_stream(REPLY, chunk_chars=CHUNK_CHARS, delay_seconds=CHUNK_DELAY)
    else:
        gemini.enqueue_text(REPLY)
    sent_before = gemini.events_sent
    handle = await adk.start(
        APP, USER, f"s-{uuid.uuid4().hex[:10]}", "writer", "Oslo tomorrow?", stream=streamed
    )
    first_piece: float | None = None
    async for event in handle.stream():
        if event.partial and first_piece is None:
            first_piece = time.perf_counter()
    result = await handle.result()
    if result.final_text != REPLY:
        raise RuntimeError(f"unexpected reply: {result.final_text[:60]!r}")
    latency = float("nan")
    if streamed:
        if first_piece is None:
            raise RuntimeError("a streamed run yielded no partial event")
        latency = first_piece - gemini.sent_at[sent_before]
    history = await adk.client.get_workflow_handle(
        handle.workflow_id, run_id=handle.run_id
    ).fetch_history()
    return latency, history_bytes(list(history.events))


async def _measure(
    client: Client, gemini: FakeGeminiServer, open_store: StoreFactory, runs: int
) -> dict[str, Any]:
    latencies: list[float] = []
    streamed_bytes: list[int] = []
    plain_bytes: list[int] = []
    async with _serving(client, gemini, open_store) as adk:
        await _run(adk, gemini, True)  # warm-up: connections, caches, first workflow task
        for _ in range(runs):
            latency, size = await _run(adk, gemini, True)
            latencies.append(latency)
            streamed_bytes.append(size)
            plain_bytes.append((await _run(adk, gemini, False))[1])
    return {
        "first_piece_ms": {
            "median": median(latencies) * 1000,
            "p90": percentile(latencies, 90) * 1000,
            "max": max(latencies) * 1000,
        },
        "history_bytes": {"streamed": median(streamed_bytes), "plain": median(plain_bytes)},
        "history_ratio": median(streamed_bytes) / median(plain_bytes),
    }


@asynccontextmanager
async def _stores(tmp: Path) -> AsyncIterator[dict[str, StoreFactory]]:
    stores: dict[str, StoreFactory] = {
        "sqlite": lambda: SqliteSessionService(tmp / "sessions.db"),
    }
    try:
        server = PostgresServer().start()
    except PostgresNotInstalledError as err:
        print(f"PostgreSQL skipped: {err}")
        server = None
    if server is not None:
        from adk_temporal.sessions.postgres import PostgresSessionService

        dsn = server.create_database()
        stores["postgres"] = lambda: PostgresSessionService(dsn)
    try:
        yield stores
    finally:
        if server is not None:
            server.stop()


async def main(runs: int) -> int:
    with scratch_dir() as scratch, FakeGeminiServer() as gemini:
        tmp = Path(scratch)
        with dev_server(tmp) as server:
            client = await connect(server.address)
            results: dict[str, Any] = {}
            async with _stores(tmp) as stores:
                for name, open_store in stores.items():
                    results[name] = await _measure(client, gemini, open_store, runs)
    rows = []
    ok = True
    for name, figures in results.items():
        latency, sizes = figures["first_piece_ms"], figures["history_bytes"]
        ok &= latency["p90"] <= LATENCY_GOAL * 1000 and figures["history_ratio"] <= HISTORY_GOAL
        rows.append(
            [
                name,
                f"{latency['median']:.0f}",
                f"{latency['p90']:.0f}",
                f"{latency['max']:.0f}",
                f"{sizes['streamed']:.0f}",
                f"{sizes['plain']:.0f}",
                f"{figures['history_ratio']:.3f}",
            ]
        )
    print_table(
        f"Streaming, {runs} runs per store: first piece after the model's first chunk (ms), "
        "history bytes of one invocation",
        ["store", "median", "p90", "max", "streamed B", "plain B", "ratio"],
        rows,
    )
    print(
        f"\ngoals: first piece p90 <= {LATENCY_GOAL * 1000:.0f} ms, history ratio <= "
        f"{HISTORY_GOAL:.2f}: {'met' if ok else 'NOT met'}"
    )
    write_results(
        "streaming",
        {
            "runs": runs,
            "reply_chars": len(REPLY),
            "chunk_chars": CHUNK_CHARS,
            "chunk_delay_seconds": CHUNK_DELAY,
            "stores": results,
        },
    )
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="Streamed/plain pairs per store.")
    finish(asyncio.run(main(parser.parse_args().runs)))
