"""What a worker spends replaying a run that waits for an approval (a cache miss).

A run evicted from the worker's cache is replayed from its history when its answer comes:
every activity result the history holds is decoded again. Temporal builds a payload
converter for each serialization context, so type adapters cached per converter were built
anew for each result; the converter now shares them across the process
(``adk_temporal.converter``). This replays the recorded history of a run waiting for its
approval (``tests/replay/histories/app_queue_approve.json``, before the workflow task that
took its answer) ``--replays`` times each way, in alternating batches, and prints the
process's CPU time per replay.

Run: ``python benchmarks/replay_cost.py`` (writes results/replay_cost.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import finish, machine_info, median, print_table, write_results
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.worker import Replayer

from adk_temporal import converter
from adk_temporal.app import App, Stores
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import InMemorySessionService

HISTORY = Path(__file__).parent.parent / "tests/replay/histories/app_queue_approve.json"
WAITING = "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"
"""The first event of the answer: the history before it is the run as it waits."""
BATCHES = 6


def waiting_history() -> WorkflowHistory:
    """The recorded run before the workflow task that took its answer."""
    recorded: dict[str, Any] = json.loads(HISTORY.read_text())
    events = recorded["history"]["events"]
    cut = next(i for i, e in enumerate(events) if e["eventType"] == WAITING)
    # The answer was accepted by the task whose three events precede its acceptance.
    recorded["history"]["events"] = events[: cut - 3]
    return WorkflowHistory.from_json(recorded["workflow_id"], recorded["history"])


@contextmanager
def per_converter_adapters() -> Any:
    """Decode as the converter's base class does: adapters cached per converter."""
    compact = converter._CompactJSONPayloadConverter
    shared = compact.from_payload
    compact.from_payload = PydanticJSONPlainPayloadConverter.from_payload  # type: ignore[method-assign]
    try:
        yield
    finally:
        compact.from_payload = shared  # type: ignore[method-assign]


async def cpu_per_replay(replayer: Replayer, history: WorkflowHistory, n: int) -> float:
    """CPU milliseconds of the process per replay of ``history``, over ``n`` replays."""

    async def histories() -> AsyncIterator[WorkflowHistory]:
        for _ in range(n):
            yield history

    start = time.process_time()
    async with replayer.workflow_replay_iterator(histories()) as results:
        async for result in results:
            if result.replay_failure is not None:
                raise result.replay_failure
    return (time.process_time() - start) / n * 1000


async def run(replays: int) -> dict[str, Any]:
    """Alternate batches of replays with per-converter and shared adapters."""
    history = waiting_history()
    replayer = Replayer(
        workflows=[], plugins=[AdkPlugin(App([]), stores=Stores(InMemorySessionService()))]
    )
    await cpu_per_replay(replayer, history, 20)  # imports and first adapters
    before: list[float] = []
    after: list[float] = []
    for _ in range(BATCHES):
        with per_converter_adapters():
            before.append(await cpu_per_replay(replayer, history, replays // BATCHES))
        after.append(await cpu_per_replay(replayer, history, replays // BATCHES))
    return {
        "history_events": len(history.events),
        "replays_each": replays // BATCHES * BATCHES,
        "cpu_ms_per_replay": {
            "adapters per converter": {"median": median(before), "batches": before},
            "adapters shared": {"median": median(after), "batches": after},
        },
        "ratio": median(after) / median(before),
    }


def main() -> None:
    """Parse the flags, measure, print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replays", type=int, default=1200, help="replays of each way")
    options = parser.parse_args()
    figures = asyncio.run(run(options.replays))
    per = figures["cpu_ms_per_replay"]
    print_table(
        f"Replaying a waiting run ({figures['history_events']} events), "
        f"{figures['replays_each']} replays each way in {BATCHES} alternating batches",
        ["type adapters", "CPU ms per replay (median of batches)", "× per converter"],
        [
            [way, v["median"], v["median"] / per["adapters per converter"]["median"]]
            for way, v in per.items()
        ],
    )
    write_results("replay_cost", {"machine": machine_info(), **figures})
    finish()


if __name__ == "__main__":
    main()
