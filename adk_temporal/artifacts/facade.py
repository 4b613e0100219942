"""``ctx.artifacts``: the artifact service bound to one session, recording saved versions."""

from __future__ import annotations

import builtins

from google.genai import types

from adk_temporal.artifacts.requests import (
    ArtifactVersion,
    GetArtifactVersionRequest,
    ListArtifactVersionsRequest,
    ListRequest,
    LoadRequest,
    SaveRequest,
    VersionsRequest,
)
from adk_temporal.artifacts.service import ArtifactService
from adk_temporal.events import EventActions
from adk_temporal.faults import fault_point
from adk_temporal.ids import SessionKey
from adk_temporal.tracing import span

__all__ = ["ArtifactsFacade"]


class ArtifactsFacade:
    """The artifact service with the session's identity filled in (SPEC §1.3, §2.1).

    In a tracked context (``actions`` given) every successful save records
    ``actions.artifact_delta[name] = version``, keeping the higher version when a name is
    saved twice, whatever order the saves complete in. A failed save raises and leaves the
    delta unchanged; loads and listings never touch it.

    Each save carries an idempotency key derived from ``idempotency_key``, the name and the
    save's ordinal for that name within this facade (``"{key}/{name}/{n}"``, counted per call,
    a failed save included). A re-run of the same code with a facade built from the same key
    (a retried Temporal activity) therefore gets back the versions the first run created.

    Args:
        service: The artifact service to call.
        key: The session.
        actions: Where saves are recorded; ``None`` for an untracked facade.
        idempotency_key: Stable across retries of the same unit of work; ``None`` sends no
            idempotency key, so every save creates a version.
    """

    def __init__(
        self,
        service: ArtifactService,
        key: SessionKey,
        *,
        actions: EventActions | None,
        idempotency_key: str | None,
    ) -> None:
        self._service = service
        # The identity every request carries; a ListRequest is exactly that identity.
        self._identity = ListRequest.of(key)
        self._actions = actions
        self._idempotency_key = idempotency_key
        self._save_counts: dict[str, int] = {}

    @property
    def service(self) -> ArtifactService:
        """The underlying artifact service, for the operations the facade does not offer."""
        return self._service

    async def save(
        self, name: str, part: types.Part, custom_metadata: dict[str, str] | None = None
    ) -> int:
        """Save ``part`` as the next version of ``name`` and record it in the delta.

        Args:
            name: The file name; a ``user:`` prefix shares it across the user's sessions.
            part: Text or inline data.
            custom_metadata: Stored with the version.

        Returns:
            The version created, or the one an earlier run created with the same key.

        Raises:
            InvalidArtifactRequestError: The name or part is invalid.
            VersionConflictError: The backend lost the version race on every attempt.
        """
        # Taken before the first await so concurrent saves get ordinals in call order.
        ordinal = self._save_counts.get(name, 0) + 1
        self._save_counts[name] = ordinal
        key = None
        if self._idempotency_key is not None:
            key = f"{self._idempotency_key}/{name}/{ordinal}"
        with span("adk.artifact.save", {"adk.artifact.name": name}):
            response = await self._service.save(
                SaveRequest(
                    **self._identity.model_dump(),
                    file_name=name,
                    part=part,
                    custom_metadata=custom_metadata,
                    idempotency_key=key,
                )
            )
        fault_point("artifact.after_save")
        if self._actions is not None:
            delta = self._actions.artifact_delta
            delta[name] = max(delta.get(name, 0), response.version)
        return response.version

    async def load(self, name: str, version: int = 0) -> types.Part:
        """Load a version of ``name``; ``0`` means the latest.

        Args:
            name: The file name.
            version: The version, or ``0`` for the latest.

        Returns:
            The stored part (the caller's own copy).

        Raises:
            InvalidArtifactRequestError: The name or version is invalid.
            ArtifactNotFoundError: The name or version does not exist.
        """
        request = LoadRequest(
            **self._identity.model_dump(),
            file_name=name,
            version=version,
        )
        return (await self._service.load(request)).part

    async def list(self) -> list[str]:
        """The names visible to this session (its own and the user's), in byte order.

        Returns:
            The file names; empty when there are none.
        """
        # A copy: a service may keep or alter the request it is given.
        return (await self._service.list(self._identity.model_copy())).file_names

    async def versions(self, name: str) -> builtins.list[int]:
        """The versions of ``name``, ascending.

        Args:
            name: The file name.

        Returns:
            The version numbers.

        Raises:
            ArtifactNotFoundError: The name has no versions.
        """
        request = VersionsRequest(**self._identity.model_dump(), file_name=name)
        return (await self._service.versions(request)).versions

    async def get_version(self, name: str, version: int = 0) -> ArtifactVersion:
        """Describe a version of ``name`` without loading it; ``0`` means the latest.

        Args:
            name: The file name.
            version: The version, or ``0`` for the latest.

        Returns:
            The version's metadata.

        Raises:
            ArtifactNotFoundError: The name or version does not exist.
        """
        request = GetArtifactVersionRequest(
            **self._identity.model_dump(),
            file_name=name,
            version=version,
        )
        return (await self._service.get_artifact_version(request)).artifact_version

    async def list_artifact_versions(self, name: str) -> builtins.list[ArtifactVersion]:
        """Describe every version of ``name`` without loading them, oldest first.

        Args:
            name: The file name.

        Returns:
            The metadata of each version, ascending by version number.

        Raises:
            InvalidArtifactRequestError: The name is invalid.
            ArtifactNotFoundError: The name has no versions.
        """
        request = ListArtifactVersionsRequest(**self._identity.model_dump(), file_name=name)
        return (await self._service.list_artifact_versions(request)).artifact_versions
