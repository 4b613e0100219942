"""The append step: store events the flow decided (pauses, errors, endings)."""

from __future__ import annotations

from ..flow.messages import AppendEventsInput
from .ref import SessionRef
from .services import StepServices
from .writes import append_to_session, stored_form

__all__ = ["append_events"]


async def append_events(services: StepServices, inp: AppendEventsInput, ref: SessionRef) -> None:
    """Append ``inp.events`` (already-stored ids are skipped, so retries are harmless)."""
    services.check_app(ref)
    loaded = await services.load_session(ref)
    events, unstage = await stored_form(services.sessions, ref, inp.events, loaded.stored.ids)
    await append_to_session(services, ref, events, unstage)
