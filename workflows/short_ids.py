"""Ids a run draws from its run id, and the workflow's side of their short form.

The short form itself, and restoring it before a step runs, are the activity's side
(:mod:`adk_temporal.activities.short_ids`, whose docstring describes the form): the
workflow draws its ids with the same function and writes the ones it drew short just before
it schedules a step (:class:`RunIds`), and reads a tool step's short result back whole
(:func:`whole_result`).
"""

from __future__ import annotations

from adk_temporal.activities.short_ids import (
    DEFAULT_RUN_CONFIG,
    STAGED_MARK,
    StepInput,
    drawn_id,
    run_invocation_id,
)
from adk_temporal.flow.compacting import CompactionInput
from adk_temporal.flow.messages import (
    AppendEventsInput,
    InvocationRef,
    MergedResponses,
    ModelStepInput,
    PendingEvent,
    StagedResponse,
    StagedResult,
    ToolCallInput,
    ToolCallResult,
    stage_id,
)

__all__ = ["RunIds", "whole_result"]


class RunIds:
    """The workflow's side: draws the run's ids and writes the ones it drew short.

    Args:
        run_id: The run's id.
        first_run_id: The run id of the chain's first run (the same after a reset).
        continued_run_id: The run this one continues as new, if any.
    """

    def __init__(self, run_id: str, first_run_id: str, continued_run_id: str | None) -> None:
        self._seed = f"{first_run_id}/{continued_run_id}" if continued_run_id else first_run_id
        self._drawn: dict[str, int] = {}
        # A step rebuilds ids from its workflow's run id: only the seed of a first run
        # that was never reset is that.
        self._short = self._seed == run_id
        self.invocation_id = run_invocation_id(self._seed)
        """The invocation id the run starts with when it was given none."""

    def draw(self) -> str:
        """The run's next id."""
        n = len(self._drawn) + 1
        drawn = drawn_id(self._seed, n)
        self._drawn[drawn] = n
        return drawn

    def short(self, inp: StepInput) -> StepInput:
        """``inp`` as it crosses history: drawn ids as ``~n``, derivable values left out."""
        if not self._short:
            return inp
        whole = inp.ref.invocation_id
        update: dict[str, object] = {"ref": self._ref(inp.ref)}
        if isinstance(inp, ModelStepInput):
            update["model_event_id"] = self._id(inp.model_event_id)
            update["pending_events"] = self._events(inp.pending_events, whole, inp.timestamp)
            update["timestamp"] = 0.0
        elif isinstance(inp, AppendEventsInput):
            update["events"] = self._events(inp.events, whole, None)
        elif isinstance(inp, CompactionInput):
            update["event_id"] = self._id(inp.event_id)
            update["timestamp"] = 0.0
        if isinstance(inp, ModelStepInput | ToolCallInput) and inp.run_config == DEFAULT_RUN_CONFIG:
            update["run_config"] = None
        return inp.model_copy(update=update)

    def _ref(self, ref: InvocationRef) -> InvocationRef:
        if ref.invocation_id != self.invocation_id:
            return ref
        return ref.model_copy(update={"invocation_id": ""})

    def _id(self, value: str) -> str:
        n = self._drawn.get(value)
        return value if n is None else f"~{n}"

    def _events(
        self, events: list[PendingEvent], invocation_id: str, timestamp: float | None
    ) -> list[PendingEvent]:
        return [self._event(e, invocation_id, timestamp) for e in events]

    def _event(
        self, event: PendingEvent, invocation_id: str, timestamp: float | None
    ) -> PendingEvent:
        at = 0.0 if event.timestamp == timestamp else event.timestamp
        if isinstance(event, MergedResponses):
            responses = [
                self._staged(r, invocation_id)
                if isinstance(r, StagedResponse)
                else self._event(r, invocation_id, timestamp)
                for r in event.responses
            ]
            return event.model_copy(
                update={"id": self._id(event.id), "timestamp": at, "responses": responses}
            )
        mine = event.invocation_id == invocation_id
        return event.model_copy(
            update={
                "id": self._id(event.id),
                "invocation_id": "" if mine else event.invocation_id,
                "timestamp": at,
            }
        )

    @staticmethod
    def _staged(response: StagedResponse, invocation_id: str) -> StagedResponse:
        prefix = stage_id(invocation_id, "")
        if not response.staged.startswith(prefix):
            return response
        return response.model_copy(
            update={"staged": STAGED_MARK + response.staged.removeprefix(prefix)}
        )


def whole_result(result: ToolCallResult, invocation_id: str) -> ToolCallResult:
    """The workflow's side: a tool step's result with its staged id whole again."""
    if not isinstance(result, StagedResult) or not result.staged.startswith(STAGED_MARK):
        return result
    call_id = result.staged.removeprefix(STAGED_MARK)
    return result.model_copy(update={"staged": stage_id(invocation_id, call_id)})
