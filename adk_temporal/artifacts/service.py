"""The artifact service contract every backend implements (SPEC §2)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from adk_temporal.artifacts.requests import (
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
)

__all__ = ["IDEMPOTENCY_WINDOW", "ArtifactService"]

IDEMPOTENCY_WINDOW = 16
"""How many of a name's latest versions a save searches for a matching idempotency key.

A retried activity repeats a save moments after the first attempt, so its earlier version is
among the newest; bounding the search keeps a save's cost independent of the history length.
"""


@runtime_checkable
class ArtifactService(Protocol):
    """Versioned storage of ``google.genai.types.Part`` values, scoped by app, user, session.

    Every method validates its request first (:func:`validate_request`) and raises
    :class:`~adk_temporal.errors.InvalidArtifactRequestError` without touching storage when it
    fails. A file name starting with ``user:`` lives in the user scope: it is shared by every
    session of the same app and user, and invisible to other users and apps.
    """

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Store ``request.part`` as a new version; never overwrites.

        Edge cases: with ``version`` ``None``/``0`` the new version is the latest plus one (1
        for a new name, or after every version was deleted; deleting the latest makes its
        number reusable). A positive ``version`` is saved exactly. If ``idempotency_key``
        matches one of the latest :data:`IDEMPOTENCY_WINDOW` versions of the name, that
        version is returned and nothing is written. Zero-length inline data is valid content;
        inline data whose ``data`` is ``None`` is refused.

        Args:
            request: What to save and where.

        Returns:
            The version created, or found by idempotency key.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            VersionConflictError: The explicit ``version`` exists, or (on backends that race
                optimistically) every attempt lost the race for the next number.
        """
        ...

    async def load(self, request: LoadRequest) -> LoadResponse:
        """Return the content of a version; ``version=0`` means the latest.

        Edge cases: the returned part is the caller's own copy; mutating it does not change
        the store. It is the part as saved, on every backend: text as ``part.text``, inline
        data with its mime type and display name.

        Args:
            request: Which version to load.

        Returns:
            The stored part.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            ArtifactNotFoundError: The name has no versions, or not the requested one.
        """
        ...

    async def delete(self, request: DeleteRequest) -> None:
        """Delete one version (``version=n``) or every version (``version=0``) of a name.

        Edge cases: deleting a name or version that does not exist is not an error.

        Args:
            request: What to delete.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
        """
        ...

    async def list(self, request: ListRequest) -> ListResponse:
        """List the names visible to a session: its own plus the user-scoped names.

        Edge cases: names only, sorted in byte order, without duplicates; an empty list (never
        not-found) when there are none.

        Args:
            request: The session to list for.

        Returns:
            The visible file names.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
        """
        ...

    async def versions(self, request: VersionsRequest) -> VersionsResponse:
        """List the versions of a name in ascending order.

        Args:
            request: Which name.

        Returns:
            Every existing version number, ascending.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            ArtifactNotFoundError: The name has no versions.
        """
        ...

    async def get_artifact_version(
        self, request: GetArtifactVersionRequest
    ) -> GetArtifactVersionResponse:
        """Describe a version without loading its content; ``version=0`` means the latest.

        Edge cases: ``custom_metadata`` is ``{}`` when none was saved and never contains the
        idempotency key; ``create_time`` is timezone-aware UTC on every backend.

        Args:
            request: Which version to describe.

        Returns:
            The version's number, canonical URI, metadata, creation time and mime type.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            ArtifactNotFoundError: The name has no versions, or not the requested one.
        """
        ...

    async def list_artifact_versions(
        self, request: ListArtifactVersionsRequest
    ) -> ListArtifactVersionsResponse:
        """Describe every version of a name without loading content, oldest first.

        Edge cases: each entry is what :meth:`get_artifact_version` returns for that version;
        the order is ascending by version number, as :meth:`versions` lists them.

        Args:
            request: Which name.

        Returns:
            One :class:`ArtifactVersion` per existing version, ascending.

        Raises:
            InvalidArtifactRequestError: The request failed validation.
            ArtifactNotFoundError: The name has no versions.
        """
        ...
