"""One trace per invocation, across a worker killed mid-pause, exported over real OTLP/HTTP.

Worker processes export with the OpenTelemetry SDK to a local collector; the client traces
with Temporal's interceptor into an in-memory exporter. The trace must hold the client's
start, the workflow, every model step and tool call on both workers (each once: a replay
emits nothing twice), the artifact save and the session appends, with no orphan span.
"""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor

from adk_temporal.client import AdkClient
from adk_temporal.converter import adk_data_converter
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.testing.otlp import CollectedSpan, OtlpCollector

from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

START = "StartWorkflow:InvocationWorkflow"
REQUEST_METRICS = ("adk.requests.opened", "adk.requests.closed", "adk.request.wait")


def _telemetry_env(collector: OtlpCollector, name: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_SERVICE_NAME": name,
        # Short batches so a worker about to be killed has exported what it did.
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRIC_EXPORT_INTERVAL": "300",
    }


async def _until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


async def _at_rest(client: Client, workflow_id: str, first_run_id: str | None) -> None:
    """Wait until the invocation runs in a later run with no step or task outstanding."""
    async with asyncio.timeout(30):
        while True:
            described = (await client.get_workflow_handle(workflow_id).describe()).raw_description
            if (
                described.workflow_execution_info.execution.run_id != first_run_id
                and not described.pending_activities
                and not described.HasField("pending_workflow_task")
            ):
                return
            await asyncio.sleep(0.05)


def _orphans(spans: list[CollectedSpan], client: InMemorySpanExporter) -> list[CollectedSpan]:
    """Spans whose parent is neither exported by a worker nor a client span."""
    known = {s.span_id for s in spans} | {
        f"{s.context.span_id:016x}" for s in client.get_finished_spans() if s.context
    }
    return [s for s in spans if s.parent_span_id and s.parent_span_id not in known]


def _named(spans: list[CollectedSpan], name: str) -> list[CollectedSpan]:
    return [s for s in spans if s.name == name]


def _run_ids(spans: list[CollectedSpan]) -> set[str]:
    """The runs whose workflow spans are among ``spans``."""
    return {s.attributes["temporalRunID"] for s in _named(spans, "RunWorkflow:InvocationWorkflow")}


async def test_one_trace_from_start_to_every_step_across_a_killed_worker(
    dev_server: DevServer, tmp_path: Path
) -> None:
    """Paused for approval (and handed over to a second run), worker A is killed; worker B
    runs the approved tool. The client's trace holds both runs and both workers' spans,
    each step once, with GenAI attributes."""
    deployment = Deployment(dev_server.address, f"trace-{uuid.uuid4().hex[:8]}", tmp_path)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = await Client.connect(
        dev_server.address,
        data_converter=adk_data_converter(),
        interceptors=[TracingInterceptor(provider.get_tracer("test-client"))],
    )
    adk = AdkClient(client, task_queue=deployment.task_queue)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    with OtlpCollector() as collector:
        with worker_process(deployment, env=_telemetry_env(collector, "worker-a")) as first:
            handle = await adk.start(
                APP_NAME,
                "u-1",
                session_id,
                "weather_agent",
                "Buy a weather report for Oslo",
                continue_as_new_after_events=5,  # the pause hands over to a second run
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            # Killed at rest: the pause handed over to the second run, no step is running,
            # and what worker A did is exported (a step killed mid-way would only wait out
            # its timeout, and its unfinished span would leave its children orphans).
            await _at_rest(client, handle.workflow_id, handle.run_id)
            # Both runs' workflow spans too: worker B replays the second run's first task
            # without a span of its own, so one that A never exported would be lost.
            await _until(
                lambda: (
                    bool(_named(collector.spans, "execute_tool buy_weather_report"))
                    and len(_run_ids(collector.spans)) == 2
                    and not _orphans(collector.spans, exporter)
                ),
                "worker A's spans",
            )
            first.send_signal(signal.SIGKILL)
            assert died_by_sigkill(first)
        with worker_process(deployment, env=_telemetry_env(collector, "worker-b")) as second:
            [request] = await handle.pending()
            await handle.confirm(request.id, True)
            result = await handle.result()
            store = SqliteSessionService(deployment.data_dir / "sessions.db")
            stored = await store.get(SessionKey(APP_NAME, "u-1", session_id))
            session_events = stored.events
            await store.close()
            second.send_signal(signal.SIGTERM)  # a clean stop flushes what is buffered
            second.wait(30)
        spans = collector.spans
        metric_names = collector.metric_names
    assert result.status == "completed"
    replies = [r.response for e in session_events for r in e.function_responses()]
    assert [r["waitedSeconds"] >= 0 for r in replies if r and "callDigest" in r] == [True]
    [start] = [s for s in exporter.get_finished_spans() if s.name == START]
    assert start.context is not None
    trace_id = f"{start.context.trace_id:032x}"
    ours = [s for s in spans if s.trace_id == trace_id]
    # Queries and answers are client calls of their own, each with its own trace.
    client_traces = {
        f"{s.context.trace_id:032x}" for s in exporter.get_finished_spans() if s.context
    }
    others = [s.name for s in spans if s.trace_id != trace_id]
    assert all(s.trace_id in client_traces for s in spans), "every span has a client root"
    assert all(
        name.startswith(("HandleQuery:", "ValidateUpdate:", "HandleUpdate")) for name in others
    )
    assert not _orphans(spans, exporter), "no span is an orphan"
    assert {s.resource.get("service.name") for s in ours} == {"worker-a", "worker-b"}

    # Each step once, although worker B replayed the history worker A had made.
    assert len(_run_ids(ours)) == 2, "both runs of the invocation are in its trace"
    assert len(_named(ours, "StartActivity:adk_model_step")) == 2
    tools = _named(ours, "execute_tool buy_weather_report")
    assert [t.attributes["adk.tool.outcome"] for t in tools] == ["waiting", "ok"]
    assert [t.resource["service.name"] for t in tools] == ["worker-a", "worker-b"]
    assert tools[0].attributes["gen_ai.tool.call.id"] == tools[1].attributes["gen_ai.tool.call.id"]
    chats = _named(ours, "chat scripted:weather")
    assert len(chats) == 2
    assert chats[0].attributes["gen_ai.request.model"] == "scripted:weather"
    saves = _named(ours, "adk.artifact.save")
    assert {s.attributes["adk.artifact.name"] for s in saves} >= {"report.txt"}
    assert all(s.resource["service.name"] == "worker-b" for s in saves)
    assert _named(ours, "adk.session.append")
    # The steps' metrics and Temporal's SDK metrics reach the same collector; worker B closed
    # the request (worker A's count of its opening may have died with it).
    ours_and_sdk = {"gen_ai.client.operation.duration", "adk.tool.duration"}
    ours_and_sdk |= {"adk.requests.closed", "adk.request.wait"}
    assert ours_and_sdk | {"temporal_workflow_task_execution_latency"} <= metric_names


async def test_requests_opened_closed_and_their_wait_are_counted_once(
    dev_server: DevServer, tmp_path: Path
) -> None:
    """A worker process counts the approval request once opened and once closed, with its
    wait (queries count nothing)."""
    deployment = Deployment(dev_server.address, f"metrics-{uuid.uuid4().hex[:8]}", tmp_path)
    client = await Client.connect(dev_server.address, data_converter=adk_data_converter())
    adk = AdkClient(client, task_queue=deployment.task_queue)
    with OtlpCollector() as collector:
        with worker_process(deployment, env=_telemetry_env(collector, "worker")) as worker:
            buy = "Buy a weather report for Oslo"
            handle = await adk.start(APP_NAME, "u-1", "s-metrics", "weather_agent", buy)
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            for _ in range(3):
                await handle.status()
            [request] = await handle.pending()
            await handle.confirm(request.id, True)
            await handle.result()
            worker.send_signal(signal.SIGTERM)  # a clean stop exports what is left
            worker.wait(30)
        totals = {n: collector.metric_total(n) for n in REQUEST_METRICS}
    assert totals == dict.fromkeys(REQUEST_METRICS, 1.0)
