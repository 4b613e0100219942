"""Closing telemetry sends what is buffered, and waits a bounded time for a collector that
never answers: a CLI command's exit is not held by the exporters' retries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from adk_temporal.testing.otlp import OtlpCollector

pytestmark = pytest.mark.integration

# A child process: the tracer provider is global and can be set once per process.
CHILD = """
import asyncio, sys
from opentelemetry import trace
from adk_temporal.tracing import configure_telemetry

async def main():
    telemetry = await configure_telemetry(sys.argv[1], flush_seconds=0.5)
    with trace.get_tracer("flush-test").start_as_current_span("the-span"):
        pass
    await telemetry.aclose()
    print("closed", flush=True)
    sys.stdin.readline()

asyncio.run(main())
"""


def _child(endpoint: str) -> subprocess.Popen[str]:
    # Each export may wait for a reply far longer than the flush bound.
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_TIMEOUT": "120",
        "OTEL_METRIC_EXPORT_INTERVAL": "600000",
    }
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, endpoint],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _closed(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline() == "closed\n"


def _ends(child: subprocess.Popen[str]) -> int:
    assert child.stdin is not None
    child.stdin.close()
    return child.wait(timeout=60)


@pytest.fixture
def silent_collector() -> Iterator[socket.socket]:
    """A port that takes connections (the kernel's backlog) and never answers a request."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener


def test_a_collector_that_never_answers_does_not_hold_the_close(
    silent_collector: socket.socket,
) -> None:
    port = silent_collector.getsockname()[1]
    child = _child(f"http://127.0.0.1:{port}")
    try:
        _closed(child)
        # The export aclose gave up waiting for is still out: its request arrived, and the
        # child still holds the connection open for a reply.
        connection, _ = silent_collector.accept()
        with connection:
            connection.settimeout(30)
            request = connection.recv(65536)
            assert request.startswith(b"POST /v1/"), request[:80]
            connection.setblocking(False)
            with pytest.raises(BlockingIOError):
                while connection.recv(65536):
                    pass
            assert _ends(child) == 0
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def test_a_collector_that_answers_has_every_span_once_the_close_returns() -> None:
    with OtlpCollector() as collector:
        child = _child(collector.endpoint)
        try:
            _closed(child)
            assert [span.name for span in collector.spans] == ["the-span"]
            assert _ends(child) == 0
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
