"""Many runs waiting for a person at once: start them, list them, answer them all.

N invocations (``--runs``, default 10,000) each pause for an approval, on the SQLite dev
server with a PostgreSQL session store (a throwaway cluster, ``adk_temporal.testing``) and
one worker process with a bounded sticky cache (``--cache``). Printed:

- the start rate, and the worker's RSS as runs pile up and while they all wait;
- the time of ``pending --json`` (every page, and one page), ``list`` (the default 50,
  every page) and of the gateway's paginated listings (first page, a page deep in the list)
  and the console's app page (first page and a deep one);
- the approval round trip at rest (answer sent → approved tool re-entered) by update,
  signal and HTTP, against the bare workflow of ``_bare_approval.py`` (signal → activity);
- then every run answered through the gateway's HTTP API at a fixed rate (``--rate``):
  resume latency p50/p99 under that load (bare approvals interleaved for the same-run
  ratio), and that each approved tool ran exactly once (lost, duplicates).

Run: ``python benchmarks/waiting_at_scale.py --runs 1000`` (``--cache``: the worker's
``max_cached_workflows``, by default the worker's own default, 1,000; ``--local-steps``: model
steps local, and ``purchase`` until it is approved; ``--no-freeze-heap``: the worker without
``worker.freeze_heap``; writes results/waiting_at_scale_1000.json, at the default 10,000
results/waiting_at_scale.json, a suffix naming each option that differs, e.g.
``_cache100``); ``--rest-only`` measures only the round trip at rest
(results/approval_round_trip.json). The worker is this script run with ``--serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import uvicorn
from _bare_approval import APPROVE_SIGNAL, BareApprovalInput, BareApprovalWorkflow, bare_approved
from _common import (
    InstantModel,
    connect,
    dev_server,
    finish,
    machine_info,
    percentile,
    print_table,
    scratch_dir,
    write_results,
)
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.context import ToolContext
from adk_temporal.dispatch import LocalSteps
from adk_temporal.models import ModelRegistry
from adk_temporal.ports import free_port
from adk_temporal.sessions import PostgresSessionService
from adk_temporal.testing.postgres import PostgresServer
from adk_temporal.web.auth import ALL_APPS, TokenBook
from adk_temporal.web.cookies import COOKIE
from adk_temporal.web.gateway import Gateway
from adk_temporal.web.server import create_app
from adk_temporal.worker import MAX_CACHED_WORKFLOWS, build_worker, freeze_heap

APP = "waiting"
AGENT = "buyer"
TOKEN = "t-bench-0123456789abcdef"
RECORD_ENV = "WAITING_RECORD"
"""The file the approved tool appends one line to each time it runs."""
STARTS_IN_FLIGHT = 50
REST_SAMPLES = 30
DEFAULT_RUNS = 10_000
PAGE = 50
_SETTLE_SECONDS = 0.2
"""The pause after a run at rest finished, before the next answer."""
_WAITING = f"AdkApp = '{APP}' AND AdkStatus = 'awaiting_confirmation'"


async def purchase(topic: str, ctx: ToolContext) -> dict[str, Any]:
    """Buy the item once a human approves it.

    Args:
        topic: What to buy.
    """
    if ctx.tool_confirmation is None:
        ctx.request_confirmation(hint=f"Buy {topic}?")
        return {"topic": topic, "status": "waiting for approval"}
    with open(os.environ[RECORD_ENV], "a") as record:
        record.write(json.dumps({"key": topic, "t": time.time()}) + "\n")
    return {"topic": topic, "status": "bought"}


def _app(named: bool = True, local: bool = False) -> App:
    models = ModelRegistry()
    models.register(
        "instant:buyer",
        lambda name: InstantModel(
            name, pattern=r"buy (?P<topic>\S+)", calls=[("purchase", "")], answer="Bought {topic}."
        ),
    )
    # A named app's steps run on its own queue; unnamed, on the run's queue, where Temporal
    # may hand a step to the worker that scheduled it (eager), as it does bare's activity.
    return App(
        name=APP if named else None,
        agents=[Agent(AGENT, "instant:buyer", tools=[purchase])],
        models=models,
        local_steps=LocalSteps(tools={"purchase"}) if local else None,
    )


async def _serve(
    address: str, task_queue: str, dsn: str, cache: int, named: bool, local: bool, frozen: bool
) -> None:
    client = await connect(address)
    sessions = PostgresSessionService(dsn, max_connections=20)
    adk_worker = build_worker(
        client,
        _app(named, local),
        task_queue=task_queue,
        stores=Stores(sessions),
        max_cached_workflows=cache,
    )
    bare = Worker(
        client,
        task_queue=f"{task_queue}-bare",
        workflows=[BareApprovalWorkflow],
        activities=[bare_approved],
        max_cached_workflows=cache,
    )
    if frozen:
        freeze_heap()  # as ``adk-temporal worker`` does before its workers start
    async with adk_worker, bare:
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the parent closes our stdin
    await sessions.close()


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    began = time.perf_counter()
    await call()
    return time.perf_counter() - began


def _cli(*args: str) -> float:
    command = [str(Path(sys.executable).parent / "adk-temporal"), *args]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return seconds


async def _wait_records(path: Path, keys: set[str], timeout: float = 600) -> dict[str, float]:
    """The first record time of each key, once every key has one."""
    async with asyncio.timeout(timeout):
        while True:
            first: dict[str, float] = {}
            for row in _records(path):
                first.setdefault(row["key"], row["t"])
            if keys <= first.keys():
                return first
            await asyncio.sleep(0.05)


async def _wait_count(client: Client, query: str, count: int) -> None:
    while (await client.count_workflows(query)).count < count:
        await asyncio.sleep(0.5)  # visibility lags the last upserts a little


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": percentile(values, 50) * 1000,
        "p99": percentile(values, 99) * 1000,
        "max": percentile(values, 100) * 1000,
    }


class Bench:
    """One benchmark run: the server, the worker, the gateway and the figures."""

    def __init__(self, client: Client, address: str, task_queue: str, tmp: Path, pid: int):
        self.client = client
        self.address = address
        self.task_queue = task_queue
        self.adk = AdkClient(client, task_queue=task_queue)
        self.record = tmp / "tool.jsonl"
        self.bare_record = tmp / "bare.jsonl"
        self.pid = pid
        self.figures: dict[str, Any] = {}
        self.rss: list[tuple[int, float]] = []
        self.outcomes: Counter[int] = Counter()
        """HTTP statuses of the answers: 200 applied by a worker, 202 held as a signal."""
        served = Gateway(adk=self.adk, answer_wait=5.0)
        self.asgi = create_app(served, TokenBook.parse(f"{TOKEN} {APP}", "tokens"), console=True)
        self.port = free_port()
        self.http = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=120,
        )
        self.http.cookies.set(
            COOKIE, self.asgi.state.console_sessions.sign_in(frozenset({ALL_APPS}))
        )

    async def start_runs(self, prefix: str, count: int) -> tuple[list[str], float]:
        """Start ``count`` runs that each pause for an approval; their sessions and seconds."""
        gate = asyncio.Semaphore(STARTS_IN_FLIGHT)
        sessions = [f"{prefix}{i:05d}" for i in range(count)]

        async def one(session: str) -> None:
            async with gate:
                await self.adk.start(APP, "u", session, AGENT, f"buy {session}")

        began = time.perf_counter()
        await asyncio.gather(*(one(s) for s in sessions))
        return sessions, time.perf_counter() - began

    async def confirmation_ids(self) -> dict[str, str]:
        """Session → open confirmation id, paging through the gateway's pending listing."""
        found: dict[str, str] = {}
        token = ""
        while True:
            reply = await self.http.get(
                f"/v1/apps/{APP}/pending", params={"page_size": 1000, "page_token": token}
            )
            reply.raise_for_status()
            body = reply.json()
            for run in body["runs"]:
                for request in run["requests"]:
                    found[run["session_id"]] = request["id"]
            token = body["next_page_token"]
            if not token:
                return found

    async def answer_http(self, session: str, confirmation_id: str) -> None:
        """Approve through the gateway's API."""
        reply = await self.http.post(
            f"/v1/apps/{APP}/users/u/sessions/{session}/confirm",
            json={"confirmation_id": confirmation_id, "confirmed": True},
        )
        if reply.status_code not in (200, 202):
            raise RuntimeError(f"confirm {session}: {reply.status_code} {reply.text}")
        self.outcomes[reply.status_code] += 1

    async def start_bare(self, keys: list[str]) -> None:
        """Bare workflows waiting for their signal."""
        for key in keys:
            await self.client.start_workflow(
                BareApprovalWorkflow.run,
                BareApprovalInput(key, str(self.bare_record)),
                id=f"bare-{key}",
                task_queue=f"{self.task_queue}-bare",
            )

    async def signal_bare(self, key: str) -> None:
        """Approve one bare workflow."""
        await self.client.get_workflow_handle(f"bare-{key}").signal(APPROVE_SIGNAL)

    async def sample_rss(self, every: float = 2.0) -> None:
        """Append (runs waiting so far, by visibility; worker RSS MiB) every ``every`` s."""
        while True:
            waiting = (await self.client.count_workflows(_WAITING)).count
            self.rss.append((waiting, _rss_mib(self.pid)))
            await asyncio.sleep(every)


async def at_rest(bench: Bench, n: int) -> dict[str, Any]:
    """``n`` approval round trips of each way, with nothing else running, one at a time and
    interleaved, so each way of answering and the bare workflow see the same machine:
    update, signal and HTTP against the bare signal. Each run is let finish, and the
    server settle, before the next answer, so no answer is measured while the last run's
    tail (its final model step and append, the server's work on its close) still works;
    the ways take turns in a shuffled order each round, so none always follows another."""
    sessions, _ = await bench.start_runs("rest", 3 * n)
    bare = [f"rest{i}" for i in range(n)]
    await bench.start_bare(bare)
    await _wait_count(bench.client, _WAITING, len(sessions))
    ids = await bench.confirmation_ids()
    wid = "adk/" + APP + "/u/{}"

    async def by_update(session: str) -> None:
        await bench.adk.handle(wid.format(session)).confirm(ids[session], True)

    async def by_signal(session: str) -> None:
        await bench.adk.handle(wid.format(session)).confirm(ids[session], True, checked=False)

    async def by_http(session: str) -> None:
        await bench.answer_http(session, ids[session])

    ways: dict[str, tuple[list[str], Callable[[str], Awaitable[Any]], Path]] = {
        "bare signal → activity": (bare, bench.signal_bare, bench.bare_record),
        "update → tool": (sessions[:n], by_update, bench.record),
        "signal → tool": (sessions[n : 2 * n], by_signal, bench.record),
        "HTTP → tool": (sessions[2 * n :], by_http, bench.record),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    turns = random.Random(0)
    for i in range(n):
        order = list(ways.items())
        turns.shuffle(order)
        for name, (keys, answer, record) in order:
            sent = time.time()
            await answer(keys[i])
            first = await _wait_records(record, {keys[i]})
            seconds[name].append(first[keys[i]] - sent)
            run = f"bare-{keys[i]}" if record == bench.bare_record else wid.format(keys[i])
            await bench.client.get_workflow_handle(run).result()
            await asyncio.sleep(_SETTLE_SECONDS)
    return {name: _ms(values) for name, values in seconds.items()}


async def listings(bench: Bench, runs: int) -> dict[str, float]:
    """Seconds of each listing over ``runs`` waiting runs (plus the at-rest ones, closed)."""
    where = ("--address", bench.address, "--task-queue", bench.task_queue)
    deep_token = ""
    for _ in range(max(0, runs // PAGE // 2)):
        reply = await bench.http.get(
            f"/v1/apps/{APP}/pending", params={"page_size": PAGE, "page_token": deep_token}
        )
        deep_token = reply.json()["next_page_token"] or ""

    async def get(path: str, **params: str) -> None:
        reply = await bench.http.get(path, params=params)
        if reply.status_code != 200:
            failed.append(f"{path} {params}: HTTP {reply.status_code}")

    failed: list[str] = []

    timed = {
        "cli pending --json (every page)": _cli("pending", "--json", *where),
        "cli pending --json --page-size 50": _cli("pending", "--json", "--page-size", "50", *where),
        "cli list (newest 50)": _cli("list", "--app", APP, *where),
        "cli list --json --all": _cli("list", "--app", APP, "--json", "--all", *where),
        "cli --version (start-up only)": _cli("--version"),
        "API GET /pending first page (50)": await _timed(
            lambda: get(f"/v1/apps/{APP}/pending", page_size="50")
        ),
        f"API GET /pending page {runs // PAGE // 2 + 1} (50)": await _timed(
            lambda: get(f"/v1/apps/{APP}/pending", page_size="50", page_token=deep_token)
        ),
        "API GET /runs first page (50)": await _timed(lambda: get(f"/v1/apps/{APP}/runs")),
        "console app page, first page": await _timed(lambda: get(f"/console/apps/{APP}")),
        f"console app page, page {runs // PAGE // 2 + 1}": await _timed(
            # The console pages the same listing, so the API's token opens the same page.
            lambda: get(f"/console/apps/{APP}", page=deep_token)
        ),
    }
    if failed:
        # Reported, not fatal: the figures of the other phases still count.
        print(f"listings that failed: {failed}", flush=True)
    return timed


async def answer_all(bench: Bench, sessions: list[str], rate: float) -> dict[str, Any]:
    """Approve every run through the API at ``rate`` per second, with one bare approval per
    ``len(sessions) / REST_SAMPLES`` answers; latencies and exactly-once counts."""
    ids = await bench.confirmation_ids()
    bench.outcomes.clear()
    bare = [f"load{i}" for i in range(REST_SAMPLES)]
    await bench.start_bare(bare)
    every = max(1, len(sessions) // REST_SAMPLES)
    sent: dict[str, float] = {}
    bare_sent: dict[str, float] = {}
    tasks: list[asyncio.Task[None]] = []
    began = time.perf_counter()
    for n, session in enumerate(sessions):
        # A fixed schedule, not answer-after-answer: a slow reply must not slow the rate.
        await asyncio.sleep(max(0.0, began + n / rate - time.perf_counter()))
        sent[session] = time.time()
        tasks.append(asyncio.create_task(bench.answer_http(session, ids[session])))
        if n % every == 0 and n // every < len(bare):
            key = bare[n // every]
            bare_sent[key] = time.time()
            tasks.append(asyncio.create_task(bench.signal_bare(key)))
    await asyncio.gather(*tasks)
    answered_in = time.perf_counter() - began
    first = await _wait_records(bench.record, set(sessions), timeout=1800)
    bare_first = await _wait_records(bench.bare_record, set(bare))
    counts = Counter(r["key"] for r in _records(bench.record) if r["key"] in set(sessions))
    return {
        "rate_per_s": rate,
        "answering_seconds": answered_in,
        "resume_ms": _ms([first[s] - sent[s] for s in sessions]),
        "bare_ms": _ms([bare_first[k] - bare_sent[k] for k in bare]),
        "applied_200": bench.outcomes[200],
        "held_as_signal_202": bench.outcomes[202],
        "lost": sum(1 for s in sessions if counts[s] == 0),
        "duplicates": sum(c - 1 for c in counts.values() if c > 1),
    }


async def run(options: argparse.Namespace) -> dict[str, Any]:
    """The whole benchmark; its figures."""
    with scratch_dir() as name, dev_server(Path(name)) as server, PostgresServer().start() as pg:
        tmp = Path(name)
        dsn = pg.create_database()
        task_queue = f"waiting-{uuid.uuid4().hex[:8]}"
        env = {**os.environ, RECORD_ENV: str(tmp / "tool.jsonl")}
        worker = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--address", server.address, "--task-queue",
             task_queue, "--dsn", dsn, "--cache", str(options.cache),
             *(["--unnamed-app"] if options.unnamed_app else []),
             *(["--local-steps"] if options.local_steps else []),
             *(["--no-freeze-heap"] if options.no_freeze_heap else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert worker.stdout is not None and worker.stdin is not None
        if worker.stdout.readline().strip() != "ready":
            raise RuntimeError("the worker did not start")
        client = await connect(server.address)
        bench = Bench(client, server.address, task_queue, tmp, worker.pid)
        gateway = uvicorn.Server(
            uvicorn.Config(bench.asgi, host="127.0.0.1", port=bench.port, log_level="warning")
        )
        serving = asyncio.create_task(gateway.serve())
        while not gateway.started:
            await asyncio.sleep(0.05)
        try:
            await _measure(bench, options)
            return bench.figures
        finally:
            gateway.should_exit = True
            await serving
            worker.stdin.close()
            worker.wait(timeout=60)


async def _measure(bench: Bench, options: argparse.Namespace) -> None:
    figures = bench.figures
    if not options.unnamed_app:
        # As in a deployment whose workers are up: runs start on the app's own queue, where
        # their steps run (a run started on the shared queue moves its steps there).
        async with asyncio.timeout(60):
            while await bench.adk.start_queue(APP) == bench.task_queue:
                await asyncio.sleep(1)
    figures["rss_idle_mib"] = _rss_mib(bench.pid)
    figures["load_before"] = os.getloadavg()
    figures["samples"] = options.samples
    figures["at_rest_ms"] = await at_rest(bench, options.samples)
    print(f"at rest: {json.dumps(figures['at_rest_ms'])}", flush=True)
    if options.rest_only:
        return
    sampler = asyncio.create_task(bench.sample_rss())
    gate = asyncio.Semaphore(STARTS_IN_FLIGHT)
    sessions = [f"s{i:05d}" for i in range(options.runs)]

    async def one(session: str) -> None:
        async with gate:
            await bench.adk.start(APP, "u", session, AGENT, f"buy {session}")

    began = time.perf_counter()
    await asyncio.gather(*(one(s) for s in sessions))
    figures["start_seconds"] = time.perf_counter() - began
    figures["start_rate_per_s"] = options.runs / figures["start_seconds"]
    await _wait_count(bench.client, _WAITING, options.runs)
    figures["all_waiting_seconds"] = time.perf_counter() - began
    await asyncio.sleep(5)
    sampler.cancel()
    figures["rss_mib_by_waiting"] = bench.rss
    figures["rss_waiting_mib"] = _rss_mib(bench.pid)
    print(f"waiting: {json.dumps(figures)}", flush=True)
    figures["listing_seconds"] = await listings(bench, options.runs)
    print(f"listings: {json.dumps(figures['listing_seconds'])}", flush=True)
    figures["answer_all"] = await answer_all(bench, sessions, options.rate)
    figures["rss_after_mib"] = _rss_mib(bench.pid)


def _report_rest(figures: dict[str, Any]) -> None:
    rest = figures["at_rest_ms"]
    bare = rest["bare signal → activity"]["p50"]
    print_table(
        f"Approval round trip at rest (ms, {figures['samples']} each; ratio = p50 / bare p50)",
        ["answer", "p50", "p99", "max", "× bare"],
        [[k, v["p50"], v["p99"], v["max"], v["p50"] / bare] for k, v in rest.items()],
    )


def _report(options: argparse.Namespace, figures: dict[str, Any]) -> None:
    print(f"machine: {machine_info()}")
    print(f"load average before: {figures['load_before']}, after: {os.getloadavg()}")
    _report_rest(figures)
    if options.rest_only:
        return
    print(f"{options.runs} waiting runs, worker cache max_cached_workflows={options.cache}")
    print(
        f"started in {figures['start_seconds']:.1f} s ({figures['start_rate_per_s']:.1f}/s); "
        f"all waiting (visibility) after {figures['all_waiting_seconds']:.1f} s"
    )
    samples = figures["rss_mib_by_waiting"]
    marks = [samples[int(i * (len(samples) - 1) / 8)] for i in range(9)] if samples else []
    print_table(
        "Worker RSS (MiB) as runs pile up",
        ["runs waiting", "RSS MiB"],
        [[n, rss] for n, rss in marks]
        + [
            ["all waiting", figures["rss_waiting_mib"]],
            ["after answers", figures["rss_after_mib"]],
        ],
    )
    print_table(
        "Listings (seconds)",
        ["listing", "seconds"],
        [[k, v] for k, v in figures["listing_seconds"].items()],
    )
    load = figures["answer_all"]
    print_table(
        f"Answering all {options.runs} through the API at {options.rate}/s "
        f"(took {load['answering_seconds']:.1f} s)",
        ["what", "p50 ms", "p99 ms", "max ms", "× bare p50"],
        [
            ["HTTP answer → tool re-entered", *load["resume_ms"].values(),
             load["resume_ms"]["p50"] / load["bare_ms"]["p50"]],
            ["bare signal → activity (same load)", *load["bare_ms"].values(), 1.0],
        ],
    )  # fmt: skip
    print(
        f"\nanswers applied by a worker (200): {load['applied_200']}, held as a signal (202): "
        f"{load['held_as_signal_202']}"
    )
    print(f"exactly once: lost {load['lost']}, duplicates {load['duplicates']}")


def main() -> None:
    """Parse the flags; run the benchmark, or serve as its worker with ``--serve``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument(
        "--cache", type=int, default=MAX_CACHED_WORKFLOWS, help="the worker's max_cached_workflows"
    )
    parser.add_argument("--rate", type=float, default=5.0, help="answers per second")
    parser.add_argument(
        "--rest-only", action="store_true", help="only the approval round trip at rest"
    )
    parser.add_argument(
        "--samples", type=int, default=REST_SAMPLES, help="answers of each way at rest"
    )
    parser.add_argument(
        "--unnamed-app",
        action="store_true",
        help="serve the agents as an unnamed app: steps on the run's own task queue",
    )
    parser.add_argument(
        "--local-steps",
        action="store_true",
        help="App.local_steps: model steps local (an approved call stays an activity)",
    )
    parser.add_argument(
        "--no-freeze-heap",
        action="store_true",
        help="leave the worker's start-up objects to the collector (worker.freeze_heap off)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--task-queue", help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        asyncio.run(
            _serve(
                options.address,
                options.task_queue,
                options.dsn,
                options.cache,
                not options.unnamed_app,
                options.local_steps,
                not options.no_freeze_heap,
            )
        )
        finish()
    figures = asyncio.run(run(options))
    _report(options, figures)
    name = "approval_round_trip" if options.rest_only else "waiting_at_scale"
    if not options.rest_only and options.runs != DEFAULT_RUNS:
        name += f"_{options.runs}"  # the 10,000-run figures stay beside it
    if options.cache != MAX_CACHED_WORKFLOWS:
        name += f"_cache{options.cache}"
    if options.unnamed_app:
        name += "_unnamed_app"
    if options.local_steps:
        name += "_local_steps"
    if options.no_freeze_heap:
        name += "_no_freeze_heap"
    write_results(name, {"runs": options.runs, "cache": options.cache, **figures})
    finish()


if __name__ == "__main__":
    main()
