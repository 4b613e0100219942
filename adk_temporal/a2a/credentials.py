"""Asking for credentials: an input request A2A shows as ``auth-required``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..context import ToolContext
from ..flow.remote import CREDENTIAL_KEY

__all__ = ["request_credential"]


def request_credential(
    ctx: ToolContext,
    message: str,
    schema: dict[str, Any] | None = None,
    *,
    interrupt_id: str | None = None,
    timeout: timedelta | float | None = None,
) -> str:
    """Ask whoever answers the invocation for credentials; returns the interrupt id.

    It is an input request like ``ctx.request_input`` (the answer comes back through
    ``ctx.resumed_input``), marked so that an A2A client sees the task ``auth-required``.

    Args:
        ctx: The tool's context.
        message: What is asked for, in words.
        schema: The JSON schema of the credentials (any value when ``None``).
        interrupt_id: An explicit id, unique within the invocation.
        timeout: How long to wait, as for ``ctx.request_input``.
    """
    marked = {**(schema or {}), CREDENTIAL_KEY: True}
    return ctx.request_input(message, marked, interrupt_id, timeout=timeout)
