"""Long session: does a turn cost more after 1,000 turns of one session than at its start?

One session of N turns (default 1,000) of the K = 2 agent ("look up tN" → two parallel
``lookup`` calls of ~1 KB → a short answer), run one after another against the dev server
with the worker in a child process (``_common.py`` as a script). Per turn it records:

- the turn's latency as the client sees it (start → result);
- the ``adk_model_step`` activity's run time, from the run's history (activity started →
  completed, two per turn), which is where a growing session would be read and rebuilt;
- the worker process's CPU time over the turn (``/proc``, in clock ticks of 10 ms, so a
  window's figure is its mean per turn rather than a median of ticks).

Windows of W turns (default 50) are compared: the first against the last (targets: latency
and model-step time of the last window ≤ 1.1 × the first), and at checkpoints (turns 1,
N/4 + 1, N/2 + 1 and N − W + 1 onwards) so drift shows where it starts. During the
checkpoint windows, each of our turns is followed by a turn of the bare workflow (one run per
turn, same activity schedule, no-op activities) on the same worker, so every window also has
its ratio against bare measured side by side.

Run: ``python benchmarks/long_session.py [--turns 1000] [--window 50]`` (writes
results/long_session.json with the per-turn figures).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    SERVER_NOTE,
    TurnRun,
    WorkerProcess,
    activity_seconds,
    connect,
    dev_server,
    finish,
    median,
    print_table,
    run_adk_turn,
    run_bare,
    run_events,
    scratch_dir,
    spread,
    spread_cell,
    write_results,
)
from temporalio.client import Client

from adk_temporal.client import AdkClient

TOOLS = 2
SESSION = "long"
OURS_MODEL_ACTIVITY = "adk_model_step"
BARE_MODEL_ACTIVITY = "bare_model"
PROGRESS_EVERY = 100  # turns between progress lines, as a full run takes minutes

MS = 1000.0


@dataclass
class Turns:
    """Per-turn figures of one workflow (ours or bare), in the order the turns ran."""

    turn: list[int]
    turn_seconds: list[float]
    model_step_seconds: list[list[float]]
    worker_cpu_seconds: list[float]

    def window(self, first: int, width: int) -> Window:
        """The turns ``first`` … ``first + width - 1`` (those of them that ran)."""
        picked = [i for i, t in enumerate(self.turn) if first <= t < first + width]
        return Window(
            f"{first}-{first + width - 1}",
            [self.turn_seconds[i] for i in picked],
            [s for i in picked for s in self.model_step_seconds[i]],
            [self.worker_cpu_seconds[i] for i in picked],
        )


@dataclass
class Window:
    """One window's per-turn latencies, model-step times and worker CPU."""

    turns: str
    latency: list[float]
    model_steps: list[float]
    cpu: list[float]

    def cpu_per_turn(self) -> float:
        # Ticks of 10 ms are too coarse for a per-turn median: the mean over the window is
        # its CPU delta divided by its turns.
        return statistics.fmean(self.cpu) if self.cpu else float("nan")

    def summary(self) -> dict[str, Any]:
        return {
            "turn_seconds": spread(self.latency),
            "model_step_seconds": spread(self.model_steps),
            "worker_cpu_seconds_per_turn": self.cpu_per_turn(),
        }


FIGURES: dict[str, Callable[[Window], float]] = {
    "turn_latency": lambda w: median(w.latency),
    "model_step": lambda w: median(w.model_steps),
    "worker_cpu_per_turn": Window.cpu_per_turn,
}
"""What is compared between windows: median latency, median model step, mean CPU."""


def checkpoints(turns: int, width: int) -> list[int]:
    """First turns of the windows reported: start, a quarter, half way, and the end."""
    return sorted({1, turns // 4 + 1, turns // 2 + 1, turns - width + 1})


async def timed_turn(
    client: Client,
    worker: WorkerProcess,
    into: Turns,
    turn: int,
    model_activity: str,
    start: Callable[[], Awaitable[TurnRun]],
) -> None:
    """Run one turn (``start()``) and record its latency, model-step times and worker CPU."""
    cpu = worker.cpu_seconds()
    run = await start()
    into.worker_cpu_seconds.append(worker.cpu_seconds() - cpu)
    into.turn.append(turn)
    into.turn_seconds.append(run.seconds)
    into.model_step_seconds.append(activity_seconds(await run_events(client, run), model_activity))


async def main(turns: int, width: int) -> None:
    starts = checkpoints(turns, width)
    in_window = {t for first in starts for t in range(first, first + width)}
    ours, bare = Turns([], [], [], []), Turns([], [], [], [])
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        with WorkerProcess(server.address, Path(tmp)) as worker:
            task_queue = worker.task_queue
            adk = AdkClient(client, task_queue=task_queue)
            # Warm-up in sessions of their own: imports, the sandbox, connection set-up.
            for turn in (1, 2, 3):
                await run_adk_turn(adk, "warm", turn, TOOLS)
            await run_bare(client, task_queue, "warm", 3, TOOLS)
            for turn in range(1, turns + 1):
                await timed_turn(
                    client,
                    worker,
                    ours,
                    turn,
                    OURS_MODEL_ACTIVITY,
                    functools.partial(run_adk_turn, adk, SESSION, turn, TOOLS),
                )
                if turn in in_window:
                    await timed_turn(
                        client,
                        worker,
                        bare,
                        turn,
                        BARE_MODEL_ACTIVITY,
                        functools.partial(run_bare, client, task_queue, "bare", 1, TOOLS, turn),
                    )
                if turn % PROGRESS_EVERY == 0:
                    print(f"turn {turn}/{turns}", flush=True)

    windows = [(ours.window(first, width), bare.window(first, width)) for first in starts]
    print(f"server: {SERVER_NOTE}")
    print(
        f"one session of {turns} turns, K={TOOLS}, one worker process; windows of {width} "
        "turns; latency and model step: median [p10–p90] over the window's turns, CPU: mean "
        "per turn"
    )
    print_table(
        "Per window: turn latency (client start→result, ms), model-step activity (started→"
        "completed, ms), worker CPU per turn (ms); bare measured in the same windows",
        [
            "turns",
            "ours turn",
            "bare turn",
            "ours/bare",
            "ours model step",
            "bare model step",
            "ours/bare",
            "ours CPU",
            "bare CPU",
            "ours/bare",
        ],
        [
            [
                o.turns,
                spread_cell(o.latency, MS, 10, 90),
                spread_cell(b.latency, MS, 10, 90),
                FIGURES["turn_latency"](o) / FIGURES["turn_latency"](b),
                spread_cell(o.model_steps, MS, 10, 90),
                spread_cell(b.model_steps, MS, 10, 90),
                FIGURES["model_step"](o) / FIGURES["model_step"](b),
                f"{o.cpu_per_turn() * MS:.1f}",
                f"{b.cpu_per_turn() * MS:.1f}",
                o.cpu_per_turn() / b.cpu_per_turn(),
            ]
            for o, b in windows
        ],
    )

    (first, first_bare), (last, last_bare) = windows[0], windows[-1]
    wanted = {"turn_latency": 1.1, "model_step": 1.1}
    targets: dict[str, dict[str, Any]] = {}
    for name, figure in FIGURES.items():
        value = figure(last) / figure(first)
        bare_value = figure(last_bare) / figure(first_bare)
        target = wanted.get(name)
        targets[f"{name}_turns_{last.turns}_over_turns_{first.turns}"] = {
            "value": value,
            "bare": bare_value,
            # The machine and the server drift too over a long run (the server's database
            # grows by a run per turn): bare, measured in the same windows, shows how much.
            "over_bare": value / bare_value,
            "target": f"<= {target}" if target is not None else "info",
            **({"met": value <= target} if target is not None else {}),
        }
    print_table(
        "Last window against the first (bare: the same ratio for the bare workflow; "
        "ours/bare: ours with the drift bare shows taken out)",
        ["figure", "ours", "bare", "ours/bare", "wanted", "met"],
        [
            [k, v["value"], v["bare"], v["over_bare"], v["target"], v.get("met", "")]
            for k, v in targets.items()
        ],
    )
    write_results(
        "long_session",
        {
            "turns": turns,
            "window": width,
            "tools_per_step": TOOLS,
            "windows": {o.turns: {"ours": o.summary(), "bare": b.summary()} for o, b in windows},
            "targets": targets,
            "ours_per_turn": vars(ours),
            "bare_per_turn": vars(bare),
        },
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns in the session (1000)")
    parser.add_argument("--window", type=int, default=50, help="turns per window (50)")
    options = parser.parse_args()
    if not 0 < options.window <= options.turns:
        parser.error("--window must be between 1 and --turns")
    asyncio.run(main(options.turns, options.window))
    finish()
