"""``SealedArtifactService``: any artifact store, its contents sealed with data keys.

Wraps a backend (file, GCS, memory): a saved part's bytes — text, inline data, its mime
type and display name — are sealed with the data key of its session (a ``user:`` name:
of its user) and stored as inline data under the part's own mime type, so listings and
descriptions stay what they were. Loading opens them; a version whose key was forgotten
raises :class:`~adk_temporal.errors.ForgottenError`, wherever its bytes survived (a
bucket's soft-deleted objects, a backup). Names, version numbers and custom metadata stay
readable, as they were. Versions saved before sealing was turned on load as they are.
"""

from __future__ import annotations

import json

from google.genai import types

from ..artifacts import (
    ArtifactService,
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
from ..artifacts.requests import USER_SCOPE_PREFIX
from .datakeys import DataKeys
from .sealing import SealedValueError, open_bytes, seal_bytes, sealed_key_id

__all__ = ["SealedArtifactService"]

_TEXT = "text/plain"


def _pack(part: types.Part) -> tuple[bytes, str, str | None]:
    """The part as ``header || content`` bytes, its mime type and its display name."""
    header: dict[str, str | bool | None]
    if part.inline_data is not None:
        blob = part.inline_data
        header = {"mime_type": blob.mime_type, "display_name": blob.display_name}
        data, mime, display = blob.data or b"", blob.mime_type, blob.display_name
    else:
        header = {"text": True}
        data, mime, display = (part.text or "").encode(), _TEXT, None
    head = json.dumps(header).encode()
    return len(head).to_bytes(4, "big") + head + data, mime or "application/octet-stream", display


def _unpack(packed: bytes, name: str) -> types.Part:
    size = int.from_bytes(packed[:4], "big")
    try:
        header = json.loads(packed[4 : 4 + size])
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SealedValueError(f"sealed artifact {name!r} has a malformed header") from None
    data = packed[4 + size :]
    if header.get("text"):
        return types.Part(text=data.decode())
    blob = types.Blob(
        data=data, mime_type=header.get("mime_type"), display_name=header.get("display_name")
    )
    return types.Part(inline_data=blob)


class SealedArtifactService(ArtifactService):
    """An artifact store whose contents are sealed with per-session data keys.

    Args:
        inner: The backend that stores the sealed bytes.
        keys: The deployment's data keys.
    """

    def __init__(self, inner: ArtifactService, keys: DataKeys) -> None:
        self.inner = inner
        self.keys = keys

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Seal the part, then save it (see :meth:`ArtifactService.save`)."""
        validate_request(request)
        assert request.part is not None  # validated
        scope = self.keys.scope_of(
            request.key, user_wide=request.file_name.startswith(USER_SCOPE_PREFIX)
        )
        key = await self.keys.afor_scope(scope)
        packed, mime, display = _pack(request.part)
        sealed = seal_bytes(key, packed, name=request.file_name)
        blob = types.Blob(data=sealed, mime_type=mime, display_name=display)
        return await self.inner.save(
            request.model_copy(update={"part": types.Part(inline_data=blob)})
        )

    async def load(self, request: LoadRequest) -> LoadResponse:
        """Load and open a version (see :meth:`ArtifactService.load`).

        Raises:
            ForgottenError: The version's key was forgotten.
        """
        loaded = await self.inner.load(request)
        blob = loaded.part.inline_data
        if blob is None or blob.data is None or sealed_key_id(blob.data) is None:
            return loaded
        packed = await open_bytes(self.keys, blob.data, name=request.file_name)
        return LoadResponse(part=_unpack(packed, request.file_name))

    async def delete(self, request: DeleteRequest) -> None:
        """See :meth:`ArtifactService.delete`."""
        await self.inner.delete(request)

    async def list(self, request: ListRequest) -> ListResponse:
        """See :meth:`ArtifactService.list`."""
        return await self.inner.list(request)

    async def versions(self, request: VersionsRequest) -> VersionsResponse:
        """See :meth:`ArtifactService.versions`."""
        return await self.inner.versions(request)

    async def get_artifact_version(
        self, request: GetArtifactVersionRequest
    ) -> GetArtifactVersionResponse:
        """See :meth:`ArtifactService.get_artifact_version`."""
        return await self.inner.get_artifact_version(request)

    async def list_artifact_versions(
        self, request: ListArtifactVersionsRequest
    ) -> ListArtifactVersionsResponse:
        """See :meth:`ArtifactService.list_artifact_versions`."""
        return await self.inner.list_artifact_versions(request)
