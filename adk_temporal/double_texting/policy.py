"""The four double-texting policies, by the names LangGraph gives them."""

from __future__ import annotations

from typing import Literal, get_args

from adk_temporal.errors import AdkRequestError

__all__ = [
    "POLICIES",
    "STOPPING",
    "DoubleTexting",
    "InvalidDoubleTextingError",
    "double_texting_policy",
]

DoubleTexting = Literal["reject", "enqueue", "interrupt", "rollback"]
"""What a message sent to a busy session does (see :mod:`adk_temporal.double_texting`)."""

POLICIES: tuple[DoubleTexting, ...] = get_args(DoubleTexting)
"""Every policy, in the order the docs list them."""

STOPPING: frozenset[DoubleTexting] = frozenset({"interrupt", "rollback"})
"""The policies that stop the running invocation."""


class InvalidDoubleTextingError(AdkRequestError, ValueError):
    """A double-texting policy that is none of :data:`POLICIES`."""


def double_texting_policy(value: str) -> DoubleTexting:
    """``value`` as a policy.

    Raises:
        InvalidDoubleTextingError: It names no policy; the message lists them.
    """
    for policy in POLICIES:
        if value == policy:
            return policy
    raise InvalidDoubleTextingError(
        f"unknown double-texting policy {value!r}; use one of {', '.join(POLICIES)}"
    )
