"""``adk_append_events``: persist events the workflow decided (pauses, errors, endings)."""

from __future__ import annotations

from temporalio import activity

from .messages import AppendEventsInput
from .services import WorkerServices, append_to_session, resolve, translate_errors

__all__ = ["AppendEventsActivity"]


class AppendEventsActivity:
    """Appends workflow-built events to the session; idempotent by event id."""

    def __init__(self, services: WorkerServices) -> None:
        self._services = services

    @activity.defn(name="adk_append_events")
    @translate_errors
    async def run(self, inp: AppendEventsInput) -> None:
        """Append ``inp.events`` (already-stored ids are skipped, so retries are harmless)."""
        await append_to_session(self._services.sessions, resolve(inp.ref), inp.events)
