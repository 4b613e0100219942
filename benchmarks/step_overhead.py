"""Step overhead: time and worker CPU per step and per turn, ours against the bare workflow.

A step is a model step plus the K = 2 tool calls it asked for; its time is read from the
server's history (model step scheduled → next model step scheduled), so client polling does
not blur it. A turn is one invocation as the client sees it: start → result. Worker CPU per
model step is the worker process's CPU time over a session divided by the session's model
steps (two per turn for both: the step asking for the calls and the final one), so the
worker runs in a child process (``_common.py`` as a script) and the client is not counted.

Sessions of ours and of the bare workflow (one run per turn, the same activity schedule with
no-op activities) alternate so that machine noise hits both alike; the bare workflow holding
the whole session in one run is measured too. Each session gives its own medians; the
figures are the median over sessions with their min–max, and each ratio ours/bare is also
given per pair of consecutive sessions (min–max of those).

Run: ``python benchmarks/step_overhead.py [--sessions 12] [--turns 40]`` (writes
results/step_overhead.json).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
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
    ratios,
    run_adk_turn,
    run_bare,
    run_events,
    scratch_dir,
    spread,
    spread_cell,
    step_seconds,
    write_results,
)
from temporalio.client import Client

from adk_temporal.client import AdkClient

TOOLS = 2
MODEL_STEPS_PER_TURN = 2  # the step asking for the calls, then the final answer
WINDOW = 5  # turns at each end of a session compared for the drift figures

MS = 1000.0

Session = dict[str, list[float]]


async def session(
    client: Client,
    worker: WorkerProcess,
    turns: int,
    run_turn: Callable[[int], Awaitable[TurnRun]],
    turns_per_run: int = 1,
) -> Session:
    """Per-turn client latency, server-side step times and worker CPU of one session.

    ``run_turn(first)`` runs turns ``first``… (``turns_per_run`` of them) as one run; a run
    of several turns counts its time evenly over them.
    """
    turn_seconds, steps = [], []
    cpu = worker.cpu_seconds()
    for first in range(1, turns + 1, turns_per_run):
        run = await run_turn(first)
        turn_seconds += [run.seconds / turns_per_run] * turns_per_run
        steps += step_seconds(await run_events(client, run))
    # Reading the histories between turns leaves the worker idle, so the whole session's
    # CPU is the turns' CPU.
    cpu = worker.cpu_seconds() - cpu
    return {
        "turn_seconds": turn_seconds,
        "step_seconds": steps,
        "worker_cpu_seconds": [cpu],
        "cpu_seconds_per_model_step": [cpu / (turns * MODEL_STEPS_PER_TURN)],
    }


def at_turn(sessions: list[Session], key: str, turn: int) -> float:
    """Median over sessions of ``key`` at 1-based ``turn``."""
    return median([s[key][turn - 1] for s in sessions])


def window(sessions: list[Session], key: str, first: int, width: int) -> float:
    """Median over sessions and ``width`` turns starting at 1-based ``first``."""
    return median([v for s in sessions for v in s[key][first - 1 : first - 1 + width]])


def per_session(sessions: list[Session], key: str) -> list[float]:
    """Each session's median of ``key`` (its only value for the per-session CPU figures)."""
    return [median(s[key]) for s in sessions]


async def main(sessions: int, turns: int) -> None:
    width = min(WINDOW, turns)
    ours: list[Session] = []
    bare: list[Session] = []
    whole: list[Session] = []
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        with WorkerProcess(server.address, Path(tmp)) as worker:
            task_queue = worker.task_queue
            adk = AdkClient(client, task_queue=task_queue)
            # Warm-up: the first runs pay for imports, the sandbox and connection set-up.
            for turn in (1, 2, 3):
                await run_adk_turn(adk, "warm", turn, TOOLS)
            await run_bare(client, task_queue, "warm", 3, TOOLS)
            for i in range(sessions):
                ours.append(
                    await session(
                        client,
                        worker,
                        turns,
                        functools.partial(run_adk_turn, adk, f"s{i}", tools=TOOLS),
                    )
                )
                bare.append(
                    await session(
                        client,
                        worker,
                        turns,
                        functools.partial(run_bare, client, task_queue, f"bare-turn/{i}", 1, TOOLS),
                    )
                )
                whole.append(
                    await session(
                        client,
                        worker,
                        turns,
                        functools.partial(
                            run_bare, client, task_queue, f"bare-session/{i}", turns, TOOLS
                        ),
                        turns_per_run=turns,
                    )
                )

    print(f"server: {SERVER_NOTE}")
    print(
        f"{sessions} sessions x {turns} turns each, K={TOOLS}, one worker process; "
        "cells: median over sessions [min–max] of each session's median"
    )
    rows: list[list[Any]] = []
    for label, group in (("ours", ours), ("bare, run per turn", bare)):
        rows.append(
            [
                label,
                spread_cell([s["step_seconds"][0] for s in group], MS),
                spread_cell([s["step_seconds"][-1] for s in group], MS),
                spread_cell(per_session(group, "step_seconds"), MS),
                spread_cell([s["turn_seconds"][0] for s in group], MS),
                spread_cell([s["turn_seconds"][-1] for s in group], MS),
                spread_cell(per_session(group, "turn_seconds"), MS),
                spread_cell(per_session(group, "cpu_seconds_per_model_step"), MS),
            ]
        )
    rows.append(
        [
            "bare, run per session",
            "",
            "",
            spread_cell(per_session(whole, "step_seconds"), MS),
            "",
            "",
            spread_cell(per_session(whole, "turn_seconds"), MS),
            spread_cell(per_session(whole, "cpu_seconds_per_model_step"), MS),
        ]
    )
    print_table(
        "Step (server-side, ms), turn (client start→result, ms), worker CPU per model step (ms)",
        [
            "",
            "step@1",
            f"step@{turns}",
            "step all",
            "turn@1",
            f"turn@{turns}",
            "turn all",
            "CPU/model step",
        ],
        rows,
    )

    def paired(key: str) -> list[float]:
        return ratios(per_session(ours, key), per_session(bare, key))

    def ratio(key: str) -> float:
        return median(per_session(ours, key)) / median(per_session(bare, key))

    def target(value: float, wanted: float | None, repeats: list[float]) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "value": value,
            "repeats": repeats,
            "spread": spread(repeats),
            "target": f"<= {wanted}" if wanted is not None else "info",
        }
        if wanted is not None:
            entry["met"] = value <= wanted
        return entry

    first_steps = ratios([s["step_seconds"][0] for s in ours], [s["step_seconds"][0] for s in bare])
    drift = [s["turn_seconds"][-1] / s["turn_seconds"][0] for s in ours]
    drift_window = [
        median(s["turn_seconds"][-width:]) / median(s["turn_seconds"][:width]) for s in ours
    ]
    bare_drift = [s["turn_seconds"][-1] / s["turn_seconds"][0] for s in bare]
    step_drift = [s["step_seconds"][-1] / s["step_seconds"][0] for s in ours]
    targets = {
        "cpu_per_model_step_ours_over_bare": target(
            ratio("cpu_seconds_per_model_step"), 1.15, paired("cpu_seconds_per_model_step")
        ),
        "step_ours_over_bare_all_turns": target(ratio("step_seconds"), 1.1, paired("step_seconds")),
        "turn_ours_over_bare_all_turns": target(ratio("turn_seconds"), 1.2, paired("turn_seconds")),
        "step_ours_over_bare_turn_1": target(
            at_turn(ours, "step_seconds", 1) / at_turn(bare, "step_seconds", 1), None, first_steps
        ),
        f"step_ours_over_bare_turns_1-{width}": target(
            window(ours, "step_seconds", 1, width) / window(bare, "step_seconds", 1, width),
            None,
            ratios(
                [median(s["step_seconds"][:width]) for s in ours],
                [median(s["step_seconds"][:width]) for s in bare],
            ),
        ),
        f"turn_{turns}_over_turn_1": target(
            at_turn(ours, "turn_seconds", turns) / at_turn(ours, "turn_seconds", 1), None, drift
        ),
        f"turns_{turns - width + 1}-{turns}_over_turns_1-{width}": target(
            window(ours, "turn_seconds", turns - width + 1, width)
            / window(ours, "turn_seconds", 1, width),
            1.1,
            drift_window,
        ),
        f"bare_turn_{turns}_over_turn_1": target(
            at_turn(bare, "turn_seconds", turns) / at_turn(bare, "turn_seconds", 1),
            None,
            bare_drift,
        ),
        f"step_{turns}_over_step_1": target(
            at_turn(ours, "step_seconds", turns) / at_turn(ours, "step_seconds", 1),
            None,
            step_drift,
        ),
    }
    print_table(
        "Ratios of the medians over sessions, with their spread (ours/bare: per pair of "
        "sessions; drift: per session), and targets (official ADK plugin, for reference: step "
        "41 ms vs 33 ms bare, 1.23x; slows by a third over 40 turns)",
        ["figure", "value", "spread", "wanted", "met"],
        [
            [k, v["value"], spread_cell(v["repeats"]), v["target"], v.get("met", "")]
            for k, v in targets.items()
        ],
    )
    write_results(
        "step_overhead",
        {
            "sessions": sessions,
            "turns": turns,
            "tools_per_step": TOOLS,
            "model_steps_per_turn": MODEL_STEPS_PER_TURN,
            "ours": ours,
            "bare_per_turn": bare,
            "bare_per_session": whole,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=12, help="sessions of each (default 12)")
    parser.add_argument("--turns", type=int, default=40, help="turns per session (default 40)")
    options = parser.parse_args()
    asyncio.run(main(options.sessions, options.turns))
    finish()
