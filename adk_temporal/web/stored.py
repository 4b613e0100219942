"""A session's stored state and artifacts as the API and the console serve them.

Read from the workers' stores, never from Temporal: what an artifact holds is opened as
text, JSON or an image, and downloaded as saved.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from google.genai import types
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from ..render import part_bytes
from .errors import ApiError

__all__ = [
    "ArtifactContent",
    "ArtifactEntry",
    "ArtifactList",
    "ArtifactView",
    "StateView",
    "artifact_content",
    "file_response",
    "version_param",
]

ContentKind = Literal["text", "json", "image", "binary"]

_SHOWN_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Images a page shows inline; others (SVG, which can hold script) are only downloaded."""


class StateView(BaseModel):
    """``GET {session}/state``: the session's state as stored."""

    state: dict[str, Any]


class ArtifactEntry(BaseModel):
    """One artifact of a session: its versions, oldest first, and where its latest is."""

    name: str
    versions: list[int]
    mime_types: list[str]
    url: str


class ArtifactList(BaseModel):
    """``GET {session}/artifacts``: every artifact the session sees."""

    artifacts: list[ArtifactEntry]


class ArtifactView(BaseModel):
    """``GET {session}/artifacts/{name}``: one version's content, ``text`` or ``base64``."""

    name: str
    version: int
    mime_type: str
    kind: ContentKind
    size: int
    text: str | None = None
    base64: str | None = None


@dataclass(frozen=True)
class ArtifactContent:
    """One loaded version: its bytes and how a page shows them."""

    name: str
    version: int
    mime_type: str
    data: bytes
    kind: ContentKind

    def shown(self) -> str | None:
        """The text a page shows (JSON indented); ``None`` for images and other bytes."""
        if self.kind == "json":
            return json.dumps(json.loads(self.data), indent=2, ensure_ascii=False)
        return self.data.decode() if self.kind == "text" else None

    def view(self) -> ArtifactView:
        """The content as the JSON API returns it."""
        readable = self.kind in ("text", "json")
        return ArtifactView(
            name=self.name,
            version=self.version,
            mime_type=self.mime_type,
            kind=self.kind,
            size=len(self.data),
            text=self.data.decode() if readable else None,
            base64=None if readable else base64.b64encode(self.data).decode(),
        )


def _kind(mime_type: str, data: bytes) -> ContentKind:
    if mime_type in _SHOWN_IMAGES:
        return "image"
    try:
        decoded = data.decode()
    except UnicodeDecodeError:
        return "binary"
    if mime_type.endswith(("+json", "/json")):
        try:
            json.loads(decoded)
        except ValueError:
            return "text"
        return "json"
    return "text" if mime_type.startswith("text/") else "binary"


def artifact_content(name: str, version: int, part: types.Part) -> ArtifactContent:
    """How the stored ``part`` of ``name``'s ``version`` is shown and served."""
    if part.inline_data is not None:
        mime_type = part.inline_data.mime_type or "application/octet-stream"
    else:
        mime_type = "text/plain; charset=utf-8"
    data = part_bytes(part)
    return ArtifactContent(name, version, mime_type, data, _kind(mime_type.split(";")[0], data))


def version_param(request: Request) -> int:
    """The ``version`` query parameter: a positive number, or 0 (absent) for the latest.

    Raises:
        ApiError: 422 when it is not a whole number of at least 1.
    """
    value = request.query_params.get("version", "0")
    if not value.isdecimal():
        raise ApiError(422, "invalid_query", f"version must be a number from 1, not {value!r}")
    return int(value)


def file_response(content: ArtifactContent, *, download: bool) -> Response:
    """The version's bytes as saved: an attachment, or inline for an image a page shows.

    Anything not shown inline is an attachment in a sandbox (and the server sends every
    response ``nosniff``): a stored HTML or SVG file never runs in the console's origin.
    """
    inline = not download and content.kind == "image"
    disposition = "inline" if inline else "attachment"
    filename = quote(content.name.rsplit("/", 1)[-1], safe="")
    headers = {
        "Content-Disposition": f"{disposition}; filename*=UTF-8''{filename}",
        "Content-Security-Policy": "sandbox",
    }
    return Response(content.data, media_type=content.mime_type, headers=headers)
