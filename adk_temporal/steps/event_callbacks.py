"""Event callbacks: what an app's ``on_event`` callbacks make of each event a step stores.

ADK's ``BasePlugin.on_event_callback`` in shape (google/adk/plugins/base_plugin.py; the
runner merges a replacement onto the original in ``Runner._get_output_event``): each
callback, in order, sees the event about to be stored and may return a replacement, whose
fields replace the original's — its id, invocation and time excepted — or ``None`` to keep
it. Redaction is the use they are for: a secret removed here never reaches the store, the
model's later view, or a follower.

Every event a step stores passes them: model replies, merged tool responses, request and
answer events, graph node output — and a compaction's summary, which reaches them as the
content of its compaction event (where ADK's own runner and ADK-Go append compaction events
past the plugins: adk-go #1232, #1234), so a callback written for messages redacts the
summary too.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from ..events import Event, EventCallback

__all__ = ["run_event_callbacks"]

_KEPT = frozenset({"id", "invocation_id", "timestamp"})


async def run_event_callbacks(callbacks: Sequence[EventCallback], event: Event) -> Event:
    """``event`` after each callback in turn (the event itself when there are none)."""
    for callback in callbacks:
        returned = callback(event.model_copy(deep=True))
        replacement = await returned if inspect.isawaitable(returned) else returned
        if replacement is None:
            continue
        update = {
            name: getattr(replacement, name)
            for name in replacement.model_fields_set
            if name not in _KEPT
        }
        event = event.model_copy(update=update)
    return event
