"""Replay speed: recorded sessions replayed per second on the scripted model.

Records N sessions (default 200) of the weather example in a SQLite session store and a
file artifact store — 3 turns each: a two-city forecast, a paid report with its approval,
a report update — then replays all of them against a changed instruction at concurrency
1, 4 and 16 (``adk_temporal.evaluation.replay_sessions``: tools served from the record,
approvals answered as recorded, in-memory copies). Printed: sessions and turns per second
for each concurrency (median over the repeats, [min–max]), and the check that nothing was
written to the live store (its bytes' digest before and after).

Run: ``python benchmarks/replay_eval.py [--sessions 200 --repeats 3]``
(writes results/replay_eval.json).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

from adk_temporal.app import Stores
from adk_temporal.artifacts import FileArtifactService
from adk_temporal.evaluation import CandidateChange, ReplayOptions, replay_sessions
from adk_temporal.examples.weather import app
from adk_temporal.ids import SessionKey
from adk_temporal.runner import Runner
from adk_temporal.sessions import SqliteSessionService

RESULTS = Path(__file__).parent / "results" / "replay_eval.json"
TURNS = 3


async def _record(data: Path, sessions: int) -> list[SessionKey]:
    stores = Stores(SqliteSessionService(data / "sessions.db"), FileArtifactService(data / "a"))
    runner = Runner(app, stores=stores)
    keys = [SessionKey("weather", f"u{i % 10}", f"s-{i:04d}") for i in range(sessions)]
    for key in keys:
        await runner.run(*key, "weather_agent", "What's the weather in Paris and Rome?")
        run = await runner.start(*key, "weather_agent", "Buy a report for Oslo")
        await run.wait_for_status("awaiting_confirmation")
        [request] = await run.pending()
        await run.confirm(request.id, True)
        await run.result()
        await runner.run(*key, "weather_agent", "update the report for Oslo: bring gloves")
    await stores.sessions.close()
    return keys


async def _replay(data: Path, keys: list[SessionKey], concurrency: int) -> tuple[float, int]:
    store = SqliteSessionService(data / "sessions.db")
    change = CandidateChange(instructions={"weather_agent": "Answer in one sentence."})
    started = time.perf_counter()
    report = await replay_sessions(
        store,
        FileArtifactService(data / "a"),
        keys,
        app,
        change,
        ReplayOptions(concurrency=concurrency),
    )
    took = time.perf_counter() - started
    await store.close()
    return took, report.totals()["errors"]


def _digest(data: Path) -> str:
    return hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())
    ).hexdigest()


async def main(sessions: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        started = time.perf_counter()
        keys = await _record(data, sessions)
        print(
            f"recorded {sessions} sessions × {TURNS} turns in {time.perf_counter() - started:.1f} s"
        )
        before = _digest(data)
        results = {}
        for concurrency in (1, 4, 16):
            rates = []
            for _ in range(repeats):
                took, errors = await _replay(data, keys, concurrency)
                assert errors == 0
                rates.append(sessions / took)
            median = statistics.median(rates)
            results[concurrency] = {"sessions_per_s": rates, "median": median}
            print(
                f"concurrency {concurrency:>2}: {median:.1f} sessions/s "
                f"[{min(rates):.1f}–{max(rates):.1f}], {median * TURNS:.1f} turns/s"
            )
        unchanged = _digest(data) == before
        print(f"live store unchanged: {unchanged}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": {
                    "python": platform.python_version(),
                    "time": time.strftime("%Y-%m-%d %H:%M"),
                },
                "sessions": sessions,
                "turns_per_session": TURNS,
                "by_concurrency": results,
                "live_store_unchanged": unchanged,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.sessions, args.repeats))
