"""Session storage: the Session model, the SessionService interface and its backends."""

from __future__ import annotations

from .memory import InMemorySessionService
from .service import SessionService
from .session import Session
from .sqlite import SqliteSessionService

__all__ = [
    "InMemorySessionService",
    "Session",
    "SessionService",
    "SqliteSessionService",
]
