"""``adk_rewind``: a rolled-back invocation's session taken back to before it (double
texting's ``rollback``), by :func:`adk_temporal.rewind.rewind_session`."""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import activity

from adk_temporal.errors import InvocationNotFoundError, SessionNotFoundError
from adk_temporal.flow.messages import InvocationRef
from adk_temporal.rewind import RewindResult, rewind_session
from adk_temporal.steps import StepServices

from .adapter import step_ref, translate_errors

__all__ = ["RewindActivity", "RewindSessionInput"]


class RewindSessionInput(BaseModel):
    """Input of ``adk_rewind``: the invocation taken back, and the rewind event's id."""

    ref: InvocationRef
    """The rolled-back invocation (its session ids may be left to the workflow id)."""
    event_id: str
    """Drawn by the workflow: a retried rewind finds its event and writes nothing."""


class RewindActivity:
    """Rewinds a session against the worker's stores."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_rewind")
    @translate_errors
    async def run(self, inp: RewindSessionInput) -> RewindResult | None:
        """Append the event that takes the session back to before ``inp.ref``'s invocation;
        ``None`` when the invocation stored nothing (no session, or none of its events)."""
        ref = step_ref(inp.ref)
        try:
            return await rewind_session(
                self._services.sessions,
                self._services.artifacts,
                ref.key,
                ref.invocation_id,
                event_id=inp.event_id,
            )
        except (SessionNotFoundError, InvocationNotFoundError):
            return None
