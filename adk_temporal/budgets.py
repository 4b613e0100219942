"""Budgets: how large each value that enters an invocation may be, and the strict JSON rule.

Every value is checked where it enters, before it can reach Temporal's history or the
session store: the user's message (by the client), each approval or input answer (by the
workflow's handlers), what a tool writes to state and returns (by the tool step), and the
answers buffered before their request opens. A value over its budget is refused with
:class:`~adk_temporal.errors.BudgetExceededError` naming the value and the limit; nothing is
retried forever and nothing already stored is lost.

Values must be strict JSON: ``NaN`` and infinities are refused rather than silently turned
into ``null``, and objects JSON cannot represent are refused rather than retried.
"""

from __future__ import annotations

import math
from typing import Any

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field

from .errors import BudgetExceededError, UnencodableValueError

__all__ = ["INT64_MAX", "INT64_MIN", "Budgets", "check_budget", "json_size", "wide_integer"]

KIB = 1024
INT64_MIN = -(2**63)
"""The smallest integer a value that reaches a tool or a store may hold."""
INT64_MAX = 2**63 - 1
"""The largest integer a value that reaches a tool or a store may hold: what SQLite,
PostgreSQL's BIGINT, protobuf and most tools' languages represent exactly."""


class Budgets(BaseModel):
    """Size limits, in bytes of compact JSON unless named a count.

    The defaults keep every Temporal payload far below its 2 MB limit even when an
    invocation's parallel calls and answers add up.
    """

    model_config = ConfigDict(frozen=True)

    message_bytes: int = Field(default=256 * KIB, gt=0)
    """The user message that starts an invocation."""
    answer_bytes: int = Field(default=64 * KIB, gt=0)
    """One approval payload or one input value."""
    state_delta_bytes: int = Field(default=256 * KIB, gt=0)
    """What one tool call writes to state (it travels through workflow history)."""
    request_bytes: int = Field(default=64 * KIB, gt=0)
    """What one tool call asks with: confirmation hints and payloads, input messages."""
    tool_response_bytes: int = Field(default=4 * KIB * KIB, gt=0)
    """One tool response (kept in the session store, never in history)."""
    model_reply_bytes: int = Field(default=512 * KIB, gt=0)
    """What one model step reports to the flow: the reply's text or calls, and what its
    callbacks recorded (it travels through history)."""
    buffered_answers: int = Field(default=32, gt=0)
    """Answers kept for requests not open yet, by count."""
    buffered_answer_bytes: int = Field(default=256 * KIB, gt=0)
    """Answers kept for requests not open yet, by size."""
    refusal_records: int = Field(default=64, gt=0)
    """Refused or unknown answers remembered (id, kind, size, reason; never the payload)."""


def _non_finite(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity inside ``value``, or ``None``."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def wide_integer(value: Any, path: str) -> str | None:
    """The path of the first integer outside 64 bits inside ``value``, or ``None``.

    Python and JSON have no limit on integers; SQLite refuses them, and a tool's parameter
    (Go, Java, protobuf) would overflow or round.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return None if INT64_MIN <= value <= INT64_MAX else path
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{path}.{key}", item) for key, item in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    for where, item in items:
        found = wide_integer(item, where)
        if found is not None:
            return found
    return None


def json_size(value: Any, what: str) -> int:
    """The size of ``value`` as compact JSON, in bytes.

    Args:
        value: Any value that must cross a boundary.
        what: Names the value in the error (``"state_delta['w']"``, ``"the response"``).

    Raises:
        UnencodableValueError: ``value`` holds ``NaN``, an infinity, or an object JSON cannot
            represent.
    """
    bad = _non_finite(value, what)
    if bad is not None:
        raise UnencodableValueError(f"{bad} is NaN or infinite, which JSON cannot represent")
    try:
        return len(pydantic_core.to_json(value))
    except pydantic_core.PydanticSerializationError as err:
        raise UnencodableValueError(f"{what} cannot be encoded as JSON: {err}") from None


def check_budget(value: Any, what: str, limit: int, budget: str) -> int:
    """``json_size(value)``, refusing a value larger than ``limit``.

    Args:
        value: The value.
        what: Names the value in the error.
        limit: The budget in bytes.
        budget: The :class:`Budgets` field that sets it, so the error says what to raise.

    Raises:
        UnencodableValueError: See :func:`json_size`.
        BudgetExceededError: The value is larger than ``limit``.
    """
    size = json_size(value, what)
    if size > limit:
        raise BudgetExceededError(
            f"{what} is {size} bytes, over the {budget} budget of {limit} bytes; keep large "
            "content in an artifact and pass its name"
        )
    return size
