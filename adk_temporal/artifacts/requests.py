"""Request and response models of the artifact service, and the one validation helper.

Requests are plain data: any field may be empty or malformed when the request is built, so a
caller can construct one from untrusted input and let the service decide. Every backend calls
:func:`validate_request` before touching storage; it reports all missing fields at once, then
the first rule the request breaks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, Self

from google.genai import types
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from adk_temporal.errors import (
    ArtifactNotFoundError,
    InvalidArtifactRequestError,
    VersionConflictError,
)
from adk_temporal.ids import (
    DRIVE_PREFIX,
    MAX_FILE_NAME_BYTES,
    USER_SCOPE,
    SessionKey,
    hidden_character_problem,
    id_problem,
    size_problem,
)

__all__ = [
    "DISPLAY_NAME_METADATA_KEY",
    "IDEMPOTENCY_METADATA_KEY",
    "RESERVED_METADATA_KEYS",
    "TEXT_PART_METADATA_KEY",
    "USER_SCOPE",
    "USER_SCOPE_PREFIX",
    "ArtifactRequest",
    "ArtifactVersion",
    "DeleteRequest",
    "GetArtifactVersionRequest",
    "GetArtifactVersionResponse",
    "ListArtifactVersionsRequest",
    "ListArtifactVersionsResponse",
    "ListRequest",
    "ListResponse",
    "LoadRequest",
    "LoadResponse",
    "SaveRequest",
    "SaveResponse",
    "VersionsRequest",
    "VersionsResponse",
    "not_found_error",
    "scope_segment",
    "validate_request",
    "version_exists_error",
]

USER_SCOPE_PREFIX = "user:"
"""A file name with this prefix lives in the user scope, shared by the user's sessions."""

IDEMPOTENCY_METADATA_KEY = "adk-idempotency-key"
"""Reserved metadata key holding a save's idempotency key; refused in ``custom_metadata``."""

TEXT_PART_METADATA_KEY = "adk-text-part"
"""Reserved metadata key marking a version saved as ``part.text``; refused in custom metadata."""

DISPLAY_NAME_METADATA_KEY = "adk-display-name"
"""Reserved metadata key holding ``inline_data.display_name``; refused in ``custom_metadata``."""

RESERVED_METADATA_KEYS = (
    IDEMPOTENCY_METADATA_KEY,
    TEXT_PART_METADATA_KEY,
    DISPLAY_NAME_METADATA_KEY,
)
"""Metadata keys backends store beside ``custom_metadata`` and never return in it."""

# SPEC §2.2: missing fields are reported in this order.
_REQUIRED_FIELDS = ("app_name", "user_id", "session_id", "file_name", "part")
_IDENTITY_FIELDS = ("app_name", "user_id", "session_id")


class ArtifactRequest(BaseModel):
    """Fields shared by every artifact request: the identity of the session it addresses."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = "artifact"
    """The operation's name as it appears in validation messages."""

    app_name: str = ""
    user_id: str = ""
    session_id: str = ""

    @classmethod
    def of(cls, key: SessionKey, **fields: Any) -> Self:
        """This request for the session ``key`` (``fields`` are the operation's own)."""
        return cls(**key._asdict(), **fields)

    @property
    def key(self) -> SessionKey:
        """The session the request addresses."""
        return SessionKey(self.app_name, self.user_id, self.session_id)


class SaveRequest(ArtifactRequest):
    """Save ``part`` as a new version of ``file_name``.

    ``version`` ``None`` or ``0`` means "the next version"; a positive number asks for exactly
    that version. ``idempotency_key`` makes a retried save return the version it created.
    """

    kind: ClassVar[str] = "save"

    file_name: str = ""
    part: types.Part | None = None
    version: int | None = None
    custom_metadata: dict[str, str] | None = None
    idempotency_key: str | None = None


class LoadRequest(ArtifactRequest):
    """Load a version of ``file_name``; ``version=0`` means the latest."""

    kind: ClassVar[str] = "load"

    file_name: str = ""
    version: int = 0


class DeleteRequest(ArtifactRequest):
    """Delete a version of ``file_name``; ``version=0`` means every version."""

    kind: ClassVar[str] = "delete"

    file_name: str = ""
    version: int = 0


class ListRequest(ArtifactRequest):
    """List the file names visible to a session: its own and the user-scoped ones."""

    kind: ClassVar[str] = "list"


class VersionsRequest(ArtifactRequest):
    """List the versions of ``file_name``."""

    kind: ClassVar[str] = "versions"

    file_name: str = ""


class GetArtifactVersionRequest(ArtifactRequest):
    """Describe a version of ``file_name`` without its content; ``version=0`` means latest."""

    kind: ClassVar[str] = "get artifact version"

    file_name: str = ""
    version: int = 0


class ListArtifactVersionsRequest(ArtifactRequest):
    """Describe every version of ``file_name`` without their content."""

    kind: ClassVar[str] = "list artifact versions"

    file_name: str = ""


class SaveResponse(BaseModel):
    """The version a save created (or found, for an idempotent retry)."""

    version: int


class LoadResponse(BaseModel):
    """The loaded content."""

    part: types.Part


class ListResponse(BaseModel):
    """File names in byte order, without duplicates."""

    file_names: list[str] = Field(default_factory=list)


class VersionsResponse(BaseModel):
    """Version numbers in ascending order."""

    versions: list[int] = Field(default_factory=list)


class ArtifactVersion(BaseModel):
    """What is known about one stored version, without its content.

    ``canonical_uri`` names the version in its backend's own scheme (``gs://bucket/object``,
    ``file:///path``) and is ``""`` where there is none; it is an identity, not a download link.
    """

    version: int
    canonical_uri: str = ""
    custom_metadata: dict[str, str] = Field(default_factory=dict)
    create_time: AwareDatetime
    mime_type: str

    @field_validator("create_time")
    @classmethod
    def _to_utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)


class GetArtifactVersionResponse(BaseModel):
    """The described version."""

    artifact_version: ArtifactVersion


class ListArtifactVersionsResponse(BaseModel):
    """Every version of a name, described, oldest (lowest number) first."""

    artifact_versions: list[ArtifactVersion] = Field(default_factory=list)


def scope_segment(session_id: str, file_name: str) -> str:
    """The storage segment a name lives under: its session id, or the user scope.

    Args:
        session_id: The requesting session.
        file_name: The artifact's name; a ``user:`` prefix selects the user scope.

    Returns:
        ``session_id``, or :data:`USER_SCOPE` for ``user:`` names.
    """
    return USER_SCOPE if file_name.startswith(USER_SCOPE_PREFIX) else session_id


def validate_request(request: ArtifactRequest) -> None:
    """Check a request before any backend work.

    Missing fields are reported together, in the order ``app_name, user_id, session_id,
    file_name, part``; after that the first broken rule is reported.

    Args:
        request: Any artifact request.

    Raises:
        InvalidArtifactRequestError: Naming the operation and what to fix, e.g.
            ``invalid save request: missing required fields: user_id, session_id``.
    """
    fields = type(request).model_fields
    missing = [name for name in _REQUIRED_FIELDS if name in fields and not getattr(request, name)]
    problem = (
        f"missing required fields: {', '.join(missing)}" if missing else _first_problem(request)
    )
    if problem is not None:
        raise InvalidArtifactRequestError(f"invalid {request.kind} request: {problem}")


def _first_problem(request: ArtifactRequest) -> str | None:
    for name in _IDENTITY_FIELDS:
        value = getattr(request, name)
        problem = id_problem(name, value)
        if problem is not None:
            return problem
    file_name: str | None = getattr(request, "file_name", None)
    if file_name is not None:
        if any(sep in file_name for sep in ("/", "\\")):
            return f"filename cannot contain path separators (file_name={file_name!r})"
        if "\0" in file_name:
            return f"filename cannot contain NUL (file_name={file_name!r})"
        problem = hidden_character_problem("file_name", file_name)
        if problem is not None:
            return problem
        if file_name in (".", ".."):
            return f"filename cannot be '.' or '..' (file_name={file_name!r})"
        if DRIVE_PREFIX.match(file_name):
            return f"filename cannot start with a drive prefix like 'C:' (file_name={file_name!r})"
        # Over the limit, the file backend would fail with an OSError naming a worker path.
        problem = size_problem("file_name", file_name, MAX_FILE_NAME_BYTES)
        if problem is not None:
            return problem
    version: int | None = getattr(request, "version", None)
    if version is not None and version < 0:
        return f"version cannot be negative (version={version}); use 0 for the latest"
    if isinstance(request, SaveRequest):
        return _save_problem(request)
    return None


def _save_problem(request: SaveRequest) -> str | None:
    part = request.part
    # Go treats an empty string as "no text"; zero-length inline data is still content.
    if part is not None and part.inline_data is None and not part.text:
        return "part.inline_data or part.text has to be set"
    # Stored as b"", it would load back as data the caller never gave.
    if part is not None and part.inline_data is not None and part.inline_data.data is None:
        return "part.inline_data.data has to be set (b'' is valid zero-length data)"
    custom = request.custom_metadata or {}
    for key in RESERVED_METADATA_KEYS:
        if key in custom:
            fix = "pass idempotency_key instead" if key == IDEMPOTENCY_METADATA_KEY else "rename it"
            return f"custom_metadata key {key!r} is reserved; {fix}"
    return None


def not_found_error(
    request: LoadRequest
    | VersionsRequest
    | GetArtifactVersionRequest
    | ListArtifactVersionsRequest,
    version: int = 0,
) -> ArtifactNotFoundError:
    """The not-found error every backend raises, with one message format.

    Args:
        request: The request that found nothing.
        version: The missing version, or ``0`` when the name has no versions at all.

    Returns:
        The error to raise.
    """
    what = f"artifact {request.file_name!r}" + (f" version {version}" if version else "")
    return ArtifactNotFoundError(
        f"{what} not found (app_name={request.app_name!r}, user_id={request.user_id!r}, "
        f"session_id={request.session_id!r})"
    )


def version_exists_error(request: SaveRequest, version: int) -> VersionConflictError:
    """The error for a save that asked for a version that already exists.

    Args:
        request: The save request.
        version: The requested version.

    Returns:
        The error to raise.
    """
    return VersionConflictError(
        f"artifact {request.file_name!r} version {version} already exists; "
        "save with version=0 to create the next version"
    )
