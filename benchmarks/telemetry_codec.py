"""Step overhead of tracing and of the encryption codec, each against both off, in one run.

Three worker processes serve the same K = 2 tool agent: one plain, one exporting traces and
metrics over OTLP/HTTP to a local collector (``--otlp-endpoint`` as a user would), one with
every payload sealed by the AES-256-GCM codec (its clients seal too). Sessions of the three
alternate so machine noise hits all alike. A step is read from the server's history (model
step scheduled → next model step scheduled); worker CPU per model step is the worker
process's CPU over a session divided by its model steps (two per turn).

Run: ``python benchmarks/telemetry_codec.py [--sessions 8] [--turns 20]`` (writes
results/telemetry_codec.json).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
from pathlib import Path
from typing import Any

from _common import (
    SERVER_NOTE,
    WorkerProcess,
    connect,
    dev_server,
    finish,
    median,
    print_table,
    ratios,
    run_adk_turn,
    scratch_dir,
    spread_cell,
    write_results,
)
from step_overhead import Session, per_session, session

from adk_temporal.client import AdkClient
from adk_temporal.codec import KEY_FILE_ENV, EncryptionCodec, EncryptionKeys, write_key_file
from adk_temporal.testing.otlp import OtlpCollector
from adk_temporal.tracing import configure_telemetry

TOOLS = 2
MS = 1000.0
MODES = ("off", "tracing", "codec")


async def main(sessions: int, turns: int) -> None:
    results: dict[str, list[Session]] = {mode: [] for mode in MODES}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server, OtlpCollector() as collector:
        keys = Path(tmp) / "keys.json"
        write_key_file(keys, EncryptionKeys.generate())
        codec = EncryptionCodec.from_file(keys)
        telemetry = await configure_telemetry(collector.endpoint, service_name="bench-client")
        environments = {
            "off": {**os.environ},
            "tracing": {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint},
            "codec": {**os.environ, KEY_FILE_ENV: str(keys)},
        }
        clients = {
            "off": await connect(server.address),
            "tracing": await connect(server.address, telemetry=telemetry),
            "codec": await connect(server.address, codec=codec),
        }
        workers = {
            mode: WorkerProcess(server.address, Path(tmp) / mode, env=environments[mode])
            for mode in MODES
        }
        for mode in MODES:
            (Path(tmp) / mode).mkdir()
            workers[mode].__enter__()
        try:
            adks = {m: AdkClient(clients[m], task_queue=workers[m].task_queue) for m in MODES}
            for mode in MODES:  # warm-up: imports, connections, the first tasks
                for turn in (1, 2, 3):
                    await run_adk_turn(adks[mode], f"warm-{mode}", turn, TOOLS)
            for i in range(sessions):
                for mode in MODES:
                    run = functools.partial(run_adk_turn, adks[mode], f"{mode}-{i}", tools=TOOLS)
                    results[mode].append(await session(clients[mode], workers[mode], turns, run))
        finally:
            for mode in MODES:
                workers[mode].__exit__(None, None, None)
            if telemetry is not None:
                await telemetry.aclose()
        spans = len(collector.spans)

    print(f"server: {SERVER_NOTE}")
    print(
        f"{sessions} sessions x {turns} turns per mode, K={TOOLS}; cells: median over "
        f"sessions [min–max] of each session's median; {spans} spans reached the collector"
    )
    rows = [
        [
            mode,
            spread_cell(per_session(results[mode], "step_seconds"), MS),
            spread_cell(per_session(results[mode], "turn_seconds"), MS),
            spread_cell(per_session(results[mode], "cpu_seconds_per_model_step"), MS),
        ]
        for mode in MODES
    ]
    print_table(
        "Step (server-side, ms), turn (client start→result, ms), worker CPU per model step (ms)",
        ["", "step", "turn", "CPU/model step"],
        rows,
    )
    figures: dict[str, Any] = {"sessions": sessions, "turns": turns, "spans": spans}
    for mode in ("tracing", "codec"):
        for key, label in (
            ("step_seconds", "step"),
            ("turn_seconds", "turn"),
            ("cpu_seconds_per_model_step", "cpu_per_model_step"),
        ):
            ours, off = per_session(results[mode], key), per_session(results["off"], key)
            value = median(ours) / median(off)
            paired = ratios(ours, off)
            figures[f"{mode}_{label}_ratio"] = {
                "value": round(value, 3),
                "paired_min": round(min(paired), 3),
                "paired_max": round(max(paired), 3),
                "target": 1.1,
            }
            print(
                f"{mode} / off, {label}: {value:.2f}x "
                f"[paired {min(paired):.2f}–{max(paired):.2f}] (target ≤ 1.1)"
            )
    write_results("telemetry_codec", figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.sessions, options.turns))
    finish()
