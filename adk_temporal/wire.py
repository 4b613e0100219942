"""``WireModel``: the base of every model that crosses a process or Temporal boundary.

Temporal payloads are written with ``exclude_unset`` so that ``google.genai`` content —
dozens of optional fields, nearly all unset — costs only the fields it uses in workflow
history. Our own models opt out of that: every field of a ``WireModel`` counts as set, so a
default container filled in place (``actions.state_delta[key] = value``) is never dropped on
the way across, and an empty map still serialises as ``{}``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["WireModel"]


class WireModel(BaseModel):
    """A pydantic model whose fields are always serialised, defaults included."""

    def model_post_init(self, context: Any, /) -> None:
        """Mark every field as set (see the module docstring for why)."""
        self.__pydantic_fields_set__.update(type(self).model_fields)
