"""How long a model provider asks a rate-limited caller to wait: ``Retry-After`` and RetryInfo.

Providers say it two ways: the HTTP ``Retry-After`` header (seconds, or an HTTP date) and, in
Google's APIs, a ``google.rpc.RetryInfo`` detail in the error body (``"retryDelay": "27s"``).
When both are there the longer wait wins; a value that cannot be read counts as absent.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["retry_after_seconds"]

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _header_seconds(value: str, now: float) -> float | None:
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _body_seconds(body: Any) -> float | None:
    error = body.get("error") if isinstance(body, Mapping) else None
    details = error.get("details") if isinstance(error, Mapping) else None
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, Mapping) and detail.get("@type") == _RETRY_INFO:
            delay = detail.get("retryDelay")
            matched = _DURATION.match(delay) if isinstance(delay, str) else None
            if matched:
                return float(matched.group(1))
    return None


def retry_after_seconds(
    headers: Mapping[str, str] | None, body: Any, *, now: float
) -> float | None:
    """The wait the provider asked for, in seconds, or ``None`` when it asked for none.

    Args:
        headers: The error response's headers (any case), if there was a response.
        body: The error response's JSON body, if any.
        now: The current time (POSIX seconds), to turn an HTTP date into a wait.
    """
    found: list[float] = []
    if headers is not None:
        value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
        seconds = _header_seconds(value, now) if value is not None else None
        if seconds is not None:
            found.append(seconds)
    seconds = _body_seconds(body)
    if seconds is not None:
        found.append(seconds)
    return max(found) if found else None
