"""An artifact service held in process memory, for tests and single-process demos."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from google.genai import types

from adk_temporal.artifacts._content import encode_part
from adk_temporal.artifacts.requests import (
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

__all__ = ["InMemoryArtifactService"]


@dataclass(frozen=True)
class _Stored:
    part: types.Part
    mime_type: str
    custom_metadata: dict[str, str]
    create_time: datetime
    idempotency_key: str | None


# (app_name, user_id, session id or USER_SCOPE) -> file name -> version -> stored version
_Scope = tuple[str, str, str]
_Names = dict[str, dict[int, _Stored]]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InMemoryArtifactService:
    """Artifacts in a dict guarded by a lock; lost when the process exits.

    Parts are deep-copied on save and on load, so neither the saver nor a loader can change
    a stored version by mutating its own part.

    Args:
        clock: Returns the creation time of new versions (timezone-aware); injectable for tests.
    """

    def __init__(self, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        # A threading lock, not an asyncio one: the service may be shared by activities
        # running in worker threads as well as on the event loop.
        self._lock = threading.Lock()
        self._scopes: dict[_Scope, _Names] = {}

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Store a new version; see :meth:`ArtifactService.save`."""
        validate_request(request)
        assert request.part is not None  # guaranteed by validate_request
        mime_type = encode_part(request.part).mime_type
        with self._lock:
            names = self._scopes.setdefault(_scope(request), {})
            versions = names.setdefault(request.file_name, {})
            if request.idempotency_key is not None:
                for version in sorted(versions, reverse=True)[:IDEMPOTENCY_WINDOW]:
                    if versions[version].idempotency_key == request.idempotency_key:
                        return SaveResponse(version=version)
            if request.version:
                if request.version in versions:
                    raise version_exists_error(request, request.version)
                version = request.version
            else:
                version = max(versions, default=0) + 1
            versions[version] = _Stored(
                part=request.part.model_copy(deep=True),
                mime_type=mime_type,
                custom_metadata=dict(request.custom_metadata or {}),
                create_time=self._clock(),
                idempotency_key=request.idempotency_key,
            )
        return SaveResponse(version=version)

    async def load(self, request: LoadRequest) -> LoadResponse:
        """Return a copy of a stored part; see :meth:`ArtifactService.load`."""
        validate_request(request)
        with self._lock:
            _, stored = self._find(request, request.version)
            return LoadResponse(part=stored.part.model_copy(deep=True))

    async def delete(self, request: DeleteRequest) -> None:
        """Delete one or every version; see :meth:`ArtifactService.delete`."""
        validate_request(request)
        with self._lock:
            names = self._scopes.get(_scope(request), {})
            versions = names.get(request.file_name)
            if versions is None:
                return
            if request.version:
                versions.pop(request.version, None)
            else:
                versions.clear()
            if not versions:
                # A name with no versions must vanish from list().
                del names[request.file_name]

    async def list(self, request: ListRequest) -> ListResponse:
        """List the session's and the user's names; see :meth:`ArtifactService.list`."""
        validate_request(request)
        scopes = [
            (request.app_name, request.user_id, request.session_id),
            (request.app_name, request.user_id, USER_SCOPE),
        ]
        with self._lock:
            names = {name for scope in scopes for name in self._scopes.get(scope, {})}
        return ListResponse(file_names=sorted(names))

    async def versions(self, request: VersionsRequest) -> VersionsResponse:
        """List a name's versions ascending; see :meth:`ArtifactService.versions`."""
        validate_request(request)
        with self._lock:
            versions = self._scopes.get(_scope(request), {}).get(request.file_name)
            if not versions:
                raise not_found_error(request)
            return VersionsResponse(versions=sorted(versions))

    async def get_artifact_version(
        self, request: GetArtifactVersionRequest
    ) -> GetArtifactVersionResponse:
        """Describe a version; see :meth:`ArtifactService.get_artifact_version`."""
        validate_request(request)
        with self._lock:
            version, stored = self._find(request, request.version)
        return GetArtifactVersionResponse(artifact_version=_describe(version, stored))

    async def list_artifact_versions(
        self, request: ListArtifactVersionsRequest
    ) -> ListArtifactVersionsResponse:
        """Describe every version; see :meth:`ArtifactService.list_artifact_versions`."""
        validate_request(request)
        with self._lock:
            versions = dict(self._scopes.get(_scope(request), {}).get(request.file_name, {}))
        if not versions:
            raise not_found_error(request)
        return ListArtifactVersionsResponse(
            artifact_versions=[_describe(v, versions[v]) for v in sorted(versions)]
        )

    def _find(
        self, request: LoadRequest | GetArtifactVersionRequest, version: int
    ) -> tuple[int, _Stored]:
        versions = self._scopes.get(_scope(request), {}).get(request.file_name, {})
        if not version:
            if not versions:
                raise not_found_error(request)
            version = max(versions)
        stored = versions.get(version)
        if stored is None:
            raise not_found_error(request, version)
        return version, stored


def _describe(version: int, stored: _Stored) -> ArtifactVersion:
    return ArtifactVersion(
        version=version,
        canonical_uri="",
        custom_metadata=dict(stored.custom_metadata),
        create_time=stored.create_time,
        mime_type=stored.mime_type,
    )


def _scope(
    request: SaveRequest
    | LoadRequest
    | DeleteRequest
    | VersionsRequest
    | GetArtifactVersionRequest
    | ListArtifactVersionsRequest,
) -> _Scope:
    return (
        request.app_name,
        request.user_id,
        scope_segment(request.session_id, request.file_name),
    )
