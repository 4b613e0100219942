"""Versioned artifact storage: the service contract, its requests, and three backends.

``InMemoryArtifactService`` for tests, ``FileArtifactService`` as the embedded default (safe
for several processes on one machine), ``GcsArtifactService`` for production (bucket layout
compatible with ADK-Go). ``ArtifactsFacade`` is what tools and callbacks see as
``ctx.artifacts``. Errors are those of :mod:`adk_temporal.errors`, re-exported here.
"""

from __future__ import annotations

from adk_temporal.artifacts.facade import ArtifactsFacade
from adk_temporal.artifacts.file import FileArtifactService
from adk_temporal.artifacts.gcs import GcsArtifactService, GcsStats
from adk_temporal.artifacts.memory import InMemoryArtifactService
from adk_temporal.artifacts.requests import (
    ArtifactRequest,
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
    validate_request,
)
from adk_temporal.artifacts.service import ArtifactService
from adk_temporal.errors import (
    ArtifactNotFoundError,
    InvalidArtifactRequestError,
    VersionConflictError,
)

__all__ = [
    "ArtifactNotFoundError",
    "ArtifactRequest",
    "ArtifactService",
    "ArtifactVersion",
    "ArtifactsFacade",
    "DeleteRequest",
    "FileArtifactService",
    "GcsArtifactService",
    "GcsStats",
    "GetArtifactVersionRequest",
    "GetArtifactVersionResponse",
    "InMemoryArtifactService",
    "InvalidArtifactRequestError",
    "ListArtifactVersionsRequest",
    "ListArtifactVersionsResponse",
    "ListRequest",
    "ListResponse",
    "LoadRequest",
    "LoadResponse",
    "SaveRequest",
    "SaveResponse",
    "VersionConflictError",
    "VersionsRequest",
    "VersionsResponse",
    "validate_request",
]
