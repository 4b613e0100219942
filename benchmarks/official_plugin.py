"""Scenarios 1 and 2 on Temporal's official ADK plugin, against the bare workflow in this run.

History growth (sessions of T = 1, 5, 10, 20, 40, 80 turns) and step/turn times (sessions of
40 turns) for the benchmark agent on ``temporalio-google-adk`` with an instant fake model
(``_official.py``), one workflow per session as that plugin is designed. The baseline is
``BareWorkflow`` holding the whole session in one run, the same shape. Ratios to the bare
workflow are comparable with ours from ``history_growth.py`` and ``step_overhead.py``.

It needs its own environment: google-adk 2.x requires google-genai < 3 and this project uses
3.x, so installing it next to the project would downgrade google-genai::

    python -m venv /tmp/adk-official
    /tmp/adk-official/bin/pip install -e '.[bench]' temporalio-google-adk==0.0.1
    /tmp/adk-official/bin/python benchmarks/official_plugin.py

Writes results/official_plugin.json (history_growth.py plots it when present).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from _bare import BARE_ACTIVITIES, BareWorkflow
from _common import (
    RESULT_TIMEOUT,
    SERVER_NOTE,
    TurnRun,
    dev_server,
    finish,
    history_bytes,
    median,
    print_table,
    run_bare,
    run_events,
    scratch_dir,
    span_seconds,
    split_turns,
    step_seconds,
    write_results,
)
from _official import OfficialInput, OfficialSessionWorkflow, lookup
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.google_adk import GoogleAdkPlugin
from temporalio.worker import Worker

TURN_COUNTS = (1, 5, 10, 20, 40, 80)
STEP_SESSIONS = 5
STEP_TURNS = 40
TOOLS = 2
KB = 1000
MS = 1000.0


async def official_session(client: Client, task_queue: str, turns: int) -> list[HistoryEvent]:
    """Run one session of ``turns`` turns on the official plugin; its history."""
    workflow_id = f"official/{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(RESULT_TIMEOUT):
        handle = await client.start_workflow(
            OfficialSessionWorkflow.run,
            OfficialInput(turns=turns),
            id=workflow_id,
            task_queue=task_queue,
        )
        await handle.result()
    assert handle.result_run_id is not None
    return await run_events(client, TurnRun(workflow_id, handle.result_run_id, 0.0))


async def bare_session(client: Client, task_queue: str, turns: int) -> list[HistoryEvent]:
    """The bare workflow holding a session of ``turns`` turns in one run; its history."""
    run = await run_bare(client, task_queue, f"bare/{uuid.uuid4().hex[:8]}", turns, TOOLS)
    return await run_events(client, run)


def growth_row(events: list[HistoryEvent]) -> dict[str, Any]:
    """Total bytes, events and bytes per turn of one whole-session history."""
    return {
        "total_bytes": history_bytes(events),
        "events": len(events),
        "bytes_by_turn": [history_bytes(t) for t in split_turns(events)],
    }


def times(events: list[HistoryEvent]) -> dict[str, list[float]]:
    """Per-turn server-side step time and turn time of one whole-session history."""
    turns = split_turns(events)
    return {
        "step_seconds": [s for t in turns for s in step_seconds(t)],
        "turn_seconds": [span_seconds(t) for t in turns],
    }


async def main() -> None:
    # The fake model reports no token usage (neither does ours); ADK warns on every call.
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    growth: dict[int, dict[str, Any]] = {}
    timing: dict[str, list[dict[str, list[float]]]] = {"official": [], "bare": []}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await Client.connect(server.address, plugins=[GoogleAdkPlugin()])
        task_queue = f"bench-{uuid.uuid4().hex[:8]}"
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[OfficialSessionWorkflow, BareWorkflow],
            activities=[lookup, *BARE_ACTIVITIES],
        ):
            await official_session(client, task_queue, 2)  # warm-up: imports, sandbox
            for t in TURN_COUNTS:
                growth[t] = {
                    "official": growth_row(await official_session(client, task_queue, t)),
                    "bare_session": growth_row(await bare_session(client, task_queue, t)),
                }
            for _ in range(STEP_SESSIONS):
                timing["official"].append(
                    times(await official_session(client, task_queue, STEP_TURNS))
                )
                timing["bare"].append(times(await bare_session(client, task_queue, STEP_TURNS)))

    print(f"server: {SERVER_NOTE}")
    print("history bytes = protobuf History.ByteSize(); one workflow run per session")
    print_table(
        f"Official ADK plugin: history growth (K={TOOLS}, ~1 KB per tool result)",
        ["T", "official KB", "events", "official KB/turn", "bare KB/turn", "official/bare"],
        [
            [
                t,
                g["official"]["total_bytes"] / KB,
                g["official"]["events"],
                g["official"]["total_bytes"] / t / KB,
                g["bare_session"]["total_bytes"] / t / KB,
                g["official"]["total_bytes"] / g["bare_session"]["total_bytes"],
            ]
            for t, g in growth.items()
        ],
    )
    longest = growth[TURN_COUNTS[-1]]
    print_table(
        f"Bytes added by turn t (session of {TURN_COUNTS[-1]} turns)",
        ["t", "official KB", "bare KB"],
        [
            [
                t,
                longest["official"]["bytes_by_turn"][t - 1] / KB,
                longest["bare_session"]["bytes_by_turn"][t - 1] / KB,
            ]
            for t in (1, 2, 5, 10, 20, 40, 80)
        ],
    )

    def at(name: str, key: str, turn: int) -> float:
        return median([s[key][turn - 1] for s in timing[name]])

    rows = [
        [
            name,
            at(name, "step_seconds", 1) * MS,
            at(name, "step_seconds", STEP_TURNS) * MS,
            median([v for s in timing[name] for v in s["step_seconds"]]) * MS,
            at(name, "turn_seconds", 1) * MS,
            at(name, "turn_seconds", STEP_TURNS) * MS,
        ]
        for name in timing
    ]
    print_table(
        f"Step and turn times, server-side, ms ({STEP_SESSIONS} sessions x {STEP_TURNS} turns)",
        ["", "step@1", f"step@{STEP_TURNS}", "step all", "turn@1", f"turn@{STEP_TURNS}"],
        rows,
    )
    ratios = {
        "step_official_over_bare_turn_1": at("official", "step_seconds", 1)
        / at("bare", "step_seconds", 1),
        f"official_step_{STEP_TURNS}_over_step_1": at("official", "step_seconds", STEP_TURNS)
        / at("official", "step_seconds", 1),
        f"official_turn_{STEP_TURNS}_over_turn_1": at("official", "turn_seconds", STEP_TURNS)
        / at("official", "turn_seconds", 1),
        f"bare_turn_{STEP_TURNS}_over_turn_1": at("bare", "turn_seconds", STEP_TURNS)
        / at("bare", "turn_seconds", 1),
    }
    print_table("Ratios", ["figure", "value"], list(ratios.items()))
    write_results(
        "official_plugin",
        {
            "measure": "protobuf History.ByteSize() of the session's single run",
            "tools_per_turn": TOOLS,
            "growth": {str(t): g for t, g in growth.items()},
            "timing": timing,
            "ratios": ratios,
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
    finish()
