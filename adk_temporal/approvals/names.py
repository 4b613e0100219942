"""The rule for principal, group and assignee names (short, visible text), and models that
refuse bad values with the approvals' own error."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from ..ids import hidden_character_problem
from .errors import InvalidPolicyError

__all__ = ["MAX_NAME_CHARS", "Checked", "check_name"]

MAX_NAME_CHARS = 200
"""The longest principal or group name."""


def check_name(value: str, what: str) -> str:
    """``value`` when it may name a principal or group.

    Raises:
        InvalidPolicyError: It is empty, longer than :data:`MAX_NAME_CHARS`, or holds a
            control or format character.
    """
    if not value or not value.strip() or len(value) > MAX_NAME_CHARS:
        raise InvalidPolicyError(
            f"{what} must be a name of 1 to {MAX_NAME_CHARS} characters, got {value!r:.60}"
        )
    problem = hidden_character_problem(what, value)
    if problem is not None:
        raise InvalidPolicyError(problem)
    return value


class Checked(BaseModel):
    """A model whose constructor refuses bad values with :class:`InvalidPolicyError`, naming
    each field and rule (pydantic's own error for the ones its validators raise)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            problems = "; ".join(
                ".".join(map(str, e["loc"]))
                + ": " * bool(e["loc"])
                + e["msg"].removeprefix("Value error, ")
                for e in err.errors(include_url=False)
            )
            raise InvalidPolicyError(f"{type(self).__name__}: {problems}") from None
