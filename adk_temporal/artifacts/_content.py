"""How a part becomes stored bytes and back, shared by the byte-storing backends."""

from __future__ import annotations

from dataclasses import dataclass

from google.genai import types

__all__ = [
    "DEFAULT_BINARY_MIME_TYPE",
    "TEXT_MIME_TYPE",
    "StoredContent",
    "decode_part",
    "encode_part",
]

TEXT_MIME_TYPE = "text/plain"
"""Mime type recorded for a part saved as ``part.text``."""

DEFAULT_BINARY_MIME_TYPE = "application/octet-stream"
"""Mime type recorded for inline data that names none."""


@dataclass(frozen=True)
class StoredContent:
    """A part as a backend stores it: bytes plus what is needed to rebuild the part.

    Attributes:
        data: The text as UTF-8, or the inline data.
        mime_type: ``text/plain`` for text, else the inline data's (or the binary default).
        is_text: Whether the part was saved as ``part.text``.
        display_name: The inline data's display name; always ``None`` for text.
    """

    data: bytes
    mime_type: str
    is_text: bool
    display_name: str | None = None


def encode_part(part: types.Part) -> StoredContent:
    """Split a validated part into what a backend stores.

    Inline data wins over text when a part carries both, as in ADK-Go.

    Args:
        part: A part with inline data (its ``data`` set) or non-empty text.

    Returns:
        The bytes, mime type, text flag and display name.
    """
    if part.inline_data is not None:
        blob = part.inline_data
        return StoredContent(
            data=blob.data or b"",
            mime_type=blob.mime_type or DEFAULT_BINARY_MIME_TYPE,
            is_text=False,
            display_name=blob.display_name,
        )
    return StoredContent(
        data=(part.text or "").encode("utf-8"), mime_type=TEXT_MIME_TYPE, is_text=True
    )


def decode_part(content: StoredContent) -> types.Part:
    """Rebuild the part that :func:`encode_part` split.

    Args:
        content: What the backend stored.

    Returns:
        A text part for text, otherwise an inline-data part with the mime type and display name.
    """
    if content.is_text:
        return types.Part(text=content.data.decode("utf-8"))
    blob = types.Blob(
        data=content.data, mime_type=content.mime_type, display_name=content.display_name
    )
    return types.Part(inline_data=blob)
