"""Cross-origin access to the JSON API, for browser apps (a ticketing tool's page) that call it.

Off unless origins are given. Credentials are never allowed: the API authenticates by bearer
token in a header, and the console's cookie must stay unusable from other sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = ["CorsOriginError", "checked_origin", "cors_options"]


class CorsOriginError(ValueError):
    """A configured origin is not ``scheme://host[:port]`` or ``*``."""


def checked_origin(value: str) -> str:
    """``value`` as browsers send it in ``Origin`` (no trailing slash, lower-case scheme and
    host), or :class:`CorsOriginError` naming what is wrong."""
    if value == "*":
        return value
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https"):
        raise CorsOriginError(f"origin {value!r} must start with http:// or https://")
    if not parts.hostname:
        raise CorsOriginError(f"origin {value!r} has no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise CorsOriginError(
            f"origin {value!r} must be scheme://host[:port] only, as browsers send it"
        )
    try:
        port = parts.port
    except ValueError:
        raise CorsOriginError(f"origin {value!r} has an invalid port") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def cors_options(origins: Sequence[str]) -> dict[str, Any]:
    """``CORSMiddleware`` settings for ``origins``, each checked now (see
    :func:`checked_origin`) rather than at the first request."""
    return {
        "allow_origins": [checked_origin(origin) for origin in origins],
        # DELETE and PATCH: ADK's session routes (adk_temporal.web.adk).
        "allow_methods": ["GET", "POST", "DELETE", "PATCH"],
        "allow_headers": ["Authorization", "Content-Type", "Last-Event-ID"],
        "allow_credentials": False,
        "max_age": 600,
    }
