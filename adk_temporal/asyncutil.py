"""Small async helpers shared by the step implementations."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

__all__ = ["maybe_await"]


async def maybe_await(value: Awaitable[Any] | Any) -> Any:
    """Await ``value`` if it is awaitable, so callbacks may be sync or async."""
    if isinstance(value, Awaitable):
        return await value
    return value
