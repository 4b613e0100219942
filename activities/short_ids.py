"""The short form of a baseline run's step inputs, and the activity's side of it.

A run at baseline 1 or later (:data:`~adk_temporal.workflows.messages.BASELINE`) draws its ids from
a seed its start event holds, the run id of the chain's first run (and, in a continued run,
the run it continues): the n-th is ``uuid5(seed, n)``, the invocation it starts ``e-`` plus
the 0th. A reset run replays from the copied start event, so it draws the same ids. In a
chain's first run the seed is the run id, which the activity running a step knows, so a
step's input there names such an id ``~n`` and leaves out what the step can read elsewhere
in the input: the run's own invocation id (``""`` in the ref), the step's time (the time Temporal
scheduled it, which a retry keeps), an event's invocation id and time when they are the
step's, the invocation in a staged response's id (``~/<call
id>``), options at their defaults. Bookkeeping is most of what a short step adds to
history: these are 40-odd bytes each, several times per step.

The workflow shortens an input just before it schedules the step
(:class:`~adk_temporal.workflows.short_ids.RunIds`); the activity restores it before the step
runs (:func:`restored`), and shortens what it returns only to a workflow that shortened what
it sent. The flow, the steps and the session store only ever see whole ids. The form is
defined here, on the activity's side, so the workflow's side imports it and no arrow runs
from the activities back up to the workflows.
"""

from __future__ import annotations

import uuid
from typing import TypeVar

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
from adk_temporal.run_config import RunConfig

__all__ = [
    "DEFAULT_RUN_CONFIG",
    "STAGED_MARK",
    "StepInput",
    "drawn_id",
    "restored",
    "run_invocation_id",
    "short_result",
]

_NAMESPACE = uuid.UUID("5d0b8e5c-8a62-4a8e-9a41-6f1f2b7c3e10")

STAGED_MARK = "~/"
"""What stands for the run's own invocation in a short staged-response id."""

DEFAULT_RUN_CONFIG = RunConfig()
"""Options a short input leaves out when they are all at their defaults."""

StepInput = TypeVar("StepInput", ModelStepInput, ToolCallInput, AppendEventsInput, CompactionInput)
"""A step's input: what ``RunIds`` shortens and :func:`restored` restores."""


def drawn_id(seed: str, n: int) -> str:
    """The ``n``-th id a run with ``seed`` draws (``uuid5``: the same wherever computed)."""
    return str(uuid.uuid5(_NAMESPACE, f"{seed}/{n}"))


def run_invocation_id(seed: str) -> str:
    """The id of the invocation a baseline run starts (not one it continues or was given)."""
    return f"e-{drawn_id(seed, 0)}"


def restored(inp: StepInput, run_id: str, scheduled: float) -> StepInput:
    """The activity's side: ``inp`` with every id whole and every value left out put back.

    Args:
        inp: The input as the activity received it.
        run_id: The run id of the workflow that scheduled the activity.
        scheduled: When Temporal scheduled the activity (POSIX seconds; the same on retries).
    """
    return _Restorer(run_id, inp.ref).restore(inp, scheduled)


def short_result(
    result: ToolCallResult, sent: ToolCallInput, whole: ToolCallInput
) -> ToolCallResult:
    """The activity's side: ``result`` with its staged id short, when ``sent`` was short.

    Only a workflow that shortened what it sent (its own invocation id left out) reads a
    short result back; one of an earlier release gets the whole id.
    """
    if (
        sent.ref.invocation_id
        or not isinstance(result, StagedResult)
        or result.staged != stage_id(whole.ref.invocation_id, whole.call.id)
    ):
        return result
    return result.model_copy(update={"staged": STAGED_MARK + whole.call.id})


class _Restorer:
    def __init__(self, run_id: str, ref: InvocationRef) -> None:
        self._run_id = run_id
        self.invocation_id = ref.invocation_id or run_invocation_id(run_id)

    def restore(self, inp: StepInput, scheduled: float) -> StepInput:
        update: dict[str, object] = {
            "ref": inp.ref.model_copy(update={"invocation_id": self.invocation_id})
        }
        if isinstance(inp, ModelStepInput):
            at = inp.timestamp or scheduled
            update["model_event_id"] = self._id(inp.model_event_id)
            update["pending_events"] = [self._event(e, at) for e in inp.pending_events]
            update["timestamp"] = at
        elif isinstance(inp, AppendEventsInput):
            update["events"] = [self._event(e, None) for e in inp.events]
        elif isinstance(inp, CompactionInput):
            update["event_id"] = self._id(inp.event_id)
            update["timestamp"] = inp.timestamp or scheduled
        return inp.model_copy(update=update)

    def _id(self, value: str) -> str:
        if value.startswith("~") and value[1:].isdigit():
            return drawn_id(self._run_id, int(value[1:]))
        return value

    def _event(self, event: PendingEvent, timestamp: float | None) -> PendingEvent:
        at = timestamp if not event.timestamp and timestamp is not None else event.timestamp
        if isinstance(event, MergedResponses):
            responses = [
                self._staged(r) if isinstance(r, StagedResponse) else self._event(r, timestamp)
                for r in event.responses
            ]
            return event.model_copy(
                update={"id": self._id(event.id), "timestamp": at, "responses": responses}
            )
        return event.model_copy(
            update={
                "id": self._id(event.id),
                "invocation_id": event.invocation_id or self.invocation_id,
                "timestamp": at,
            }
        )

    def _staged(self, response: StagedResponse) -> StagedResponse:
        if not response.staged.startswith(STAGED_MARK):
            return response
        call_id = response.staged.removeprefix(STAGED_MARK)
        return response.model_copy(update={"staged": stage_id(self.invocation_id, call_id)})
