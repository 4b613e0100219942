"""Artifact save contention: W concurrent writers saving versions of one artifact name.

Each of W writers (W = 4, 16, 32, 64) makes ``SAVES_PER_WRITER`` consecutive saves of the
same name, all writers at once: the first saves are a thundering herd, the rest sustained
contention. Every writer has its own service instance (and its own storage client), like W
worker processes, and its own thread pool slot so blocking calls really overlap.

Backends: ``GcsArtifactService`` against a real fake-gcs-server (``FakeGcsServer``), the
plain ADK-Go algorithm on the same server as the baseline (implemented here, not in the
library: list, write ``max + 1`` with ``if_generation_match=0``, on 412 sleep
``uniform(0, min(10 ms·2^attempt, 1 s))`` and list again, 16 attempts), and
``FileArtifactService`` on a local directory. After each run the name's versions must be
exactly 1..N for the N successful saves.

Run: ``python benchmarks/artifact_contention.py`` (writes results/artifact_contention.json).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import finish, print_table, write_results
from google.api_core.exceptions import PreconditionFailed
from google.cloud import storage
from google.genai import types

from adk_temporal.artifacts import (
    FileArtifactService,
    GcsArtifactService,
    GcsStats,
    SaveRequest,
    VersionConflictError,
    VersionsRequest,
)
from adk_temporal.testing.fake_gcs import FakeGcsServer

WRITERS = (4, 16, 32, 64)
SAVES_PER_WRITER = 4
REPEATS = 3  # fresh bucket or directory each time; failures are summed over the repeats
NAME = "hot.txt"
VERSIONS = VersionsRequest(app_name="bench", user_id="u", session_id="s", file_name=NAME)
PART = types.Part(text="x" * 200)

# The ADK-Go algorithm's constants, fixed here so library changes cannot move the baseline.
GO_ATTEMPTS = 16
GO_BASE_SECONDS = 0.01
GO_CAP_SECONDS = 1.0


Counts = tuple[int, int, int]
"""Write attempts, list calls and single-object metadata reads made so far."""


@dataclass
class Outcome:
    """What one save did: whether it succeeded, and the requests it made."""

    ok: bool
    seconds: float
    counts: Counts


@dataclass
class Writer:
    """One writer: its save function and where its request counters are read."""

    save: Callable[[SaveRequest], Awaitable[Any]]
    counts: Callable[[], Counts]
    outcomes: list[Outcome] = field(default_factory=list)


class GoBaseline:
    """ADK-Go's GCS save, as the baseline: every attempt lists, then writes ``max + 1``."""

    def __init__(self, client: storage.Client, bucket: str) -> None:
        self._bucket = client.bucket(bucket)
        self.attempts = 0
        self.lists = 0

    async def save(self, request: SaveRequest) -> int:
        """Save ``request.part`` as the next version, ADK-Go style."""
        prefix = f"{request.app_name}/{request.user_id}/{request.session_id}/{request.file_name}/"
        assert request.part is not None and request.part.text is not None
        data = request.part.text.encode()
        for attempt in range(GO_ATTEMPTS):
            self.lists += 1
            names = await asyncio.to_thread(
                lambda: [b.name for b in self._bucket.list_blobs(prefix=prefix, retry=None)]
            )
            version = max((int(n[len(prefix) :]) for n in names), default=0) + 1
            self.attempts += 1
            try:
                await asyncio.to_thread(
                    self._bucket.blob(f"{prefix}{version}").upload_from_string,
                    data,
                    content_type="text/plain",
                    if_generation_match=0,
                    retry=None,
                )
                return version
            except PreconditionFailed:
                if attempt + 1 < GO_ATTEMPTS:
                    bound = min(GO_BASE_SECONDS * 2**attempt, GO_CAP_SECONDS)
                    await asyncio.sleep(random.uniform(0, bound))
        raise VersionConflictError("baseline: 16 attempts lost")


class CountingFileService(FileArtifactService):
    """``FileArtifactService`` counting version claims tried (its attempts)."""

    attempts = 0

    def _commit(self, *args: Any, **kwargs: Any) -> bool:
        # Private hook, benchmark only: a File save has no stats object of its own.
        self.attempts += 1
        return super()._commit(*args, **kwargs)


async def run_writers(writers: list[Writer]) -> float:
    """Run every writer's saves concurrently; returns the wall time."""

    async def one(index: int, writer: Writer) -> None:
        for n in range(SAVES_PER_WRITER):
            before = writer.counts()
            request = SaveRequest(
                app_name="bench",
                user_id="u",
                session_id="s",
                file_name=NAME,
                part=PART,
                idempotency_key=f"w{index}-{n}",
            )
            began = time.perf_counter()
            try:
                await writer.save(request)
                ok = True
            except VersionConflictError:
                ok = False
            seconds = time.perf_counter() - began
            after = writer.counts()
            made = (after[0] - before[0], after[1] - before[1], after[2] - before[2])
            writer.outcomes.append(Outcome(ok, seconds, made))

    began = time.perf_counter()
    await asyncio.gather(*(one(i, w) for i, w in enumerate(writers)))
    return time.perf_counter() - began


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


@dataclass
class Run:
    """One repeat: every writer's outcomes, the wall time, and the versions left behind."""

    outcomes: list[Outcome]
    wall: float
    versions: list[int]

    @property
    def consecutive(self) -> bool:
        """Whether the successful saves left exactly versions 1..N."""
        return self.versions == list(range(1, sum(o.ok for o in self.outcomes) + 1))


def summarise(runs: list[Run]) -> dict[str, Any]:
    """Success count, requests and latency over every save of every repeat."""
    outcomes = [o for r in runs for o in r.outcomes]
    ok = [o for o in outcomes if o.ok]
    return {
        "saves": len(outcomes),
        "ok": len(ok),
        "failed": len(outcomes) - len(ok),
        "attempts_per_save": sum(o.counts[0] for o in outcomes) / len(outcomes),
        "max_attempts": max(o.counts[0] for o in outcomes),
        "list_calls": sum(o.counts[1] for o in outcomes),
        "metadata_reads": sum(o.counts[2] for o in outcomes),
        "p50_ms": percentile([o.seconds for o in ok], 0.5) * 1000,
        "p99_ms": percentile([o.seconds for o in ok], 0.99) * 1000,
        "wall_s_median": sorted(r.wall for r in runs)[len(runs) // 2],
        "versions_consecutive": all(r.consecutive for r in runs),
    }


def library_writer(client: storage.Client, bucket: str) -> Writer:
    """A writer using the library's ``GcsArtifactService``."""
    stats = GcsStats()
    service = GcsArtifactService(bucket, client=client, stats=stats)

    def counts() -> Counts:
        return stats.write_attempts, stats.list_calls, stats.metadata_reads

    return Writer(service.save, counts)


def go_writer(client: storage.Client, bucket: str) -> Writer:
    """A writer using the ADK-Go baseline."""
    baseline = GoBaseline(client, bucket)

    def counts() -> Counts:
        return baseline.attempts, baseline.lists, 0

    return Writer(baseline.save, counts)


def file_writer(service: CountingFileService) -> Writer:
    """A writer using ``FileArtifactService``."""

    def counts() -> Counts:
        return service.attempts, 0, 0

    return Writer(service.save, counts)


async def gcs_run(server: FakeGcsServer, count: int, repeat: int, library: bool) -> Run:
    """W writers on a fresh bucket, with the library's algorithm or the ADK-Go baseline."""
    bucket = f"contention-{'lib' if library else 'go'}-{count}-{repeat}"
    server.create_bucket(bucket)
    writers = [
        library_writer(server.client(), bucket) if library else go_writer(server.client(), bucket)
        for _ in range(count)
    ]
    wall = await run_writers(writers)
    checker = GcsArtifactService(bucket, client=server.client())
    versions = await checker.versions(VERSIONS)
    return Run([o for w in writers for o in w.outcomes], wall, versions.versions)


async def file_run(root: Path, count: int) -> Run:
    """W writers on a fresh directory with ``FileArtifactService``."""
    writers = [file_writer(CountingFileService(root)) for _ in range(count)]
    wall = await run_writers(writers)
    versions = await FileArtifactService(root).versions(VERSIONS)
    return Run([o for w in writers for o in w.outcomes], wall, versions.versions)


async def main() -> None:
    # One thread per writer: the default pool (cores + 4) would queue the writers' blocking
    # calls and hide the contention being measured.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max(WRITERS)))
    results: dict[str, dict[str, Any]] = {}
    with FakeGcsServer() as server, tempfile.TemporaryDirectory(prefix="adk-bench-") as tmp:
        for count in WRITERS:
            runs: dict[str, list[Run]] = {"gcs library": [], "gcs ADK-Go": [], "file": []}
            # Interleaved, so that noise from other work on the machine hits all three.
            for r in range(REPEATS):
                runs["gcs library"].append(await gcs_run(server, count, r, library=True))
                runs["gcs ADK-Go"].append(await gcs_run(server, count, r, library=False))
                runs["file"].append(await file_run(Path(tmp) / f"w{count}-{r}", count))
            for name, repeats in runs.items():
                results[f"{name} W={count}"] = summarise(repeats)
    keys = list(next(iter(results.values())))
    print(
        f"{SAVES_PER_WRITER} consecutive saves per writer, all writers at once, "
        f"{REPEATS} repeats pooled; fake-gcs-server (in-memory) and a local directory"
    )
    print_table(
        "Artifact save contention",
        ["run", *keys],
        [[name, *(r[k] for k in keys)] for name, r in results.items()],
    )
    targets = {
        "gcs_zero_failures_w16": results["gcs library W=16"]["failed"] == 0,
        "file_zero_failures_w64": results["file W=64"]["failed"] == 0,
        **{
            f"gcs_w{w}_fewer_failures_than_go_or_none": (
                results[f"gcs library W={w}"]["failed"] < results[f"gcs ADK-Go W={w}"]["failed"]
                or results[f"gcs library W={w}"]["failed"] == 0
            )
            for w in (32, 64)
        },
        **{
            f"gcs_w{w}_fewer_list_calls_than_go": results[f"gcs library W={w}"]["list_calls"]
            < results[f"gcs ADK-Go W={w}"]["list_calls"]
            for w in (32, 64)
        },
        "versions_consecutive_everywhere": all(r["versions_consecutive"] for r in results.values()),
    }
    print_table("Targets", ["target", "met"], list(targets.items()))
    write_results(
        "artifact_contention",
        {
            "saves_per_writer": SAVES_PER_WRITER,
            "repeats": REPEATS,
            "runs": results,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
    finish()
