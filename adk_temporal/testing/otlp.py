"""``OtlpCollector``: a local OTLP/HTTP receiver that keeps the spans and metrics sent to it.

Workers export with the real OpenTelemetry SDK and exporters to ``collector.endpoint``;
tests then read what arrived, from every process, as plain values.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric

from adk_temporal.background_http import BackgroundServer

__all__ = ["CollectedSpan", "OtlpCollector"]


@dataclass(frozen=True)
class CollectedSpan:
    """One span as received: ids in hex, attributes as Python values."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


@dataclass
class _Received:
    lock: threading.Lock = field(default_factory=threading.Lock)
    spans: list[CollectedSpan] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_POST(self) -> None:
        """Accept a protobuf export of spans (/v1/traces) or metrics (/v1/metrics)."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = self.server.received
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            spans = [
                CollectedSpan(
                    name=s.name,
                    trace_id=s.trace_id.hex(),
                    span_id=s.span_id.hex(),
                    parent_span_id=s.parent_span_id.hex(),
                    attributes=_attributes(s.attributes),
                    resource=_attributes(rs.resource.attributes),
                    start_ns=s.start_time_unix_nano,
                    end_ns=s.end_time_unix_nano,
                )
                for rs in request.resource_spans
                for ss in rs.scope_spans
                for s in ss.spans
            ]
            with received.lock:
                received.spans += spans
        elif self.path == "/v1/metrics":
            exported = ExportMetricsServiceRequest.FromString(body)
            with received.lock:
                for rm in exported.resource_metrics:
                    for sm in rm.scope_metrics:
                        for metric in sm.metrics:
                            received.metrics[metric.name] = _total(metric)
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def _total(metric: Metric) -> float:
    """A sum's value or a histogram's count, over its data points (cumulative exports carry
    totals, so the latest export is the total)."""
    if metric.HasField("sum"):
        return float(sum(p.as_double or p.as_int for p in metric.sum.data_points))
    if metric.HasField("histogram"):
        return float(sum(p.count for p in metric.histogram.data_points))
    return 0.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, received: _Received) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received = received


class OtlpCollector:
    """An OTLP/HTTP (protobuf) collector on a free loopback port; a context manager."""

    def __init__(self) -> None:
        self._received = _Received()
        self._serving = BackgroundServer(_Server(self._received), "otlp-collector")

    def __enter__(self) -> OtlpCollector:
        self._serving.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._serving.stop()

    @property
    def endpoint(self) -> str:
        """The base URL exporters send to (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
        return f"http://127.0.0.1:{self._serving.port}"

    @property
    def spans(self) -> list[CollectedSpan]:
        """Every span received so far, in arrival order."""
        with self._received.lock:
            return list(self._received.spans)

    @property
    def metric_names(self) -> set[str]:
        """The names of every metric received so far."""
        with self._received.lock:
            return set(self._received.metrics)

    def metric_total(self, name: str) -> float | None:
        """The latest total of a metric: a sum's value or a histogram's count."""
        with self._received.lock:
            return self._received.metrics.get(name)
