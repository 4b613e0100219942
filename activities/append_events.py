"""``adk_append_events``: persist events the workflow decided (pauses, errors, endings)."""

from __future__ import annotations

from temporalio import activity

from adk_temporal.flow.messages import AppendEventsInput

from .services import (
    WorkerServices,
    append_to_session,
    current_workflow_id,
    stored_form,
    translate_errors,
)

__all__ = ["AppendEventsActivity"]


class AppendEventsActivity:
    """Appends workflow-built events to the session; idempotent by event id."""

    def __init__(self, services: WorkerServices) -> None:
        self._services = services

    @activity.defn(name="adk_append_events")
    @translate_errors
    async def run(self, inp: AppendEventsInput) -> None:
        """The append step as a Temporal activity (see :meth:`execute`)."""
        await self.execute(inp, workflow_id=current_workflow_id())

    async def execute(self, inp: AppendEventsInput, *, workflow_id: str) -> None:
        """Append ``inp.events`` (already-stored ids are skipped, so retries are harmless)."""
        services = self._services
        ref = inp.ref.resolved(workflow_id)
        loaded = await services.load_session(ref)
        events, unstage = await stored_form(services.sessions, ref, inp.events, loaded.stored.ids)
        await append_to_session(services.sessions, ref, events, unstage)
