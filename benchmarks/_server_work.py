"""The server's work per invocation, counted from the dev server's Prometheus metrics.

Throughput on two cores is set by the server (runs spend most of their time waiting for it
to hand out their workflow tasks), and a rate measured in rounds moves by ±10 % from round
to round, so what an invocation asks of the server is counted too: persistence requests
(reads and writes of workflow state, tasks and metadata), visibility requests, and the RPCs
the client and the worker make to the frontend. The counters are read before and after a
batch of invocations, with a pause either side so the server's own queues (visibility
records written after a run closes) have drained; background polling of the server's
queues and namespaces still adds a fraction of a request per invocation.
"""

from __future__ import annotations

import asyncio
import re
import urllib.request
from collections import defaultdict
from collections.abc import Awaitable, Callable

__all__ = ["SETTLE_SECONDS", "Key", "per_invocation", "totals"]

Key = tuple[str, str, str]
"""A counter: metric name, the server service counting it, and the operation."""

SETTLE_SECONDS = 3.0
"""Pause before and after a batch, so the counts are the batch's own."""

_METRICS = ("persistence_requests", "visibility_persistence_requests", "service_requests")
_SAMPLE = re.compile(rf"^({'|'.join(_METRICS)})\{{(.*)\}} (\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def _scrape(port: int) -> dict[Key, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    counts: dict[Key, float] = defaultdict(float)
    for line in text.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None:
            continue
        labels = dict(_LABEL.findall(sample[2]))
        key = (sample[1], labels.get("service_name", ""), labels.get("operation", ""))
        counts[key] += float(sample[3])
    return counts


async def per_invocation(
    metrics_port: int, invocations: int, run: Callable[[], Awaitable[object]]
) -> dict[Key, float]:
    """Each counter's growth while ``run`` runs ``invocations`` invocations, per invocation."""
    await asyncio.sleep(SETTLE_SECONDS)
    before = await asyncio.to_thread(_scrape, metrics_port)
    await run()
    await asyncio.sleep(SETTLE_SECONDS)
    after = await asyncio.to_thread(_scrape, metrics_port)
    grown = {key: value - before.get(key, 0.0) for key, value in after.items()}
    return {key: change / invocations for key, change in grown.items() if change > 0}


def totals(counts: dict[Key, float]) -> dict[str, float]:
    """The three sums that matter: persistence requests, visibility requests, frontend RPCs."""
    return {
        "persistence_requests": sum(v for k, v in counts.items() if k[0] == _METRICS[0]),
        "visibility_requests": sum(v for k, v in counts.items() if k[0] == _METRICS[1]),
        "frontend_rpcs": sum(
            v for k, v in counts.items() if k[0] == _METRICS[2] and k[1] == "frontend"
        ),
    }
