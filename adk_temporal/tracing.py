"""Tracing and metrics with OpenTelemetry: one trace per invocation, across every worker.

The steps record their spans and measurements through the OpenTelemetry *API* only: until
:func:`configure_telemetry` installs an SDK, the API's tracer and meter do nothing, so
telemetry that is off costs a no-op call per step. Once configured, Temporal's
``TracingInterceptor`` (on the client, which passes it to workers) carries the trace from
``AdkClient.start`` through the workflow to every activity on any worker, across
continue-as-new and retries after a worker died; the workflow's own spans are emitted once,
never again on replay. The spans here nest inside the activity's span.

Why the interceptor rather than Temporal's newer ``OpenTelemetryPlugin``: the plugin ends a
workflow's spans when the workflow completes, and an invocation may wait days for an
approval; the interceptor's spans are visible as soon as each step ran.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace

from .events import (
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    WAITED_KEY,
    Event,
)
from .extras import needs_extra
from .history import USER_AUTHOR

if TYPE_CHECKING:
    from temporalio.client import Interceptor
    from temporalio.runtime import Runtime

__all__ = [
    "ENDPOINT_ENV",
    "TRACER_NAME",
    "Telemetry",
    "configure_telemetry",
    "record_compaction_failure",
    "record_model_step",
    "record_requests",
    "record_tool_call",
    "span",
    "telemetry_endpoint",
]

TRACER_NAME = "adk_temporal"
"""The instrumentation scope of adk-temporal's spans and metrics."""

ENDPOINT_ENV = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""The standard variables that turn telemetry on (an OTLP/HTTP collector's address)."""

_tracer = trace.get_tracer(TRACER_NAME)
_meter = metrics.get_meter(TRACER_NAME)
# Names and units of the GenAI semantic conventions where they define one.
_model_duration = _meter.create_histogram(
    "gen_ai.client.operation.duration", unit="s", description="Model call latency."
)
_tokens = _meter.create_histogram(
    "gen_ai.client.token.usage", unit="{token}", description="Tokens per model call."
)
_tool_duration = _meter.create_histogram(
    "adk.tool.duration", unit="s", description="Tool call latency, per attempt."
)
_opened = _meter.create_counter(
    "adk.requests.opened", unit="{request}", description="Requests for a human opened."
)
_closed = _meter.create_counter(
    "adk.requests.closed",
    unit="{request}",
    description="Requests answered or expired (waiting now: opened - closed).",
)
_waited = _meter.create_histogram(
    "adk.request.wait", unit="s", description="How long a request waited for its answer."
)
_compaction_failures = _meter.create_counter(
    "adk.compaction.failures",
    unit="{compaction}",
    description="Compactions whose summarizer failed; the turn went on uncompacted.",
)
_KINDS = {REQUEST_CONFIRMATION_FUNCTION_NAME: "confirmation", REQUEST_INPUT_FUNCTION_NAME: "input"}


def span(name: str, attributes: Mapping[str, Any] | None = None) -> Any:
    """A span of adk-temporal's tracer, as a context manager (a no-op until configured)."""
    return _tracer.start_as_current_span(name, attributes=attributes)


def record_model_step(
    current: Any,
    *,
    system: str,
    model: str,
    seconds: float,
    input_tokens: int | None,
    output_tokens: int | None,
    finish_reason: str | None,
) -> None:
    """Put a model call's GenAI attributes on ``current`` (its span) and its metrics."""
    base = {"gen_ai.operation.name": "chat", "gen_ai.system": system}
    current.set_attribute("gen_ai.request.model", model)
    attributes = {**base, "gen_ai.request.model": model}
    if input_tokens is not None:
        current.set_attribute("gen_ai.usage.input_tokens", input_tokens)
        _tokens.record(input_tokens, {**attributes, "gen_ai.token.type": "input"})
    if output_tokens is not None:
        current.set_attribute("gen_ai.usage.output_tokens", output_tokens)
        _tokens.record(output_tokens, {**attributes, "gen_ai.token.type": "output"})
    if finish_reason:
        current.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
    _model_duration.record(seconds, attributes)


def record_compaction_failure(reason: str) -> None:
    """Count a failed compaction, by why (``raised``, ``timeout``, ``unencodable``,
    ``oversized``)."""
    _compaction_failures.add(1, {"adk.compaction.failure": reason})


def record_tool_call(current: Any, *, tool: str, outcome: str, seconds: float) -> None:
    """Put a tool call's outcome on ``current`` (its span) and its latency in the metrics."""
    current.set_attribute("adk.tool.outcome", outcome)
    _tool_duration.record(seconds, {"gen_ai.tool.name": tool, "adk.tool.outcome": outcome})


def record_requests(events: Sequence[Event]) -> None:
    """Count the requests for a human that stored ``events`` open and close, with waits.

    Called once the events are stored, in the worker: the workflow's own meter would count
    again whenever a worker without the run cached replays it to answer a query.
    """
    for event in events:
        if event.author != USER_AUTHOR:
            for call in event.function_calls():
                if call.name in _KINDS:
                    _opened.add(1, {"adk.request.kind": _KINDS[call.name]})
            continue
        for reply in event.function_responses():
            kind = _KINDS.get(reply.name or "")
            if kind is None:
                continue
            _closed.add(1, {"adk.request.kind": kind})
            waited = (reply.response or {}).get(WAITED_KEY)
            if isinstance(waited, int | float):
                _waited.record(waited, {"adk.request.kind": kind})


def telemetry_endpoint(otlp_endpoint: str | None = None) -> str | None:
    """The collector telemetry goes to: ``otlp_endpoint``, else the standard variables."""
    if otlp_endpoint:
        return otlp_endpoint
    return next((os.environ[v] for v in ENDPOINT_ENV if os.environ.get(v)), None)


@dataclass
class Telemetry:
    """What :func:`configure_telemetry` set up, to hand to ``Client.connect``."""

    interceptors: list[Interceptor]
    """Temporal's tracing interceptor: a client passes it on to its workers."""
    runtime: Runtime
    """A Temporal runtime whose SDK metrics are exported with adk-temporal's."""
    _closers: list[Any] = field(default_factory=list)

    async def aclose(self) -> None:
        """Flush and stop the exporters: what is still buffered is sent, waiting at most the
        ``flush_seconds`` :func:`configure_telemetry` was given."""
        for close in reversed(self._closers):
            await close()


FLUSH_SECONDS = 3.0
"""How long closing telemetry waits for what is still buffered. A collector that is down
would otherwise hold every CLI command's exit through the exporters' retries (10 s each)."""


async def _shut_down_within(seconds: float, shutdown: Callable[[], object]) -> None:
    """Run ``shutdown`` on a daemon thread, waiting for it at most ``seconds``.

    A daemon thread, not an executor's: executors' threads are joined when the loop closes
    and when the interpreter exits, so an export stuck on a silent collector would hold the
    exit after all.
    """
    ended: concurrent.futures.Future[None] = concurrent.futures.Future()

    def run() -> None:
        try:
            shutdown()
        finally:
            ended.set_result(None)

    threading.Thread(target=run, name="adk-telemetry-flush", daemon=True).start()
    # Shielded: a timeout must not cancel ``ended``, which the thread still sets.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(ended)), seconds)


async def configure_telemetry(
    otlp_endpoint: str | None = None,
    *,
    service_name: str = "adk-temporal",
    flush_seconds: float = FLUSH_SECONDS,
) -> Telemetry | None:
    """Turn on tracing and metrics when a collector is configured; ``None`` when none is.

    Installs the global tracer and meter providers (OTLP over HTTP, batched) and a Temporal
    runtime whose SDK metrics join them. Standard ``OTEL_*`` variables (service name,
    resource attributes, headers, batch delays) apply as usual.

    Args:
        otlp_endpoint: The collector's base URL (``http://host:4318``); the standard
            ``OTEL_EXPORTER_OTLP_ENDPOINT`` is used when ``None``.
        service_name: ``service.name`` unless ``OTEL_SERVICE_NAME`` says otherwise.
        flush_seconds: The longest :meth:`Telemetry.aclose` waits for buffered spans and
            metrics to be sent; what a collector has not taken by then is dropped.

    Raises:
        MissingExtraError: A collector is configured but the OpenTelemetry SDK is not installed
            (``pip install 'adk-temporal[tracing]'``).
    """
    endpoint = telemetry_endpoint(otlp_endpoint)
    if endpoint is None:
        return None
    with needs_extra("tracing", f"telemetry to {endpoint}"):
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from temporalio.contrib.opentelemetry import MetricsExporter, TracingInterceptor
        from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig
    # An explicit endpoint is a base URL; the exporters read the variables themselves.
    base = otlp_endpoint.rstrip("/") if otlp_endpoint else None
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service_name)})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces" if base else None))
    )
    trace.set_tracer_provider(tracer_provider)
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None)
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    metrics.set_meter_provider(meter_provider)
    buffer = MetricBuffer(10_000)
    runtime = Runtime(telemetry=TelemetryConfig(metrics=buffer))
    sdk_metrics = MetricsExporter(buffer, meter_provider)
    await sdk_metrics.__aenter__()

    async def stop_sdk_metrics() -> None:
        await sdk_metrics.__aexit__(None, None, None)

    async def flush() -> None:
        await asyncio.gather(
            _shut_down_within(flush_seconds, tracer_provider.shutdown),
            _shut_down_within(flush_seconds, meter_provider.shutdown),
        )

    return Telemetry(
        interceptors=[TracingInterceptor()],
        runtime=runtime,
        _closers=[flush, stop_sdk_metrics],
    )
