"""The steps the invocation flow asks for, engine-neutral.

A model step, a tool call, an append and a notification's delivery, each a plain async
function over :class:`StepServices` that takes a resolved :class:`SessionRef`, the attempt
number and a :class:`Heartbeat` hook — nothing of Temporal. ``adk_temporal.activities`` wraps
them as Temporal activities; the in-process runner calls them directly.
"""

from __future__ import annotations

from .append import append_events
from .heartbeat import Heartbeat, heartbeating
from .model_step import model_step
from .notify import deliver_notice
from .ref import SessionRef
from .services import StepServices
from .session_cache import LoadedSession, SessionEventsCache, StoredEvents
from .tool_call import tool_call, tool_options

__all__ = [
    "Heartbeat",
    "LoadedSession",
    "SessionEventsCache",
    "SessionRef",
    "StepServices",
    "StoredEvents",
    "append_events",
    "deliver_notice",
    "heartbeating",
    "model_step",
    "tool_call",
    "tool_options",
]
