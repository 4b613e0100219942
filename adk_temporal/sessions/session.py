"""The Session model: one conversation's identity, merged state and events."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..events import Event
from ..ids import SessionKey

__all__ = ["Session"]


class Session(BaseModel):
    """A conversation of one user with one app.

    ``state`` is the merged view the agent reads: the session's own keys plus the app's
    ``app:`` keys and the user's ``user:`` keys (prefixes kept).
    """

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0

    @property
    def key(self) -> SessionKey:
        """The session's identity."""
        return SessionKey(self.app_name, self.user_id, self.id)
