"""An artifact service on Google Cloud Storage, object-compatible with ADK-Go's.

Objects are ``{app}/{user}/{session}/{file}/{v}``, and ``{app}/{user}/user/{file}/{v}`` for
``user:`` names, so one bucket can be shared with Go ADK. A save lists the name's versions
and creates ``max + 1`` with ``if_generation_match=0`` (create only if absent); losing that
race (HTTP 412) is retried after a full-jitter back-off, any other error is raised at once.

How a retry picks its number (ADK-Go lists again before every attempt): a 412 on ``v``
proves ``v`` exists, so ``v + 1`` is always a gap-free next number. After a back-off no longer
than the lost attempt took, the save tries ``v + 1`` at once without listing — little can
have changed, and a listing costs as much as the write and grows with the version count;
after a longer back-off it lists again, as others may have taken several numbers meanwhile.
A save with an idempotency key that skips the listing reads the winner's metadata instead,
so a concurrent duplicate of the same save (a timed-out activity attempt still running)
is still recognised. The back-off window starts at the larger of 10 ms and the lost
attempt's duration, so writers spread in proportion to how slow the backend is right now.
And a service remembers how contended each name was: the next save of a name whose last
save lost ``n > 1`` races backs off from level ``n - 1`` instead of 0 (its first attempt is
still immediate), so writers that keep saving one name do not keep cutting in front of
those already waiting in long back-offs, which is how sustained contention starves them.

Every client call passes ``retry=None``: google-cloud-storage would otherwise retry
conditional writes and reads on 5xx by itself for up to two minutes, hiding a failing backend
from the caller. Retrying a whole operation is the caller's business (a Temporal activity
retry policy), and idempotency keys make a retried save safe.
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import contextlib
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.api_core.exceptions import NotFound, PreconditionFailed

from adk_temporal.artifacts._content import (
    DEFAULT_BINARY_MIME_TYPE,
    StoredContent,
    decode_part,
    encode_part,
)
from adk_temporal.artifacts.requests import (
    DISPLAY_NAME_METADATA_KEY,
    IDEMPOTENCY_METADATA_KEY,
    RESERVED_METADATA_KEYS,
    TEXT_PART_METADATA_KEY,
    USER_SCOPE,
    ArtifactVersion,
    DeleteRequest,
    GetArtifactVersionRequest,
    GetArtifactVersionResponse,
    ListArtifactVersionsRequest,
    ListArtifactVersionsResponse,
    ListRequest,
    ListResponse,
    LoadRequest,
    LoadResponse,
    SaveRequest,
    SaveResponse,
    VersionsRequest,
    VersionsResponse,
    not_found_error,
    scope_segment,
    validate_request,
    version_exists_error,
)
from adk_temporal.artifacts.service import IDEMPOTENCY_WINDOW
from adk_temporal.errors import VersionConflictError

if TYPE_CHECKING:
    # Imported for real only when a client must be built: google-cloud-storage takes ~0.1 s
    # to import, and every worker loads this package even when it never talks to GCS.
    from google.cloud import storage

__all__ = [
    "BACKOFF_BASE_SECONDS",
    "BACKOFF_CAP_SECONDS",
    "CONTENDED_NAMES_REMEMBERED",
    "MAX_SAVE_ATTEMPTS",
    "GcsArtifactService",
    "GcsStats",
]

MAX_SAVE_ATTEMPTS = 16
"""Write attempts a save makes before giving up with ``VersionConflictError``."""

BACKOFF_BASE_SECONDS = 0.01
"""Least upper bound of the first back-off; it doubles after every lost race."""

BACKOFF_CAP_SECONDS = 1.0
"""Largest upper bound of a single back-off."""

CONTENDED_NAMES_REMEMBERED = 1024
"""How many recently contended names a service remembers the back-off level of."""

_VERSION = re.compile(r"[1-9][0-9]*")


@dataclass
class GcsStats:
    """Counters a benchmark can read; the service only ever increments them.

    Attributes:
        saves: Saves that reached the backend (validation passed).
        write_attempts: Conditional object creations tried.
        precondition_failures: Attempts that lost the version race (HTTP 412).
        max_save_attempts: The most write attempts a single save needed.
        list_calls: Object listings made, by every operation.
        metadata_reads: Single-object reads checking a race winner for the save's own
            idempotency key (made instead of a listing).
        backoff_seconds: Total time slept between attempts.
    """

    saves: int = 0
    write_attempts: int = 0
    precondition_failures: int = 0
    max_save_attempts: int = 0
    list_calls: int = 0
    metadata_reads: int = 0
    backoff_seconds: float = 0.0


class GcsArtifactService:
    """Artifacts as objects in one GCS bucket.

    Every blocking client call runs in a worker thread (``asyncio.to_thread``). Text is
    written as ``text/plain`` and inline data with its content type, as ADK-Go writes them;
    reserved object metadata marks text and keeps a display name, so loads return the part
    as it was saved. Objects without those marks (written by ADK-Go) load as inline data.

    Args:
        bucket_name: The bucket holding the artifacts; it must exist.
        client: A ``google.cloud.storage.Client``; by default one built from the environment
            (credentials, project, ``STORAGE_EMULATOR_HOST``).
        stats: Counters to increment; by default a fresh :class:`GcsStats`.
        sleep: Awaited with the back-off delay in seconds; injectable for tests.
        uniform: Draws the back-off delay as ``uniform(low, high)``; injectable for tests.
        clock: Seconds on a monotonic clock, to time lost attempts; injectable for tests.
    """

    def __init__(
        self,
        bucket_name: str,
        client: storage.Client | None = None,
        *,
        stats: GcsStats | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        uniform: Callable[[float, float], float] = random.uniform,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._bucket_name = bucket_name
        if client is None:
            from google.cloud import storage

            client = storage.Client()
        self._bucket = client.bucket(bucket_name)
        self._sleep = sleep
        self._uniform = uniform
        self._clock = clock
        self._heat: collections.OrderedDict[str, int] = collections.OrderedDict()
        self.stats = stats if stats is not None else GcsStats()
        """The counters this service increments."""

    @property
    def bucket_name(self) -> str:
        """The bucket holding the artifacts."""
        return self._bucket_name

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Store a new version; see :meth:`ArtifactService.save`.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            VersionConflictError: The explicit ``version`` exists, or all
                :data:`MAX_SAVE_ATTEMPTS` attempts lost the race for the next number.
            google.api_core.exceptions.GoogleAPIError: Any other backend error, at once.
        """
        validate_request(request)
        assert request.part is not None  # guaranteed by validate_request
        content = encode_part(request.part)
        data, content_type = content.data, content.mime_type
        metadata = dict(request.custom_metadata or {})
        if request.idempotency_key is not None:
            metadata[IDEMPOTENCY_METADATA_KEY] = request.idempotency_key
        if content.is_text:
            metadata[TEXT_PART_METADATA_KEY] = "true"
        if content.display_name is not None:
            metadata[DISPLAY_NAME_METADATA_KEY] = content.display_name
        prefix = _prefix(request)
        self.stats.saves += 1
        if request.version:
            if request.idempotency_key is not None:
                existing = await self._list_versions(prefix)
                found = _find_idempotent(existing, request.idempotency_key)
                if found is not None:
                    return SaveResponse(version=found)
            created = await self._try_create(prefix, request.version, data, content_type, metadata)
            self._record_attempts(1)
            if not created:
                raise version_exists_error(request, request.version)
            return SaveResponse(version=request.version)
        return SaveResponse(
            version=await self._save_next(prefix, request, data, content_type, metadata)
        )

    async def _save_next(
        self,
        prefix: str,
        request: SaveRequest,
        data: bytes,
        content_type: str,
        metadata: dict[str, str],
    ) -> int:
        """Create the next version (see the module docstring); returns its number."""
        key = request.idempotency_key
        existing = await self._list_versions(prefix)
        found = _find_idempotent(existing, key)
        if found is not None:
            return found
        version = max(existing, default=0) + 1
        heat = self._heat.get(prefix, 0)
        for attempt in range(MAX_SAVE_ATTEMPTS):
            began = self._clock()
            if await self._try_create(prefix, version, data, content_type, metadata):
                self._settle(prefix, attempt + 1, lost=attempt)
                return version
            if attempt + 1 == MAX_SAVE_ATTEMPTS:
                break
            lost_after = self._clock() - began
            # Full jitter: spreads writers that collided so the next round has one winner.
            level = attempt + heat
            bound = min(max(BACKOFF_BASE_SECONDS, lost_after) * 2**level, BACKOFF_CAP_SECONDS)
            delay = self._uniform(0.0, bound)
            step = delay <= lost_after
            if step and key is not None:
                winner = await self._metadata_of(prefix, version)
                if winner is not None and winner.get(IDEMPOTENCY_METADATA_KEY) == key:
                    self._settle(prefix, attempt + 1, lost=attempt + 1)
                    return version
                # Deleted since the 412: v + 1 could leave a gap, so list instead.
                step = winner is not None
            await self._back_off(delay)
            if step:
                version += 1
                continue
            existing = await self._list_versions(prefix)
            found = _find_idempotent(existing, key)
            if found is not None:
                self._settle(prefix, attempt + 1, lost=attempt + 1)
                return found
            version = max(existing, default=0) + 1
        self._settle(prefix, MAX_SAVE_ATTEMPTS, lost=MAX_SAVE_ATTEMPTS)
        raise VersionConflictError(
            f"could not save artifact {request.file_name!r}: another writer took the next "
            f"version on each of {MAX_SAVE_ATTEMPTS} attempts; retry the save"
        )

    def _settle(self, prefix: str, attempts: int, *, lost: int) -> None:
        """Count a save's attempts; remember one level below the races it lost."""
        self._record_attempts(attempts)
        self._heat.pop(prefix, None)
        if lost > 1:
            self._heat[prefix] = lost - 1
            if len(self._heat) > CONTENDED_NAMES_REMEMBERED:
                self._heat.popitem(last=False)

    async def _back_off(self, delay: float) -> None:
        self.stats.backoff_seconds += delay
        await self._sleep(delay)

    async def _metadata_of(self, prefix: str, version: int) -> dict[str, str] | None:
        """The custom metadata ``version`` was created with; ``None`` once it is deleted."""
        self.stats.metadata_reads += 1
        blob = await asyncio.to_thread(self._bucket.get_blob, f"{prefix}{version}", retry=None)
        return None if blob is None else dict(blob.metadata or {})

    async def load(self, request: LoadRequest) -> LoadResponse:
        """Return a stored part as it was saved; see :meth:`ArtifactService.load`."""
        validate_request(request)
        blob = await self._resolve(request)
        try:
            data = await asyncio.to_thread(blob.download_as_bytes, retry=None)
        except NotFound:
            # Deleted between finding the object and reading it.
            raise not_found_error(request, _version_of(blob)) from None
        metadata = blob.metadata or {}
        content = StoredContent(
            data=data,
            mime_type=blob.content_type or DEFAULT_BINARY_MIME_TYPE,
            is_text=metadata.get(TEXT_PART_METADATA_KEY) == "true",
            display_name=metadata.get(DISPLAY_NAME_METADATA_KEY),
        )
        return LoadResponse(part=decode_part(content))

    async def delete(self, request: DeleteRequest) -> None:
        """Delete one or every version; see :meth:`ArtifactService.delete`."""
        validate_request(request)
        prefix = _prefix(request)
        if request.version:
            names = [f"{prefix}{request.version}"]
        else:
            names = [blob.name for blob in (await self._list_versions(prefix)).values()]
        await asyncio.to_thread(self._delete, names)

    async def list(self, request: ListRequest) -> ListResponse:
        """List the session's and the user's names; see :meth:`ArtifactService.list`."""
        validate_request(request)
        names: set[str] = set()
        for scope in (request.session_id, USER_SCOPE):
            self.stats.list_calls += 1
            prefix = f"{request.app_name}/{request.user_id}/{scope}/"
            names |= await asyncio.to_thread(self._list_names, prefix)
        return ListResponse(file_names=sorted(names))

    async def versions(self, request: VersionsRequest) -> VersionsResponse:
        """List a name's versions ascending; see :meth:`ArtifactService.versions`."""
        validate_request(request)
        versions = await self._list_versions(_prefix(request))
        if not versions:
            raise not_found_error(request)
        return VersionsResponse(versions=sorted(versions))

    async def get_artifact_version(
        self, request: GetArtifactVersionRequest
    ) -> GetArtifactVersionResponse:
        """Describe a version; see :meth:`ArtifactService.get_artifact_version`.

        ``canonical_uri`` is ``gs://{bucket}/{object}``, never the authenticated media link,
        and ``create_time`` is the object's creation time.
        """
        validate_request(request)
        blob = await self._resolve(request)
        return GetArtifactVersionResponse(artifact_version=self._describe(blob))

    async def list_artifact_versions(
        self, request: ListArtifactVersionsRequest
    ) -> ListArtifactVersionsResponse:
        """Describe every version; see :meth:`ArtifactService.list_artifact_versions`."""
        validate_request(request)
        blobs = await self._list_versions(_prefix(request))
        if not blobs:
            raise not_found_error(request)
        return ListArtifactVersionsResponse(
            artifact_versions=[self._describe(blobs[version]) for version in sorted(blobs)]
        )

    def _describe(self, blob: storage.Blob) -> ArtifactVersion:
        """A version's metadata from its object: ``gs://`` URI, creation time, content type."""
        metadata = blob.metadata or {}
        return ArtifactVersion(
            version=_version_of(blob),
            canonical_uri=f"gs://{self._bucket_name}/{blob.name}",
            custom_metadata={k: v for k, v in metadata.items() if k not in RESERVED_METADATA_KEYS},
            create_time=blob.time_created,
            mime_type=blob.content_type or DEFAULT_BINARY_MIME_TYPE,
        )

    async def _try_create(
        self, prefix: str, version: int, data: bytes, content_type: str, metadata: dict[str, str]
    ) -> bool:
        """Create the version's object if absent; False when it exists (HTTP 412)."""
        self.stats.write_attempts += 1
        try:
            await asyncio.to_thread(
                self._create, f"{prefix}{version}", data, content_type, metadata
            )
        except PreconditionFailed:
            self.stats.precondition_failures += 1
            return False
        return True

    def _record_attempts(self, attempts: int) -> None:
        self.stats.max_save_attempts = max(self.stats.max_save_attempts, attempts)

    async def _resolve(self, request: LoadRequest | GetArtifactVersionRequest) -> storage.Blob:
        prefix = _prefix(request)
        if request.version:
            blob = await asyncio.to_thread(
                self._bucket.get_blob, f"{prefix}{request.version}", retry=None
            )
            if blob is None:
                raise not_found_error(request, request.version)
            return blob
        versions = await self._list_versions(prefix)
        if not versions:
            raise not_found_error(request)
        return versions[max(versions)]

    async def _list_versions(self, prefix: str) -> dict[int, storage.Blob]:
        self.stats.list_calls += 1
        blobs = await asyncio.to_thread(self._list_blobs, prefix)
        return {
            int(blob.name[len(prefix) :]): blob
            for blob in blobs
            if _VERSION.fullmatch(blob.name[len(prefix) :])
        }

    def _list_blobs(self, prefix: str) -> builtins.list[storage.Blob]:
        # The delimiter keeps the listing to this name's own objects.
        return list(self._bucket.list_blobs(prefix=prefix, delimiter="/", retry=None))

    def _list_names(self, prefix: str) -> set[str]:
        pages = self._bucket.list_blobs(prefix=prefix, delimiter="/", retry=None)
        for _ in pages:
            pass  # the iterator collects `prefixes` only as its pages are read
        return {p[len(prefix) : -1] for p in pages.prefixes}

    def _create(self, name: str, data: bytes, content_type: str, metadata: dict[str, str]) -> None:
        blob = self._bucket.blob(name)
        blob.metadata = metadata
        blob.upload_from_string(data, content_type=content_type, if_generation_match=0, retry=None)

    def _delete(self, names: builtins.list[str]) -> None:
        for name in names:
            # Deleting something absent is not an error (SPEC §2.3).
            with contextlib.suppress(NotFound):
                self._bucket.delete_blob(name, retry=None)


def _prefix(
    request: SaveRequest
    | LoadRequest
    | DeleteRequest
    | VersionsRequest
    | GetArtifactVersionRequest
    | ListArtifactVersionsRequest,
) -> str:
    scope = scope_segment(request.session_id, request.file_name)
    return f"{request.app_name}/{request.user_id}/{scope}/{request.file_name}/"


def _version_of(blob: storage.Blob) -> int:
    return int(blob.name.rsplit("/", 1)[1])


def _find_idempotent(blobs: dict[int, storage.Blob], key: str | None) -> int | None:
    if key is None:
        return None
    for version in sorted(blobs, reverse=True)[:IDEMPOTENCY_WINDOW]:
        if (blobs[version].metadata or {}).get(IDEMPOTENCY_METADATA_KEY) == key:
            return version
    return None
