"""Throughput: concurrent one-turn invocations on one worker process, with and without bytecode.

Each round starts C one-turn sessions at once (C = 20, 50 and 200 by default; one tool call
each, so two steps: the call, then the answer) and waits for all of them. Rounds of ours, of
the bare workflow (same activity schedule, no-op activities, one run per invocation) and of
the bare workflow keeping an invocation's search attributes (``bare_status``: the five set at
start, ``AdkStatus`` upserted as it ends) alternate; the target is against plain bare, and
the ratio to ``bare_status`` shows what is left beside that visibility work. A fourth kind,
``bare_again``, is the bare workflow once more under other ids: ``bare_again/bare`` is the
measurement's own noise, the spread a ratio of two identical workloads shows. Per round:
invocations per second, wall time, the worker's CPU time per invocation and per step (the
worker is a child process, ``_common.py`` as a script, its CPU read from ``/proc`` so the
client is not counted), and the median and max latency.

Both ways a worker can find its modules' bytecode are measured side by side, each with a
worker process of its own (rounds of the two alternate too):

- ``cached``: ``PYTHONPYCACHEPREFIX`` points at a directory holding the bytecode of every
  module the worker imports, and ``PYTHONDONTWRITEBYTECODE`` is unset — a worker image with
  compiled modules. The directory is filled by a first worker of that mode running a warm-up
  round before anything is timed: it compiles exactly what the worker imports, including
  what the workflow sandbox re-imports per run (``compileall`` over the standard library,
  site-packages and the project would take ~45 s on 2 cores for the same effect).
- ``uncached``: ``PYTHONPYCACHEPREFIX`` points at an empty directory and
  ``PYTHONDONTWRITEBYTECODE=1``, so no bytecode is found or written — every import, and
  every sandbox re-import, compiles from source (this environment's default for the
  project, whose editable install has no ``.pyc`` files).

Worker start-up (spawn until it prints "ready": imports, connecting, starting the worker) is
timed over several fresh starts of each mode. Last, one batch of each kind at each
concurrency (on the first mode's worker) is counted on the server (``_server_work.py``): its
persistence requests, visibility requests and frontend RPCs per invocation, the work that
decides throughput here, without the rounds' noise — at the largest concurrency too, where
tasks queue up and a difference in how runs wait would show. Figures are medians over rounds
with their min–max; ratios ours/bare are of the medians, with the spread of the per-round
ratios.

Run: ``python benchmarks/throughput.py [--concurrency 20,50,200] [--rounds 5]
[--bytecode cached,uncached] [--starts 3]`` (writes results/throughput.json).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
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
    ratios,
    run_adk_turn,
    run_bare,
    scratch_dir,
    spread,
    spread_cell,
    write_results,
)
from _server_work import Key, per_invocation, totals
from temporalio.client import Client

from adk_temporal.client import AdkClient

TOOLS = 1
STEPS_PER_INVOCATION = 2
MODES = ("cached", "uncached")
KINDS = ("ours", "bare", "bare_status", "bare_again")
"""``bare_status``: the bare workflow with the search attributes an invocation starts with and
its ``AdkStatus`` upsert as it ends (``_bare.py``), the visibility work it cannot skip;
``bare_again``: bare itself, a control."""
COMPARED = (("ours", "bare"), ("ours", "bare_status"), ("bare_again", "bare"))
"""The ratios printed: the target's, the one beside the visibility work, and the control's."""

# Temporal's official ADK plugin on this machine (ENVIRONMENT.md): 20 concurrent one-turn
# sessions in 2.07 s, against 1.97 s for a bare workflow.
OFFICIAL_NOTE = "official ADK plugin (reference): 20 concurrent sessions in 2.07 s vs 1.97 s bare"

# What a round reports, with the unit printed in the tables.
FIGURES = {
    "invocations_per_second": "inv/s",
    "wall_seconds": "wall s",
    "cpu_ms_per_invocation": "CPU ms/inv",
    "cpu_ms_per_step": "CPU ms/step",
    "latency_median_ms": "latency median ms",
    "latency_max_ms": "latency max ms",
}

Starter = Callable[[int], Awaitable[TurnRun]]


def worker_env(mode: str, cache_dir: Path) -> dict[str, str]:
    """The worker's environment for a bytecode mode (see the module docstring)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(cache_dir))
    if mode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


async def burst(worker: WorkerProcess, concurrent: int, start: Starter) -> dict[str, float]:
    """Run ``concurrent`` invocations at once; wall time and the worker's CPU time."""
    cpu = worker.cpu_seconds()
    began = time.perf_counter()
    runs = await asyncio.gather(*(start(i) for i in range(concurrent)))
    wall = time.perf_counter() - began
    cpu = worker.cpu_seconds() - cpu
    return {
        "invocations_per_second": concurrent / wall,
        "wall_seconds": wall,
        "cpu_ms_per_invocation": cpu / concurrent * 1000,
        "cpu_ms_per_step": cpu / (concurrent * STEPS_PER_INVOCATION) * 1000,
        "latency_median_ms": median([r.seconds for r in runs]) * 1000,
        "latency_max_ms": max(r.seconds for r in runs) * 1000,
    }


def starters(client: Client, worker: WorkerProcess, prefix: str) -> dict[str, Starter]:
    """How to start invocation ``i`` of a round of ours and of bare, in fresh sessions."""
    adk = AdkClient(client, task_queue=worker.task_queue)
    return {
        "ours": lambda i: run_adk_turn(adk, f"{prefix}-s{i}", 1, TOOLS),
        "bare": lambda i: run_bare(client, worker.task_queue, f"bare/{prefix}-s{i}", 1, TOOLS),
        "bare_status": lambda i: run_bare(
            client, worker.task_queue, f"bare-status/{prefix}-s{i}", 1, TOOLS, status=True
        ),
        "bare_again": lambda i: run_bare(
            client, worker.task_queue, f"bare-again/{prefix}-s{i}", 1, TOOLS
        ),
    }


async def warm_up(client: Client, worker: WorkerProcess, concurrent: int, name: str) -> None:
    """One round of each, not recorded: imports, the sandbox, connections (and, for the
    cached mode's first worker, its bytecode)."""
    for start in starters(client, worker, f"warm-{name}").values():
        await burst(worker, concurrent, start)


async def server_work(
    metrics_port: int, client: Client, worker: WorkerProcess, invocations: int
) -> dict[str, dict[Key, float]]:
    """Per kind, the server's work per invocation over one batch of ``invocations`` at once."""
    start = starters(client, worker, "server-work")
    return {
        kind: await per_invocation(
            metrics_port, invocations, functools.partial(burst, worker, invocations, start[kind])
        )
        for kind in KINDS
    }


def print_server_work(work: dict[str, dict[Key, float]], invocations: int) -> dict[str, Any]:
    """The server-work table (per kind, and the ratios of :data:`COMPARED`); returns the sums
    per kind."""
    sums = {kind: totals(counts) for kind, counts in work.items()}
    rows: list[list[Any]] = [[kind, *sums[kind].values()] for kind in KINDS]
    for kind, base in COMPARED:
        rows.append([f"{kind}/{base}", *(sums[kind][key] / sums[base][key] for key in sums[kind])])
    print_table(
        f"Server work per invocation ({invocations} at once, counted with the server's metrics)",
        ["", *sums["ours"]],
        rows,
    )
    return sums


async def main(concurrency: list[int], rounds: int, modes: list[str], starts: int) -> None:
    # raw[mode][concurrency][kind] = one dict of FIGURES per round
    raw: dict[str, dict[int, dict[str, list[dict[str, float]]]]] = {
        mode: {c: {kind: [] for kind in KINDS} for c in concurrency} for mode in modes
    }
    startup: dict[str, list[float]] = {mode: [] for mode in modes}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        root = Path(tmp)

        def new_worker(mode: str, name: str) -> WorkerProcess:
            data_dir = root / f"data-{name}"
            data_dir.mkdir()
            cache_dir = root / f"pycache-{mode}"
            cache_dir.mkdir(exist_ok=True)
            return WorkerProcess(server.address, data_dir, env=worker_env(mode, cache_dir))

        if "cached" in modes:
            with new_worker("cached", "prime") as worker:
                await warm_up(client, worker, min(concurrency), "prime")
        # Fresh starts for the start-up time; the workers measured below are the last start.
        for n in range(starts - 1):
            for mode in modes:
                with new_worker(mode, f"start-{mode}-{n}") as worker:
                    startup[mode].append(worker.startup_seconds)
        with ExitStack() as stack:
            workers = {mode: stack.enter_context(new_worker(mode, mode)) for mode in modes}
            for mode, worker in workers.items():
                startup[mode].append(worker.startup_seconds)
                await warm_up(client, worker, min(concurrency), mode)
            for c in concurrency:
                for r in range(rounds):
                    # Every other round runs in reverse order, so neither mode nor kind always
                    # inherits the server's backlog of the round before.
                    order = 1 if r % 2 == 0 else -1
                    for mode in list(workers)[::order]:
                        start = starters(client, workers[mode], f"{mode}-c{c}-r{r}")
                        for kind in KINDS[::order]:
                            raw[mode][c][kind].append(await burst(workers[mode], c, start[kind]))
                print(f"concurrency {c} done", flush=True)
            work = {
                c: await server_work(server.metrics_port, client, workers[modes[0]], c)
                for c in concurrency
            }

    print(f"server: {SERVER_NOTE}")
    print(
        f"one-turn invocations, {TOOLS} tool call each ({STEPS_PER_INVOCATION} steps), one "
        f"worker process per bytecode mode; {rounds} rounds; cells: median [min–max] over rounds"
    )
    summary: dict[str, Any] = {}
    for mode in modes:
        summary[mode] = {}
        rows: list[list[Any]] = []
        for c in concurrency:
            runs = raw[mode][c]
            summary[mode][c] = {
                kind: {key: spread([r[key] for r in runs[kind]]) for key in FIGURES}
                for kind in KINDS
            }
            for kind in KINDS:
                rows.append(
                    [c, kind, *(spread_cell([r[key] for r in runs[kind]]) for key in FIGURES)]
                )
            for kind, base in COMPARED:
                rows.append(
                    [
                        c,
                        f"{kind}/{base}",
                        *(
                            spread_cell(
                                ratios([r[key] for r in runs[kind]], [r[key] for r in runs[base]])
                            )
                            for key in FIGURES
                        ),
                    ]
                )
        print_table(f"Throughput, bytecode {mode}", ["C", "", *FIGURES.values()], rows)

    targets: dict[str, dict[str, Any]] = {}
    for mode in modes:
        for c in concurrency:
            figures = summary[mode][c]
            ours_rate = figures["ours"]["invocations_per_second"]["median"]
            bare_rate = figures["bare"]["invocations_per_second"]["median"]
            targets[f"throughput_ours_over_bare_{mode}_c{c}"] = {
                "value": ours_rate / bare_rate,
                "target": ">= 1.0",
                "met": ours_rate >= bare_rate,
            }
            targets[f"throughput_ours_over_bare_status_{mode}_c{c}"] = {
                "value": ours_rate / figures["bare_status"]["invocations_per_second"]["median"],
                "target": "info",
            }
            targets[f"throughput_bare_again_over_bare_{mode}_c{c}"] = {
                "value": figures["bare_again"]["invocations_per_second"]["median"] / bare_rate,
                "target": "control",
            }
            targets[f"cpu_per_step_ours_over_bare_{mode}_c{c}"] = {
                "value": figures["ours"]["cpu_ms_per_step"]["median"]
                / figures["bare"]["cpu_ms_per_step"]["median"],
                "target": "info",
            }
    sums = {c: print_server_work(work[c], c) for c in concurrency}
    for c in concurrency:
        targets[f"server_persistence_requests_ours_over_bare_c{c}"] = {
            "value": sums[c]["ours"]["persistence_requests"]
            / sums[c]["bare"]["persistence_requests"],
            "target": "info",
        }
    print_table(
        "Ratios of the medians, and targets",
        ["figure", "value", "wanted", "met"],
        [[k, v["value"], v["target"], v.get("met", "")] for k, v in targets.items()],
    )

    bytecode_rows: list[list[Any]] = [
        [mode, "start-up s", spread_cell(startup[mode]), ""] for mode in modes
    ]
    if len(modes) == len(MODES):
        for c in concurrency:
            for kind in KINDS:
                cached = [r["invocations_per_second"] for r in raw["cached"][c][kind]]
                uncached = [r["invocations_per_second"] for r in raw["uncached"][c][kind]]
                bytecode_rows.append(
                    [
                        f"cached/uncached C={c}",
                        f"{kind} inv/s",
                        spread_cell(ratios(cached, uncached)),
                        median(cached) / median(uncached),
                    ]
                )
    print_table(
        f"Bytecode: worker start-up over {starts} starts, and throughput cached/uncached "
        "(per round: median [min–max]; of the medians)",
        ["", "figure", "per round", "of medians"],
        bytecode_rows,
    )
    print(OFFICIAL_NOTE)
    write_results(
        "throughput",
        {
            "concurrency": concurrency,
            "rounds": rounds,
            "bytecode_modes": modes,
            "tools_per_invocation": TOOLS,
            "steps_per_invocation": STEPS_PER_INVOCATION,
            "worker_startup_seconds": {m: {"raw": v, **spread(v)} for m, v in startup.items()},
            "raw": raw,
            "summary": summary,
            "targets": targets,
            "server_work": {
                c: {
                    "totals": sums[c],
                    "counts": {
                        kind: {"/".join(key): v for key, v in n.items()}
                        for kind, n in work[c].items()
                    },
                }
                for c in concurrency
            },
        },
    )


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def _modes(text: str) -> list[str]:
    modes = [part for part in text.split(",") if part]
    if not modes or set(modes) - set(MODES):
        raise argparse.ArgumentTypeError(f"choose from {','.join(MODES)}")
    return modes


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--concurrency", type=_ints, default=[20, 50, 200], help="sessions at once (20,50,200)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds per level and kind (5)")
    parser.add_argument(
        "--bytecode", type=_modes, default=list(MODES), help="modes (cached,uncached)"
    )
    parser.add_argument("--starts", type=int, default=3, help="worker starts per mode (3)")
    options = parser.parse_args()
    if options.rounds < 1 or options.starts < 1 or not options.concurrency:
        parser.error("--rounds and --starts must be at least 1, --concurrency not empty")
    asyncio.run(main(options.concurrency, options.rounds, options.bytecode, options.starts))
    finish()
