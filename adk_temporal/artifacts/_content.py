"""How a part becomes stored bytes and back, shared by the byte-storing backends."""

from __future__ import annotations

from google.genai import types

__all__ = ["DEFAULT_BINARY_MIME_TYPE", "TEXT_MIME_TYPE", "decode_part", "encode_part"]

TEXT_MIME_TYPE = "text/plain"
"""Mime type recorded for a part saved as ``part.text``."""

DEFAULT_BINARY_MIME_TYPE = "application/octet-stream"
"""Mime type recorded for inline data that names none."""


def encode_part(part: types.Part) -> tuple[bytes, str, bool]:
    """Split a validated part into its bytes, mime type and whether it was text.

    Inline data wins over text when a part carries both, as in ADK-Go.

    Args:
        part: A part with inline data or non-empty text.

    Returns:
        ``(data, mime_type, is_text)``.
    """
    if part.inline_data is not None:
        blob = part.inline_data
        return blob.data or b"", blob.mime_type or DEFAULT_BINARY_MIME_TYPE, False
    return (part.text or "").encode("utf-8"), TEXT_MIME_TYPE, True


def decode_part(data: bytes, mime_type: str, is_text: bool) -> types.Part:
    """Rebuild a part from stored bytes.

    Args:
        data: The stored bytes.
        mime_type: The stored mime type.
        is_text: Whether the part was saved as ``part.text``.

    Returns:
        A text part for text, otherwise an inline-data part with the mime type.
    """
    if is_text:
        return types.Part(text=data.decode("utf-8"))
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))
