"""Throughput: 50 concurrent one-turn invocations (one tool call each) on one worker process.

The worker runs in a child process (``_common.py`` as a script) so its CPU time can be read
from ``/proc`` without counting the client. Each round starts 50 sessions at once and waits
for all of them; rounds of ours and of the bare workflow (same activity schedule, no-op
activities, one run per invocation) alternate, and the medians are reported.

A step is a model step plus the tool calls it asked for; a one-turn invocation with a tool
call has two steps (the call, then the answer).

Run: ``python benchmarks/throughput.py`` (writes results/throughput.json).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import (
    SERVER_NOTE,
    TurnRun,
    WorkerProcess,
    connect,
    dev_server,
    finish,
    median,
    print_table,
    run_adk_turn,
    run_bare,
    scratch_dir,
    write_results,
)

from adk_temporal.client import AdkClient

CONCURRENT = 50
ROUNDS = 5
TOOLS = 1
STEPS_PER_INVOCATION = 2

# Temporal's official ADK plugin on this machine (ENVIRONMENT.md): 20 concurrent one-turn
# sessions in 2.07 s, against 1.97 s for a bare workflow.
OFFICIAL_NOTE = "official ADK plugin (reference): 20 concurrent sessions in 2.07 s vs 1.97 s bare"


async def burst(
    worker: WorkerProcess, start: Callable[[int], Awaitable[TurnRun]]
) -> dict[str, float]:
    """Run ``CONCURRENT`` invocations at once; wall time and the worker's CPU time."""
    cpu = worker.cpu_seconds()
    began = time.perf_counter()
    runs = await asyncio.gather(*(start(i) for i in range(CONCURRENT)))
    wall = time.perf_counter() - began
    cpu = worker.cpu_seconds() - cpu
    return {
        "wall_seconds": wall,
        "invocations_per_second": CONCURRENT / wall,
        "worker_cpu_seconds": cpu,
        "cpu_ms_per_step": cpu / (CONCURRENT * STEPS_PER_INVOCATION) * 1000,
        "latency_median_ms": median([r.seconds for r in runs]) * 1000,
        "latency_max_ms": max(r.seconds for r in runs) * 1000,
    }


async def main() -> None:
    rounds: dict[str, list[dict[str, float]]] = {"ours": [], "bare": []}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        with WorkerProcess(server.address, Path(tmp)) as worker:
            adk = AdkClient(client, task_queue=worker.task_queue)

            def ours(r: int) -> Callable[[int], Awaitable[TurnRun]]:
                return lambda i: run_adk_turn(adk, f"r{r}-s{i}", 1, TOOLS)

            def bare(r: int) -> Callable[[int], Awaitable[TurnRun]]:
                return lambda i: run_bare(client, worker.task_queue, f"bare/r{r}-s{i}", 1, TOOLS)

            # Warm-up round of each, not recorded: imports, sandbox, connections.
            await burst(worker, ours(-1))
            await burst(worker, bare(-1))
            for r in range(ROUNDS):
                rounds["ours"].append(await burst(worker, ours(r)))
                rounds["bare"].append(await burst(worker, bare(r)))

    summary = {
        name: {key: median([r[key] for r in runs]) for key in runs[0]}
        for name, runs in rounds.items()
    }
    print(f"server: {SERVER_NOTE}")
    print(
        f"{CONCURRENT} concurrent one-turn invocations, {TOOLS} tool call each, one worker "
        f"process; medians of {ROUNDS} rounds"
    )
    keys = list(summary["ours"])
    rows: list[list[Any]] = [[name, *(summary[name][k] for k in keys)] for name in summary]
    rows.append(["ours/bare", *(summary["ours"][k] / summary["bare"][k] for k in keys)])
    print_table("Throughput", ["", *keys], rows)
    print(OFFICIAL_NOTE)
    write_results(
        "throughput",
        {
            "concurrent": CONCURRENT,
            "rounds": ROUNDS,
            "tools_per_invocation": TOOLS,
            "steps_per_invocation": STEPS_PER_INVOCATION,
            "raw": rounds,
            "median": summary,
            "ratios": {k: summary["ours"][k] / summary["bare"][k] for k in keys},
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
    finish()
