"""What per-session data keys cost: step and worker CPU against the master-key codec.

Three worker processes serve the same K = 2 tool agent, every payload sealed with
AES-256-GCM: ``codec`` with the key file's master key (the codec before data keys),
``data keys`` with one data key per session (kept in the worker's ``sessions.db``), and
``data keys + stores`` with the session store's rows sealed by the same keys. Each session
is new, so its first payload makes and stores its key, as in production. Sessions of the
three alternate so machine noise hits all alike. A step is read from the server's history
(model step scheduled → next model step scheduled); worker CPU per model step is the worker
process's CPU over a session divided by its model steps (two per turn). A micro figure
beside it: sealing and opening one 2 KB payload in this process, master key against a
cached data key.

Run: ``python benchmarks/data_keys.py [--sessions 8] [--turns 20]`` (writes
results/data_keys.json).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import time
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
from temporalio.api.common.v1 import Payload
from temporalio.converter import WorkflowSerializationContext

from adk_temporal.client import AdkClient
from adk_temporal.codec import KEY_FILE_ENV, EncryptionCodec, EncryptionKeys, write_key_file
from adk_temporal.keys import DataKeySettings, FileKeyStore

TOOLS = 2
MS = 1000.0
MODES = ("codec", "data keys", "data keys + stores")
SETTINGS: dict[str, DataKeySettings | None] = {
    "codec": None,
    "data keys": DataKeySettings(store="sqlite:sessions.db"),
    "data keys + stores": DataKeySettings(store="sqlite:sessions.db", seal_stores=True),
}


def _key_file(folder: Path, settings: DataKeySettings | None) -> Path:
    """A key file in the worker's data directory, so ``sqlite:sessions.db`` is its store."""
    folder.mkdir()
    ring = EncryptionKeys.generate()
    path = folder / "keys.json"
    write_key_file(path, EncryptionKeys(ring.current, ring.keys, data_keys=settings))
    return path


def micro(tmp: Path, rounds: int = 20_000) -> dict[str, float]:
    """Microseconds to seal and open one 2 KB payload: master key, then a cached data key."""
    payload = Payload(metadata={"encoding": b"json/plain"}, data=b"x" * 2048)
    codec = EncryptionCodec(EncryptionKeys.generate(), key_store=FileKeyStore(tmp / "micro"))
    scoped = codec.with_context(WorkflowSerializationContext("default", "adk/app/u/s"))
    figures = {}
    for name, sealing in (("master", codec), ("data_key", scoped)):
        sealing.decode_payload(sealing.encode_payload(payload))  # makes the key
        start = time.perf_counter()
        for _ in range(rounds):
            sealing.decode_payload(sealing.encode_payload(payload))
        figures[name] = (time.perf_counter() - start) / rounds * 1e6
    return figures


async def main(sessions: int, turns: int) -> None:
    results: dict[str, list[Session]] = {mode: [] for mode in MODES}
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        folders = {mode: Path(tmp) / mode.replace(" ", "_").replace("+", "and") for mode in MODES}
        files = {mode: _key_file(folders[mode], SETTINGS[mode]) for mode in MODES}
        clients = {
            m: await connect(server.address, EncryptionCodec.from_file(files[m])) for m in MODES
        }
        workers = {
            mode: WorkerProcess(
                server.address, folders[mode], env={**os.environ, KEY_FILE_ENV: str(files[mode])}
            )
            for mode in MODES
        }
        for mode in MODES:
            workers[mode].__enter__()
        try:
            adks = {m: AdkClient(clients[m], task_queue=workers[m].task_queue) for m in MODES}
            for mode in MODES:  # warm-up: imports, connections, the first tasks
                for turn in (1, 2, 3):
                    await run_adk_turn(adks[mode], f"warm-{folders[mode].name}", turn, TOOLS)
            for i in range(sessions):
                for mode in MODES:
                    run = functools.partial(
                        run_adk_turn, adks[mode], f"{folders[mode].name}-{i}", tools=TOOLS
                    )
                    results[mode].append(await session(clients[mode], workers[mode], turns, run))
        finally:
            for mode in MODES:
                workers[mode].__exit__(None, None, None)
        sealing = micro(Path(tmp))
    report(results, sessions, turns, sealing)


def report(
    results: dict[str, list[Session]], sessions: int, turns: int, sealing: dict[str, float]
) -> None:
    print(f"server: {SERVER_NOTE}")
    print(
        f"{sessions} sessions x {turns} turns per mode, K={TOOLS}, a new session (and key) "
        "each; cells: median over sessions [min–max] of each session's median"
    )
    rows = [
        [
            mode,
            spread_cell(per_session(results[mode], "step_seconds"), MS),
            spread_cell(per_session(results[mode], "cpu_seconds_per_model_step"), MS),
        ]
        for mode in MODES
    ]
    print_table(
        "Step (server-side, ms) and worker CPU per model step (ms)",
        ["", "step", "CPU/model step"],
        rows,
    )
    figures: dict[str, Any] = {"sessions": sessions, "turns": turns, "seal_open_us": sealing}
    for mode in MODES[1:]:
        for key, label in (("step_seconds", "step"), ("cpu_seconds_per_model_step", "cpu")):
            ours, base = per_session(results[mode], key), per_session(results["codec"], key)
            value = median(ours) / median(base)
            paired = ratios(ours, base)
            figures[f"{mode.replace(' ', '_')}_{label}_ratio"] = {
                "value": round(value, 3),
                "paired_min": round(min(paired), 3),
                "paired_max": round(max(paired), 3),
            }
            print(
                f"{mode} / codec, {label}: {value:.2f}x "
                f"[paired {min(paired):.2f}–{max(paired):.2f}]"
            )
    print(
        f"seal + open one 2 KB payload in process: master key {sealing['master']:.1f} µs, "
        f"cached data key {sealing['data_key']:.1f} µs"
    )
    write_results("data_keys", figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.sessions, options.turns))
    finish()
