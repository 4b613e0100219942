"""Listing waiting runs with no worker running: 100 paused invocations, the worker gone.

Each invocation pauses for an approval; then the worker stops. ``AdkClient.waiting_requests``
(one visibility query, the memos decoded locally) and ``adk-temporal pending --json`` (the
same from a fresh process) list every request, timed over repeats; the CLI's bare start-up
(``adk-temporal --version``) is measured beside it, since most of a command's time is Python
importing its libraries.

Run: ``python benchmarks/pending_without_worker.py`` (writes results/pending_without_worker.json).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import connect, dev_server, finish, print_table, scratch_dir, write_results

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.worker import artifact_store, build_worker, session_store

RUNS = int(os.environ.get("PENDING_RUNS", "100"))
REPEATS = 5


def _cli(*args: str) -> float:
    command = [str(Path(sys.executable).parent / "adk-temporal"), *args]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return seconds


async def main() -> None:
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        adk = AdkClient(client, task_queue="pending-bench")
        sessions = session_store(Path(tmp) / "data")
        worker = build_worker(
            client,
            App(agents=[build_weather_agent("scripted:weather")]),
            task_queue=adk.task_queue,
            stores=Stores(sessions, artifact_store(Path(tmp) / "data")),
        )
        async with worker:
            handles = await asyncio.gather(
                *(
                    adk.start(
                        APP_NAME, "u", f"s-{n}", "weather_agent", "Buy a weather report for Oslo"
                    )
                    for n in range(RUNS)
                )
            )
            # One at a time: a hundred clients polling queries at once would starve the
            # worker that has to answer them.
            for handle in handles:
                await handle.wait_for_status("awaiting_confirmation", timeout=120)
        await sessions.close()
        # No worker from here on.
        while len(await adk.waiting_requests(task_queue=adk.task_queue)) < RUNS:
            await asyncio.sleep(0.2)  # visibility lags the last upserts a little
        api = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            found = await adk.waiting_requests(task_queue=adk.task_queue)
            api.append(time.perf_counter() - start)
            assert sum(len(p.requests) for _, p in found) == RUNS
        where = ["--address", server.address, "--task-queue", adk.task_queue]
        cli = [_cli("pending", "--json", *where) for _ in range(REPEATS)]
        startup = [_cli("--version") for _ in range(REPEATS)]
    rows = [
        ["AdkClient.waiting_requests()", *_spread(api)],
        ["adk-temporal pending --json (fresh process)", *_spread(cli)],
        ["adk-temporal --version (start-up only)", *_spread(startup)],
    ]
    print_table(
        f"Listing {RUNS} waiting runs with no worker (seconds, {REPEATS} repeats)",
        ["what", "median", "min", "max"],
        rows,
    )
    write_results(
        "pending_without_worker",
        {
            "runs": RUNS,
            "repeats": REPEATS,
            "seconds": {"api": api, "cli": cli, "cli_startup": startup},
        },
    )


def _spread(values: list[float]) -> list[float]:
    return [statistics.median(values), min(values), max(values)]


if __name__ == "__main__":
    asyncio.run(main())
    finish()
