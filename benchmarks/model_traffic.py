"""Model traffic: a rate limit shared by worker processes, Retry-After, priorities.

Real ``adk-temporal worker`` processes (``--app _traffic_app:app``, one Gemini agent) call the
fake Gemini server on loopback through the real google-genai client; the embedded dev server
runs with the benchmarks' fast-poll config plus **one task-queue partition** (Temporal keeps
a queue's rate and its priority order within a partition, as a deployment configures its
model queues). Each scenario has its own task queue, fake server and worker processes:

1. **Shared limit**: ``--invocations`` one-step invocations started at once against
   ``--model-limit 'gemini-*=RATE/s,4@gemini'`` given to ``--workers`` processes; the fake
   server refuses (429 + ``Retry-After: 1``) beyond a quota of ``--quota`` requests in any
   trailing second. Per round, for the requests as the server received them and for the
   model steps as Temporal dispatched them (ActivityTaskStarted on the model queue): the most
   in any 1 s window, over the whole round and over windows starting 1 s or more after its
   first request (Temporal's token bucket lets an idle queue start with a burst), the most
   in any 5 s window, the long-run rate (requests / span, first to last request), the rate
   after the first second; then dispatch → arrival at the server, failed invocations and
   429s. Rounds run on the same workers and queue, ``--idle`` seconds apart (the queue
   idle, as between bursts of traffic).
2. **Retry-After, no limit**: ``--retry-invocations`` invocations at once; the server answers
   the first request of each (keyed by the conversation's first user text) with 429 +
   ``Retry-After: 2``. The delay between each invocation's first and second request (the
   server's arrival times), and failures.
3. **Priorities**: a limit that binds (``--priority-rate``, default 2/s); ``--batch``
   invocations at priority 5 started at once, then, while they are still queued,
   ``--interactive`` invocations at priority 1, one every ``--interval`` seconds. Queueing
   delay of each invocation's model step on the model queue (its ActivityTaskScheduled →
   ActivityTaskStarted in the run's history), interactive against batch; how many batch
   steps were waiting when each interactive step was scheduled, and how many of them started
   before it; client start → the server's arrival of the interactive request.

Targets: (1) max 1 s window <= 1.1 x the rate, 0 failures, 0 429s; (2) every retry delay
>= 2 s, 0 failures; (3) interactive p90 queueing delay <= 2 steps' time (2 / rate seconds).

Run: ``python benchmarks/model_traffic.py [--invocations 100 --rate 5 --rounds 3 ...]``
(writes results/model_traffic.json).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import (
    SERVER_CONFIG,
    SERVER_NOTE,
    connect,
    finish,
    percentile,
    print_table,
    scratch_dir,
    spread,
    spread_cell,
    write_results,
)
from _traffic_app import AGENT, APP_NAME, GEMINI_ENV
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.model_limits import model_queue
from adk_temporal.testing.fake_gemini import FakeGeminiServer

BENCH_DIR = Path(__file__).resolve().parent
USER = "u"
RETRY_AFTER = 2.0
QUOTA_RETRY_AFTER = 1.0
WINDOW_SLACK = 1.1
"""Target for the max 1 s window: at most this many times the limit (5/s: 5.5)."""
GROUP = "gemini"
"""The limit's name (``@gemini``), so its queue is ``<task queue>/models/gemini``."""
RESULT_TIMEOUT = 300.0
MODEL_STEP = "adk_model_step"

ONE_PARTITION = {
    "matching.numTaskqueueReadPartitions": "1",
    "matching.numTaskqueueWritePartitions": "1",
}
NOTE = f"{SERVER_NOTE}, matching.numTaskqueueRead/WritePartitions=1"


@contextmanager
def traffic_server(root: Path) -> Iterator[DevServer]:
    """The benchmarks' dev server with one partition per task queue."""
    server = DevServer(
        db_filename=root / "temporal.db",
        headless=True,
        dynamic_config={**SERVER_CONFIG, **ONE_PARTITION},
        log_path=root / "server.log",
    )
    with server:
        yield server


@contextmanager
def worker_processes(
    address: str, task_queue: str, data_dir: Path, gemini: FakeGeminiServer, count: int, *args: str
) -> Iterator[list[subprocess.Popen[str]]]:
    """``count`` ``adk-temporal worker`` processes on ``task_queue`` sharing ``data_dir``,
    calling ``gemini``; stopped with SIGTERM (a graceful shutdown) when the block ends."""
    command = [
        sys.executable,
        "-m",
        "adk_temporal.cli",
        "worker",
        "--app",
        "_traffic_app:app",
        "--address",
        address,
        "--task-queue",
        task_queue,
        "--data-dir",
        str(data_dir),
        *args,
    ]
    env = {**os.environ, GEMINI_ENV: gemini.base_url}
    processes: list[subprocess.Popen[str]] = []
    try:
        for _ in range(count):
            process = subprocess.Popen(
                command,
                cwd=BENCH_DIR,  # where ``_traffic_app`` imports from
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            processes.append(process)
            _wait_ready(process)
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(process: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Block until the worker prints its ready line; its output is drained from then on."""
    ready = threading.Event()
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "worker ready" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout):
        process.kill()
        raise RuntimeError(f"worker did not start: {''.join(lines)}")


def first_user_text(body: dict[str, Any]) -> str:
    """The conversation's first user text: which invocation a request belongs to."""
    try:
        return str(body["contents"][0]["parts"][0]["text"])
    except (KeyError, IndexError, TypeError):
        return ""


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


async def _outcome(handle: InvocationHandle) -> str:
    """``completed``, another final status, or the exception's name and cause."""
    try:
        async with asyncio.timeout(RESULT_TIMEOUT):
            return (await handle.result()).status
    except Exception as err:  # a failed invocation is a figure here, not a crash
        cause = getattr(err, "cause", None)
        return f"{type(err).__name__}: {cause or err}"[:200]


# ------------------------------------------------------------------- 1. shared limit


def max_window(arrivals: Sequence[float], since: float | None = None, width: float = 1.0) -> int:
    """The most of the sorted ``arrivals`` in any window [t, t + width) starting at an
    arrival (at or after ``since`` when given); 0 for none."""
    best = 0
    last = 0
    for first, start in enumerate(arrivals):
        last = max(last, first)
        while last < len(arrivals) and arrivals[last] < start + width:
            last += 1
        if since is None or start >= since:
            best = max(best, last - first)
    return best


def worst_window_at(arrivals: Sequence[float], width: float = 1.0) -> float:
    """Seconds from the first of the sorted ``arrivals`` to the start of the fullest window."""
    best, at = 0, 0.0
    for first, start in enumerate(arrivals):
        count = sum(1 for a in arrivals[first:] if a < start + width)
        if count > best:
            best, at = count, start - arrivals[0]
    return at


def per_second(arrivals: Sequence[float]) -> list[int]:
    """Arrivals in each whole second from the first one (the last, partial second left out)."""
    if not arrivals:
        return []
    seconds = int(arrivals[-1] - arrivals[0])
    counts = [0] * max(seconds, 1)
    for at in arrivals:
        index = int(at - arrivals[0])
        if index < len(counts):
            counts[index] += 1
    return counts


def window_figures(arrivals: Sequence[float], settle: float = 5.0) -> dict[str, Any]:
    """What one round's request times say about the rate: windows, spans, rates."""
    arrivals = sorted(arrivals)
    if len(arrivals) < 2:
        return {"requests": len(arrivals)}
    span = arrivals[-1] - arrivals[0]
    after = [a for a in arrivals if a >= arrivals[0] + 1.0]
    after_span = after[-1] - (arrivals[0] + 1.0) if len(after) > 1 else float("nan")
    return {
        "requests": len(arrivals),
        "first_second": len(arrivals) - len(after),
        "max_window": max_window(arrivals),
        "max_window_after_first_second": max_window(arrivals, since=arrivals[0] + 1.0),
        "max_window_after_settling": max_window(arrivals, since=arrivals[0] + settle),
        "max_window_at_s": worst_window_at(arrivals),
        "max_5s_window": max_window(arrivals, width=5.0),
        "span_seconds": span,
        "long_run_rate": len(arrivals) / span,
        "rate_after_first_second": len(after) / after_span if after_span > 0 else float("nan"),
        "per_second": per_second(arrivals),
    }


def model_queue_step(events: Sequence[HistoryEvent], queue: str) -> tuple[float, float] | None:
    """(scheduled, started) server times of the run's first model step on ``queue``."""
    scheduled: dict[int, float] = {}
    for event in events:
        at = event.event_time.ToNanoseconds() / 1e9
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.task_queue.name == queue and attrs.activity_type.name == MODEL_STEP:
                scheduled[event.event_id] = at
        elif event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if started.scheduled_event_id in scheduled:
                return scheduled[started.scheduled_event_id], at
    return None


async def dispatch_times(
    client: Client, handles: Mapping[str, InvocationHandle], queue: str
) -> dict[str, tuple[float, float]]:
    """When each invocation's model step on ``queue`` was scheduled and when Temporal
    dispatched it (ActivityTaskStarted; a retried step keeps only its last attempt's), by
    the invocation's user text (the keys of ``handles``)."""
    times: dict[str, tuple[float, float]] = {}
    for text, handle in handles.items():
        history = await client.get_workflow_handle(
            handle.workflow_id, run_id=handle.run_id
        ).fetch_history()
        step = model_queue_step(list(history.events), queue)
        if step is not None:
            times[text] = step
    return times


def cpu_seconds(process: subprocess.Popen[str]) -> float:
    """User plus system CPU time a worker process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _burst_round(
    client: Client,
    adk: AdkClient,
    gemini: FakeGeminiServer,
    workers: Sequence[subprocess.Popen[str]],
    queue: str,
    invocations: int,
    name: str,
    settle: float,
) -> dict[str, Any]:
    """``invocations`` invocations started at once; what the server and Temporal saw."""
    load = os.getloadavg()[0]
    before = len(gemini.requests)
    cpu = sum(cpu_seconds(w) for w in workers)
    began = time.perf_counter()
    texts = [f"{name} call {n}" for n in range(invocations)]
    started = await asyncio.gather(
        *(adk.start(APP_NAME, USER, _session(), AGENT, text) for text in texts)
    )
    outcomes = await asyncio.gather(*(_outcome(h) for h in started))
    wall = time.perf_counter() - began
    cpu = sum(cpu_seconds(w) for w in workers) - cpu
    requests = gemini.requests[before:]
    steps = await dispatch_times(client, dict(zip(texts, started, strict=True)), queue)
    answered = {first_user_text(q.body): q.received_at for q in requests if q.status == 200}
    lag = [answered[t] - at for t, (_, at) in steps.items() if t in answered]
    waits = [at - scheduled for scheduled, at in steps.values()]
    return {
        "server": window_figures([q.received_at for q in requests], settle),
        "dispatch": window_figures([at for _, at in steps.values()], settle),
        "queue_wait_s": spread(waits),
        "dispatch_to_request_ms": spread([x * 1000 for x in lag]),
        "refused_429": sum(1 for q in requests if q.status == 429),
        "failed": sum(1 for o in outcomes if o != "completed"),
        "outcomes": sorted(set(outcomes)),
        "wall_seconds": wall,
        "invocations_per_second": invocations / wall,
        "worker_cpu_seconds": cpu,
        "load_average_before": load,
    }


async def shared_limit(
    client: Client,
    address: str,
    root: Path,
    options: argparse.Namespace,
    *,
    limited: bool = True,
) -> dict[str, Any]:
    """Scenario 1: rounds of a burst against the shared limit (``limited``), or one round
    of the same burst with no limit (the baseline: what this machine does unthrottled)."""
    kind = "limit" if limited else "baseline"
    task_queue = f"bench-{kind}-{uuid.uuid4().hex[:6]}"
    queue = model_queue(task_queue, GROUP) if limited else task_queue
    limit = f"gemini-*={options.rate:g}/s,4@{GROUP}"
    rounds: list[dict[str, Any]] = []
    with FakeGeminiServer() as gemini:
        gemini.answer_by_default("ok")
        gemini.limit_rate(options.quota, retry_after=QUOTA_RETRY_AFTER)
        args = ["--model-limit", limit] if limited else []
        with worker_processes(
            address, task_queue, root / f"data-{kind}", gemini, options.workers, *args
        ) as workers:
            adk = AdkClient(client, task_queue=task_queue)
            for r in range(options.rounds if limited else 1):
                if r:
                    await asyncio.sleep(options.idle)
                figures = await _burst_round(
                    client,
                    adk,
                    gemini,
                    workers,
                    queue,
                    options.invocations,
                    f"{kind} {r}",
                    options.settle,
                )
                rounds.append(figures)
                print(
                    f"shared limit, {kind} round {r + 1}: {figures['server']['requests']} "
                    f"requests in {figures['wall_seconds']:.1f} s, max 1 s window "
                    f"{figures['server']['max_window']} at the server, "
                    f"{figures['dispatch']['max_window']} dispatched; failed {figures['failed']}",
                    flush=True,
                )
    return {
        "task_queue": task_queue,
        "limit": limit if limited else None,
        "quota": options.quota,
        "workers": options.workers,
        "invocations": options.invocations,
        "idle_seconds": options.idle,
        "settle_seconds": options.settle,
        "rounds": rounds,
    }


# ----------------------------------------------------------------- 2. Retry-After


async def retry_after(
    client: Client, address: str, root: Path, options: argparse.Namespace
) -> dict[str, Any]:
    task_queue = f"bench-retry-{uuid.uuid4().hex[:6]}"
    with FakeGeminiServer() as gemini:
        gemini.answer_by_default("ok after waiting")
        gemini.refuse_first(first_user_text, retry_after=RETRY_AFTER)
        with worker_processes(address, task_queue, root / "data-retry", gemini, options.workers):
            adk = AdkClient(client, task_queue=task_queue)
            texts = [f"retry {n}" for n in range(options.retry_invocations)]
            handles = await asyncio.gather(
                *(adk.start(APP_NAME, USER, _session(), AGENT, text) for text in texts)
            )
            outcomes = await asyncio.gather(*(_outcome(h) for h in handles))
        requests = gemini.requests
    delays: list[float] = []
    shapes: set[str] = set()
    for text in texts:
        mine = sorted(
            (r for r in requests if first_user_text(r.body) == text), key=lambda r: r.received_at
        )
        shapes.add(" ".join(str(r.status) for r in mine))
        if len(mine) >= 2:
            delays.append(mine[1].received_at - mine[0].received_at)
    print(f"Retry-After: {len(delays)} retried invocations", flush=True)
    return {
        "task_queue": task_queue,
        "invocations": options.retry_invocations,
        "retry_after_seconds": RETRY_AFTER,
        "delays_seconds": delays,
        "delay": spread(delays),
        "below_retry_after": sum(1 for d in delays if d < RETRY_AFTER),
        "statuses_per_invocation": sorted(shapes),
        "failed": sum(1 for o in outcomes if o != "completed"),
        "outcomes": sorted(set(outcomes)),
    }


# ------------------------------------------------------------------- 3. priorities


async def priorities(
    client: Client, address: str, root: Path, options: argparse.Namespace
) -> dict[str, Any]:
    task_queue = f"bench-prio-{uuid.uuid4().hex[:6]}"
    queue = model_queue(task_queue, GROUP)
    rate = options.priority_rate
    limit = f"gemini-*={rate:g}/s,2@{GROUP}"
    with FakeGeminiServer() as gemini:
        gemini.answer_by_default("ok")
        with worker_processes(
            address, task_queue, root / "data-prio", gemini, options.workers, "--model-limit", limit
        ):
            adk = AdkClient(client, task_queue=task_queue)
            batch = await asyncio.gather(
                *(
                    adk.start(APP_NAME, USER, _session(), AGENT, f"batch {n}", priority=5)
                    for n in range(options.batch)
                )
            )
            # The batch's steps are on the model queue and draining before the first
            # interactive invocation starts.
            async with asyncio.timeout(60):
                while len(gemini.requests) < min(options.batch, max(2, int(2 * rate))):
                    await asyncio.sleep(0.05)
            interactive: list[InvocationHandle] = []
            started_at: dict[str, float] = {}
            for n in range(options.interactive):
                text = f"interactive {n}"
                started_at[text] = time.time()
                interactive.append(
                    await adk.start(APP_NAME, USER, _session(), AGENT, text, priority=1)
                )
                await asyncio.sleep(options.interval)
            outcomes = await asyncio.gather(*(_outcome(h) for h in [*batch, *interactive]))
        requests = gemini.requests
    batch_steps = list(
        (
            await dispatch_times(client, {f"batch {n}": h for n, h in enumerate(batch)}, queue)
        ).values()
    )
    interactive_steps = list(
        (
            await dispatch_times(client, dict(zip(started_at, interactive, strict=True)), queue)
        ).values()
    )
    batch_delays = [started - scheduled for scheduled, started in batch_steps]
    interactive_delays = [started - scheduled for scheduled, started in interactive_steps]
    # At each interactive step's scheduling: batch steps waiting (scheduled before, started
    # after) and, of those, how many started before the interactive one.
    waiting: list[int] = []
    overtaken: list[int] = []
    for scheduled, started in interactive_steps:
        queued = [s for s_at, s in batch_steps if s_at <= scheduled < s]
        waiting.append(len(queued))
        overtaken.append(sum(1 for s in queued if s < started))
    arrival_of = {first_user_text(r.body): r.received_at for r in requests if r.status == 200}
    to_model = [arrival_of[t] - at for t, at in started_at.items() if t in arrival_of]
    print(
        f"priorities: {len(interactive_delays)} interactive, {len(batch_delays)} batch", flush=True
    )
    return {
        "task_queue": task_queue,
        "limit": limit,
        "rate": rate,
        "batch": options.batch,
        "interactive": options.interactive,
        "interval_seconds": options.interval,
        "interactive_queue_seconds": interactive_delays,
        "batch_queue_seconds": batch_delays,
        "interactive_queue": spread(interactive_delays),
        "batch_queue": spread(batch_delays),
        "batch_waiting_at_interactive": waiting,
        "batch_started_first": overtaken,
        "interactive_start_to_model_seconds": to_model,
        "failed": sum(1 for o in outcomes if o != "completed"),
        "outcomes": sorted(set(outcomes)),
    }


# ------------------------------------------------------------------------ reporting


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(
    limit: dict[str, Any],
    baseline: dict[str, Any] | None,
    retry: dict[str, Any],
    prio: dict[str, Any],
    rate: float,
) -> dict[str, dict[str, Any]]:
    rounds = limit["rounds"]
    settle = limit["settle_seconds"]
    base = baseline["rounds"] if baseline else []
    window_target = WINDOW_SLACK * rate

    def over(runs: list[dict[str, Any]], *path: str, scale: float = 1.0) -> str:
        values = []
        for run in runs:
            value: Any = run
            for key in path:
                value = value[key]
            values.append(value)
        return spread_cell(values, scale) if values else "-"

    window_rows = [
        ("max requests in a 1 s window", "max_window"),
        ("  same, windows starting >= 1 s in", "max_window_after_first_second"),
        (f"  same, windows starting >= {settle:g} s in", "max_window_after_settling"),
        ("  fullest window starts at s", "max_window_at_s"),
        ("requests in the first second", "first_second"),
        ("max requests in a 5 s window", "max_5s_window"),
        ("long-run rate (requests / span) /s", "long_run_rate"),
        ("rate after the first second /s", "rate_after_first_second"),
        ("span s", "span_seconds"),
        ("requests", "requests"),
    ]
    print(f"\nserver: {NOTE}")
    print_table(
        f"1. Shared limit: {limit['invocations']} invocations at once, {limit['limit']} on "
        f"{limit['workers']} worker processes, fake server quota {limit['quota']:g} in any "
        f"second (429 + Retry-After {QUOTA_RETRY_AFTER:g} beyond); {len(rounds)} round(s) "
        f"{limit['idle_seconds']:g} s+ apart, median [min–max] over rounds"
        f"{'; beside it one round of the same burst with no limit' if base else ''}. "
        "Requests as the server received them, model steps as Temporal dispatched them "
        "(ActivityTaskStarted)",
        ["figure", "at the server", "dispatched", "no limit: server", "no limit: dispatched"],
        [
            [
                name,
                over(rounds, "server", key),
                over(rounds, "dispatch", key),
                over(base, "server", key),
                over(base, "dispatch", key),
            ]
            for name, key in window_rows
        ]
        + [
            [
                "requests per whole second",
                spread_cell([n for r in rounds for n in r["server"]["per_second"]]),
                spread_cell([n for r in rounds for n in r["dispatch"]["per_second"]]),
                over([{"x": n} for r in base for n in r["server"]["per_second"]], "x"),
                over([{"x": n} for r in base for n in r["dispatch"]["per_second"]], "x"),
            ],
        ],
    )
    print_table(
        "   per round (median [min–max] over rounds)",
        ["figure", "limited", "no limit"],
        [
            [
                "model step waited on its queue ms, median",
                over(rounds, "queue_wait_s", "median", scale=1000),
                over(base, "queue_wait_s", "median", scale=1000),
            ],
            [
                "  same, p90",
                over(rounds, "queue_wait_s", "p90", scale=1000),
                over(base, "queue_wait_s", "p90", scale=1000),
            ],
            [
                "dispatch → request at the server ms, median",
                over(rounds, "dispatch_to_request_ms", "median"),
                over(base, "dispatch_to_request_ms", "median"),
            ],
            [
                "  same, max",
                over(rounds, "dispatch_to_request_ms", "max"),
                over(base, "dispatch_to_request_ms", "max"),
            ],
            [
                "wall s (start → all results)",
                over(rounds, "wall_seconds"),
                over(base, "wall_seconds"),
            ],
            [
                "invocations / s",
                over(rounds, "invocations_per_second"),
                over(base, "invocations_per_second"),
            ],
            [
                "worker CPU ms per invocation",
                spread_cell(
                    [r["worker_cpu_seconds"] / limit["invocations"] * 1000 for r in rounds]
                ),
                spread_cell([r["worker_cpu_seconds"] / limit["invocations"] * 1000 for r in base])
                if base
                else "-",
            ],
            [
                "load average before",
                over(rounds, "load_average_before"),
                over(base, "load_average_before"),
            ],
            ["answered 429", over(rounds, "refused_429"), over(base, "refused_429")],
            ["failed invocations", over(rounds, "failed"), over(base, "failed")],
        ],
    )
    if base:
        free = base[0]["server"]
        limited_rate = percentile([r["server"]["long_run_rate"] for r in rounds], 50)
        limited_window = percentile([r["server"]["max_window"] for r in rounds], 50)
        print(
            f"limited / no limit (medians): long-run rate "
            f"{limited_rate / free['long_run_rate']:.2f}, max 1 s window "
            f"{limited_window / free['max_window']:.2f}, 429s "
            f"{percentile([r['refused_429'] for r in rounds], 50):g} against "
            f"{base[0]['refused_429']}"
        )
    worst = max(r["server"]["max_window"] for r in rounds)
    worst_after = max(r["server"]["max_window_after_first_second"] for r in rounds)
    worst_dispatch = max(r["dispatch"]["max_window"] for r in rounds)
    worst_settled = max(r["server"]["max_window_after_settling"] for r in rounds)
    worst_dispatch_settled = max(r["dispatch"]["max_window_after_settling"] for r in rounds)
    worst_dispatch_after = max(r["dispatch"]["max_window_after_first_second"] for r in rounds)
    burst = max(r["server"]["first_second"] for r in rounds)
    worst_5s = max(r["server"]["max_5s_window"] for r in rounds)
    worst_5s_dispatch = max(r["dispatch"]["max_5s_window"] for r in rounds)
    bound = 2 * math.ceil(rate)
    bound_5s = math.ceil(rate) + 5 * rate
    print(
        f"note: Temporal's limit is a token bucket holding one second of tokens (burst = "
        f"ceil({rate:g}) = {math.ceil(rate)}): a queue that was idle starts with a full "
        f"bucket, and whenever the queue runs empty or dispatching pauses (steps arriving "
        f"slower than the rate, no poller free at that instant) tokens build up again, so any "
        f"1 s window may see up to burst + rate = {bound} dispatches, not only at the start. "
        f"Here: up to {burst} requests in a round's first second; the worst 1 s window "
        f"{worst} at the server ({worst_dispatch} dispatched) over the whole round, and "
        f"{worst_after} ({worst_dispatch_after} dispatched) among windows starting 1 s or "
        f"more after the round's first request ({worst_settled} and {worst_dispatch_settled} "
        f"among those from {settle:g} s in). Over 5 s windows the burst weighs less: at "
        f"most {worst_5s_dispatch} dispatched ({worst_5s_dispatch / (5 * rate):.2f} x the "
        f"limit; bound {bound_5s:g}, {bound_5s / (5 * rate):.2f} x) and {worst_5s} at the "
        f"server. The server counts every attempt, a refused request's retry too (history "
        f"keeps only a step's last dispatch), when it arrives, after the worker's own step "
        f"work (dispatch → request above): worker scheduling bunches arrivals further."
    )

    delays = retry["delays_seconds"]
    print_table(
        f"2. Retry-After, no limit: {retry['invocations']} invocations at once, the first "
        f"request of each answered 429 + Retry-After: {RETRY_AFTER:g}",
        ["figure", "min", "median", "max", "p10", "p90"],
        [
            [
                "first → second request s",
                min(delays, default=float("nan")),
                percentile(delays, 50),
                max(delays, default=float("nan")),
                percentile(delays, 10),
                percentile(delays, 90),
            ],
        ],
    )
    print(
        f"retried invocations {len(delays)}/{retry['invocations']}, below {RETRY_AFTER:g} s: "
        f"{retry['below_retry_after']}, statuses per invocation: "
        f"{', '.join(retry['statuses_per_invocation'])}; failed {retry['failed']}"
    )

    inter, batch = prio["interactive_queue_seconds"], prio["batch_queue_seconds"]
    step_time = 1 / prio["rate"]
    print_table(
        f"3. Priorities: {prio['limit']}, {prio['batch']} batch invocations (priority 5) at "
        f"once, then {prio['interactive']} interactive (priority 1) one every "
        f"{prio['interval_seconds']:g} s; model step on the model queue, scheduled → started "
        "(s)",
        ["", "n", "p50", "p90", "min", "max", "p50 / step time"],
        [
            [
                name,
                len(values),
                percentile(values, 50),
                percentile(values, 90),
                min(values, default=float("nan")),
                max(values, default=float("nan")),
                percentile(values, 50) / step_time,
            ]
            for name, values in (("interactive", inter), ("batch", batch))
        ],
    )
    print(
        f"batch / interactive: p50 {percentile(batch, 50) / percentile(inter, 50):.1f}, p90 "
        f"{percentile(batch, 90) / percentile(inter, 90):.1f}; "
        f"batch steps waiting when an interactive step was scheduled: "
        f"{spread_cell(prio['batch_waiting_at_interactive'])}; of those, started before it: "
        f"{spread_cell(prio['batch_started_first'])}; client start → request at the server: "
        f"{spread_cell(prio['interactive_start_to_model_seconds'], 1000)} ms; failed "
        f"{prio['failed']}"
    )

    targets: dict[str, dict[str, Any]] = {
        "max_1s_window": {
            "value": worst,
            "target": f"<= {window_target:g}",
            "met": worst <= window_target,
        },
        "max_1s_window_after_first_second": {
            "value": worst_after,
            "target": f"<= {window_target:g}",
            "met": worst_after <= window_target,
        },
        "max_1s_window_after_settling": {
            "value": worst_settled,
            "target": f"info (windows from {settle:g} s in; {window_target:g} wanted)",
        },
        "max_1s_window_dispatched": {
            "value": worst_dispatch,
            "target": f"info (token bucket bound {bound})",
        },
        "max_1s_window_dispatched_after_first_second": {
            "value": worst_dispatch_after,
            "target": "info",
        },
        "long_run_rate_at_server": {
            "value": max(r["server"]["long_run_rate"] for r in rounds),
            "target": f"info (limit {rate:g}/s)",
        },
        "shared_limit_failed": {
            "value": sum(r["failed"] for r in rounds),
            "target": "0",
            "met": all(r["failed"] == 0 for r in rounds),
        },
        "shared_limit_429": {
            "value": sum(r["refused_429"] for r in rounds),
            "target": "0",
            "met": all(r["refused_429"] == 0 for r in rounds),
        },
        "retry_delay_min_s": {
            "value": min(delays, default=float("nan")),
            "target": f">= {RETRY_AFTER:g}, every invocation retried",
            "met": len(delays) == retry["invocations"] and retry["below_retry_after"] == 0,
        },
        "retry_failed": {"value": retry["failed"], "target": "0", "met": retry["failed"] == 0},
        "interactive_queue_p90_s": {
            "value": percentile(inter, 90),
            "target": f"<= {2 * step_time:g} (2 / rate)",
            "met": percentile(inter, 90) <= 2 * step_time,
        },
        "priorities_failed": {"value": prio["failed"], "target": "0", "met": prio["failed"] == 0},
    }
    print_table(
        "Targets",
        ["figure", "value", "wanted", "met"],
        [
            [k, v["value"], v["target"], _met(v["met"]) if "met" in v else ""]
            for k, v in targets.items()
        ],
    )
    return targets


async def main(options: argparse.Namespace) -> None:
    with scratch_dir() as tmp, traffic_server(Path(tmp)) as server:
        client = await connect(server.address)
        root = Path(tmp)
        limit = await shared_limit(client, server.address, root, options)
        baseline = (
            await shared_limit(client, server.address, root, options, limited=False)
            if options.baseline
            else None
        )
        retry = await retry_after(client, server.address, root, options)
        prio = await priorities(client, server.address, root, options)
    targets = report(limit, baseline, retry, prio, options.rate)
    write_results(
        "model_traffic",
        {
            "server_note": NOTE,
            "options": vars(options),
            "shared_limit": limit,
            "no_limit_baseline": baseline,
            "retry_after": retry,
            "priorities": prio,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--invocations", type=int, default=100, help="shared limit: at once (100)")
    parser.add_argument("--rate", type=float, default=5.0, help="shared limit: requests/s (5)")
    parser.add_argument(
        "--quota", type=float, default=None, help="server quota per second (1.4 x rate)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="shared limit: rounds (3)")
    parser.add_argument(
        "--settle",
        type=float,
        default=5.0,
        help="shared limit: also the max 1 s window from this many seconds in (5)",
    )
    parser.add_argument("--idle", type=float, default=5.0, help="seconds between rounds (5)")
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="shared limit: one round of the burst with no limit beside it (on)",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    parser.add_argument(
        "--retry-invocations", type=int, default=30, help="Retry-After: invocations (30)"
    )
    parser.add_argument(
        "--priority-rate", type=float, default=2.0, help="priorities: requests/s (2)"
    )
    parser.add_argument("--batch", type=int, default=50, help="priorities: batch (50)")
    parser.add_argument("--interactive", type=int, default=10, help="priorities: interactive (10)")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between interactive starts (1)"
    )
    opts = parser.parse_args()
    if opts.quota is None:
        opts.quota = 1.4 * opts.rate
    if min(opts.invocations, opts.rounds, opts.workers, opts.retry_invocations) < 1:
        parser.error("counts must be at least 1")
    asyncio.run(main(opts))
    finish()
