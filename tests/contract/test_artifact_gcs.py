"""GcsArtifactService beyond the shared suite: ADK-Go layout, retry policy, metadata, stats."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

import pytest
from google.api_core.exceptions import InternalServerError
from google.cloud import storage
from google.genai import types

from adk_temporal.artifacts import (
    GcsArtifactService,
    GcsStats,
    GetArtifactVersionRequest,
    LoadRequest,
    SaveRequest,
    SaveResponse,
    VersionConflictError,
    VersionsRequest,
)
from adk_temporal.ids import SessionKey
from adk_temporal.testing.fake_gcs import FakeGcsServer

KEY = SessionKey("weather", "u-1", "s-1")

UploadHook = Callable[[storage.Blob, bytes, dict[str, Any]], None]


class _Blob:
    """A real blob whose uploads go through a hook."""

    def __init__(self, real: storage.Blob, hook: UploadHook) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_hook", hook)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)

    def upload_from_string(self, data: bytes, **kwargs: Any) -> None:
        self._hook(self._real, data, kwargs)


class _Bucket:
    """A real bucket whose blobs are wrapped."""

    def __init__(self, real: storage.Bucket, hook: UploadHook) -> None:
        self._real = real
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def blob(self, name: str) -> _Blob:
        return _Blob(self._real.blob(name), self._hook)


class HookedClient:
    """A test double: the real client, except that object uploads go through ``hook``."""

    def __init__(self, real: storage.Client, hook: UploadHook) -> None:
        self._real = real
        self._hook = hook

    def bucket(self, name: str) -> _Bucket:
        return _Bucket(self._real.bucket(name), self._hook)


class RecordingBackoff:
    """Injected ``uniform``, ``sleep`` and ``clock``: records bounds and delays, never waits.

    Every clock reading is ``attempt_seconds`` later than the previous one, so each write
    attempt appears to take exactly that long (0: time stands still).
    """

    def __init__(self, attempt_seconds: float = 0.0) -> None:
        self.bounds: list[tuple[float, float]] = []
        self.slept: list[float] = []
        self._step = attempt_seconds
        self._now = 0.0

    def clock(self) -> float:
        self._now += self._step
        return self._now

    def uniform(self, low: float, high: float) -> float:
        self.bounds.append((low, high))
        return high / 2

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def text_save(name: str = "report.txt", **fields: Any) -> SaveRequest:
    """A save request of a small text part."""
    return SaveRequest.of(KEY, file_name=name, part=types.Part(text="hello"), **fields)


def object_names(client: storage.Client, bucket: str) -> list[str]:
    """Every object in the bucket."""
    return sorted(blob.name for blob in client.list_blobs(bucket))


async def test_objects_follow_adk_go_layout(gcs_client: storage.Client, gcs_bucket: str) -> None:
    """Objects are app/user/session/file/v, and app/user/user/file/v for user: names."""
    service = GcsArtifactService(gcs_bucket, client=gcs_client)
    await service.save(text_save())
    await service.save(text_save())
    await service.save(text_save("user:profile.json"))
    assert object_names(gcs_client, gcs_bucket) == [
        "weather/u-1/s-1/report.txt/1",
        "weather/u-1/s-1/report.txt/2",
        "weather/u-1/user/user:profile.json/1",
    ]


async def test_reads_objects_written_in_go_layout(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """An object another ADK wrote in the shared layout loads, lists and describes."""
    blob = gcs_client.bucket(gcs_bucket).blob("weather/u-1/s-1/chart.png/4")
    blob.metadata = {"origin": "go"}
    blob.upload_from_string(b"\x89PNG", content_type="image/png")
    service = GcsArtifactService(gcs_bucket, client=gcs_client)
    loaded = await service.load(LoadRequest.of(KEY, file_name="chart.png"))
    assert loaded.part.inline_data == types.Blob(data=b"\x89PNG", mime_type="image/png")
    described = await service.get_artifact_version(
        GetArtifactVersionRequest.of(KEY, file_name="chart.png")
    )
    assert described.artifact_version.custom_metadata == {"origin": "go"}
    saved = await service.save(
        SaveRequest.of(KEY, file_name="chart.png", part=types.Part(text="x"))
    )
    assert saved.version == 5


async def test_version_metadata_comes_from_the_object(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """canonical_uri is gs://bucket/object (not the media link); create_time is the object's."""
    service = GcsArtifactService(gcs_bucket, client=gcs_client)
    await service.save(text_save(custom_metadata={"a": "b"}, idempotency_key="key-1"))
    described = (
        await service.get_artifact_version(
            GetArtifactVersionRequest.of(KEY, file_name="report.txt", version=1)
        )
    ).artifact_version
    blob = gcs_client.bucket(gcs_bucket).get_blob("weather/u-1/s-1/report.txt/1")
    assert described.canonical_uri == f"gs://{gcs_bucket}/weather/u-1/s-1/report.txt/1"
    assert described.canonical_uri != blob.media_link
    assert described.create_time == blob.time_created
    assert blob.content_type == "text/plain"
    assert blob.metadata == {"a": "b", "adk-idempotency-key": "key-1", "adk-text-part": "true"}
    assert described.custom_metadata == {"a": "b"}


async def test_text_and_display_name_marks_keep_objects_go_compatible(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """Text keeps ADK-Go's text/plain object plus a mark; a text/plain object Go wrote is bytes."""
    service = GcsArtifactService(gcs_bucket, client=gcs_client)
    await service.save(text_save("notes.txt"))
    chart = types.Blob(data=b"\x89PNG", mime_type="image/png", display_name="chart.png")
    await service.save(SaveRequest.of(KEY, file_name="chart", part=types.Part(inline_data=chart)))
    bucket = gcs_client.bucket(gcs_bucket)
    notes = bucket.get_blob("weather/u-1/s-1/notes.txt/1")
    assert (notes.content_type, notes.download_as_bytes()) == ("text/plain", b"hello")
    assert notes.metadata == {"adk-text-part": "true"}
    stored_chart = bucket.get_blob("weather/u-1/s-1/chart/1")
    assert stored_chart.content_type == "image/png"
    assert stored_chart.metadata == {"adk-display-name": "chart.png"}

    # ADK-Go writes text as a text/plain object without the mark; it loads as Go loads it.
    bucket.blob("weather/u-1/s-1/go-notes.txt/1").upload_from_string(
        b"from go", content_type="text/plain"
    )
    loaded = await service.load(LoadRequest.of(KEY, file_name="go-notes.txt"))
    assert loaded.part.text is None
    assert loaded.part.inline_data == types.Blob(data=b"from go", mime_type="text/plain")


def competitor(
    gcs_client: storage.Client, gcs_bucket: str, wins: int, metadata: dict[str, str] | None = None
) -> UploadHook:
    """An upload hook: another writer creates the very object first, ``wins`` times."""
    lost = 0

    def hook(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        nonlocal lost
        if lost < wins:
            lost += 1
            theirs = gcs_client.bucket(gcs_bucket).blob(blob.name)
            theirs.metadata = metadata
            theirs.upload_from_string(b"theirs")
        blob.upload_from_string(data, **kwargs)

    return hook


def hooked_service(
    gcs_client: storage.Client, gcs_bucket: str, hook: UploadHook, backoff: RecordingBackoff
) -> GcsArtifactService:
    """A service whose uploads go through ``hook`` and whose back-off is recorded."""
    return GcsArtifactService(
        gcs_bucket,
        client=cast(storage.Client, HookedClient(gcs_client, hook)),
        sleep=backoff.sleep,
        uniform=backoff.uniform,
        clock=backoff.clock,
    )


async def test_lost_race_every_time_gives_up_after_16_attempts(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """When another writer always takes the next version first, 16 attempts then a conflict.

    Time stands still, so every back-off is longer than the lost attempt: the save lists
    again before each attempt, and the window is ADK-Go's 10 ms doubling up to 1 s.
    """
    attempts: list[dict[str, Any]] = []

    def competitor_wins(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        attempts.append(kwargs)
        # Another writer creates this very version first, so the server answers 412 itself.
        gcs_client.bucket(gcs_bucket).blob(blob.name).upload_from_string(b"theirs")
        blob.upload_from_string(data, **kwargs)

    backoff = RecordingBackoff()
    stats = GcsStats()
    service = GcsArtifactService(
        gcs_bucket,
        client=cast(storage.Client, HookedClient(gcs_client, competitor_wins)),
        stats=stats,
        sleep=backoff.sleep,
        uniform=backoff.uniform,
        clock=backoff.clock,
    )
    with pytest.raises(
        VersionConflictError,
        match=r"^could not save artifact 'report.txt': another writer took the next version "
        r"on each of 16 attempts; retry the save$",
    ):
        await service.save(text_save())
    assert len(attempts) == 16
    assert all(kw["if_generation_match"] == 0 and kw["retry"] is None for kw in attempts)
    assert backoff.bounds == [(0.0, min(0.01 * 2**k, 1.0)) for k in range(15)]
    assert backoff.slept == [high / 2 for _, high in backoff.bounds]
    assert (stats.saves, stats.write_attempts, stats.precondition_failures) == (1, 16, 16)
    assert stats.max_save_attempts == 16 and stats.list_calls == 16
    assert stats.backoff_seconds == pytest.approx(sum(backoff.slept))
    versions = await service.versions(VersionsRequest.of(KEY, file_name="report.txt"))
    assert versions.versions == list(range(1, 17))


async def test_lost_race_then_success_takes_the_next_free_version(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """After losing twice the save lists again and lands on the version after the winners."""
    backoff = RecordingBackoff()
    service = hooked_service(gcs_client, gcs_bucket, competitor(gcs_client, gcs_bucket, 2), backoff)
    assert (await service.save(text_save())).version == 3
    assert len(backoff.slept) == 2
    assert service.stats.max_save_attempts == 3
    assert service.stats.list_calls == 3


async def test_quick_retry_takes_the_next_number_without_listing(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A back-off shorter than the lost attempt is followed by v + 1, with no new listing."""
    backoff = RecordingBackoff(attempt_seconds=1.0)
    service = hooked_service(gcs_client, gcs_bucket, competitor(gcs_client, gcs_bucket, 2), backoff)
    assert (await service.save(text_save())).version == 3
    stats = service.stats
    assert (stats.write_attempts, stats.list_calls, stats.metadata_reads) == (3, 1, 0)
    assert backoff.bounds == [(0.0, 1.0), (0.0, 1.0)]
    versions = await service.versions(VersionsRequest.of(KEY, file_name="report.txt"))
    assert versions.versions == [1, 2, 3]


async def test_back_off_window_starts_at_the_lost_attempts_duration(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """Attempts taking 1/32 s open the window there, not at 10 ms; still 16 attempts at most.

    The first two back-offs (1/64 and 1/32 s) are no longer than an attempt, so the save
    steps to the next number; each longer one is followed by a listing. (Binary fractions
    keep the clock arithmetic exact.)
    """
    backoff = RecordingBackoff(attempt_seconds=1 / 32)
    service = hooked_service(
        gcs_client, gcs_bucket, competitor(gcs_client, gcs_bucket, 16), backoff
    )
    with pytest.raises(VersionConflictError, match="on each of 16 attempts"):
        await service.save(text_save())
    assert backoff.bounds == [(0.0, min(2**k / 32, 1.0)) for k in range(15)]
    stats = service.stats
    assert (stats.write_attempts, stats.precondition_failures, stats.max_save_attempts) == (
        16,
        16,
        16,
    )
    assert stats.list_calls == 1 + 13
    versions = await service.versions(VersionsRequest.of(KEY, file_name="report.txt"))
    assert versions.versions == list(range(1, 17))


async def test_quick_retry_recognises_a_concurrent_duplicate_by_its_key(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A race lost to a save with the same idempotency key returns that version, once."""
    hook = competitor(gcs_client, gcs_bucket, 1, metadata={"adk-idempotency-key": "key-1"})
    backoff = RecordingBackoff(attempt_seconds=1.0)
    service = hooked_service(gcs_client, gcs_bucket, hook, backoff)
    assert (await service.save(text_save(idempotency_key="key-1"))).version == 1
    assert object_names(gcs_client, gcs_bucket) == ["weather/u-1/s-1/report.txt/1"]
    stats = service.stats
    assert (stats.write_attempts, stats.list_calls, stats.metadata_reads) == (1, 1, 1)
    assert backoff.slept == []


async def test_quick_retry_with_a_key_reads_the_winner_then_steps_on(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A race lost to another save: its key is read instead of listing, then v + 1 is made."""
    hook = competitor(gcs_client, gcs_bucket, 1, metadata={"adk-idempotency-key": "other"})
    backoff = RecordingBackoff(attempt_seconds=1.0)
    service = hooked_service(gcs_client, gcs_bucket, hook, backoff)
    assert (await service.save(text_save(idempotency_key="key-1"))).version == 2
    stats = service.stats
    assert (stats.write_attempts, stats.list_calls, stats.metadata_reads) == (2, 1, 1)


async def test_quick_retry_lists_again_when_the_winner_was_deleted(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A winner deleted before its key is read is not stepped over: v + 1 would be a gap."""

    raced = False

    def winner_then_deleted(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        nonlocal raced
        if raced:
            blob.upload_from_string(data, **kwargs)
            return
        raced = True
        theirs = gcs_client.bucket(gcs_bucket).blob(blob.name)
        theirs.upload_from_string(b"theirs")
        try:
            blob.upload_from_string(data, **kwargs)
        finally:
            theirs.delete()

    backoff = RecordingBackoff(attempt_seconds=1.0)
    service = hooked_service(gcs_client, gcs_bucket, winner_then_deleted, backoff)
    assert (await service.save(text_save(idempotency_key="key-1"))).version == 1
    stats = service.stats
    assert (stats.write_attempts, stats.list_calls, stats.metadata_reads) == (2, 2, 1)


async def test_next_save_of_a_contended_name_backs_off_from_a_higher_level(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A save after one that lost 3 races starts its back-off 2 levels up; one loss resets it."""
    competitor_wins = iter([True, True, True, False, True, False, True, False])

    def scheduled(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        if next(competitor_wins, False):
            gcs_client.bucket(gcs_bucket).blob(blob.name).upload_from_string(b"theirs")
        blob.upload_from_string(data, **kwargs)

    backoff = RecordingBackoff()
    service = hooked_service(gcs_client, gcs_bucket, scheduled, backoff)
    assert (await service.save(text_save())).version == 4
    assert (await service.save(text_save())).version == 6
    assert (await service.save(text_save())).version == 8
    assert backoff.bounds == [(0.0, 0.01), (0.0, 0.02), (0.0, 0.04), (0.0, 0.04), (0.0, 0.01)]
    assert await service.save(text_save("other.txt")) == SaveResponse(version=1)


async def test_server_error_is_raised_at_once_without_retry(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """An HTTP 500 on the write is raised after exactly one attempt, with no back-off."""
    attempts: list[dict[str, Any]] = []

    def server_fails(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        attempts.append(kwargs)
        # google-api-core leaves its exceptions' __init__ unannotated.
        raise InternalServerError("backend is down")  # type: ignore[no-untyped-call]

    backoff = RecordingBackoff()
    service = GcsArtifactService(
        gcs_bucket,
        client=cast(storage.Client, HookedClient(gcs_client, server_fails)),
        sleep=backoff.sleep,
        uniform=backoff.uniform,
        clock=backoff.clock,
    )
    with pytest.raises(InternalServerError, match="backend is down"):
        await service.save(text_save())
    assert len(attempts) == 1
    assert attempts[0]["retry"] is None
    assert backoff.slept == []
    assert service.stats.precondition_failures == 0


async def test_explicit_existing_version_is_not_retried(
    gcs_client: storage.Client, gcs_bucket: str
) -> None:
    """A save of an explicit version that exists makes one write attempt and conflicts."""
    writes: list[str] = []

    def passthrough(blob: storage.Blob, data: bytes, kwargs: dict[str, Any]) -> None:
        writes.append(blob.name)
        blob.upload_from_string(data, **kwargs)

    backoff = RecordingBackoff()
    service = GcsArtifactService(
        gcs_bucket,
        client=cast(storage.Client, HookedClient(gcs_client, passthrough)),
        sleep=backoff.sleep,
        uniform=backoff.uniform,
        clock=backoff.clock,
    )
    await service.save(text_save())
    with pytest.raises(VersionConflictError, match="version 1 already exists"):
        await service.save(text_save(version=1))
    assert writes == ["weather/u-1/s-1/report.txt/1"] * 2
    assert backoff.slept == []


async def test_stats_count_listings(gcs_client: storage.Client, gcs_bucket: str) -> None:
    """Every object listing, by any operation, is counted; explicit saves need none."""
    service = GcsArtifactService(gcs_bucket, client=gcs_client)
    await service.save(text_save(version=7))
    assert service.stats.list_calls == 0
    await service.save(text_save())
    await service.load(LoadRequest.of(KEY, file_name="report.txt"))
    assert service.stats.list_calls == 2
    assert (service.stats.saves, service.stats.write_attempts) == (2, 2)


def test_fake_server_keeps_answering_past_the_stderr_pipe_limit() -> None:
    """The helper's server serves 500 requests (the wrapper's piped stderr hangs near 380)."""
    with FakeGcsServer(buckets=["requests"]) as server:
        bucket = server.client().bucket("requests")
        for i in range(500):
            assert bucket.get_blob(f"missing-{i}", timeout=5, retry=None) is None


def test_fake_server_leaves_the_environment_alone() -> None:
    """Starting the helper does not set STORAGE_EMULATOR_HOST; stopping it twice is safe."""
    before = os.environ.get("STORAGE_EMULATOR_HOST")
    server = FakeGcsServer().start()
    assert server.url.startswith("http://127.0.0.1:")
    assert os.environ.get("STORAGE_EMULATOR_HOST") == before
    server.stop()
    server.stop()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url


async def test_default_client_comes_from_the_environment(
    fake_gcs_server: FakeGcsServer, gcs_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a client the service builds one from the environment (STORAGE_EMULATOR_HOST)."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", fake_gcs_server.url)
    service = GcsArtifactService(gcs_bucket)
    assert (await service.save(text_save())).version == 1
    assert service.bucket_name == gcs_bucket
