"""Ids a run draws from its run id, and the short form its steps' inputs carry them in.

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

The workflow shortens an input just before it schedules the step (:class:`RunIds`); the
activity restores it before the step runs (:func:`restored`), and shortens what it returns
only to a workflow that shortened what it sent. The flow, the steps and the session store
only ever see whole ids.
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
    ToolCallInput,
    ToolCallResult,
    stage_id,
)
from adk_temporal.run_config import RunConfig

__all__ = [
    "RunIds",
    "StepInput",
    "drawn_id",
    "restored",
    "run_invocation_id",
    "short_result",
    "whole_result",
]

_NAMESPACE = uuid.UUID("5d0b8e5c-8a62-4a8e-9a41-6f1f2b7c3e10")
_STAGED = "~/"
_DEFAULTS = RunConfig()

StepInput = TypeVar("StepInput", ModelStepInput, ToolCallInput, AppendEventsInput, CompactionInput)
"""A step's input: what :class:`RunIds` shortens and :func:`restored` restores."""


def drawn_id(seed: str, n: int) -> str:
    """The ``n``-th id a run with ``seed`` draws (``uuid5``: the same wherever computed)."""
    return str(uuid.uuid5(_NAMESPACE, f"{seed}/{n}"))


def run_invocation_id(seed: str) -> str:
    """The id of the invocation a baseline run starts (not one it continues or was given)."""
    return f"e-{drawn_id(seed, 0)}"


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
        if isinstance(inp, ModelStepInput | ToolCallInput) and inp.run_config == _DEFAULTS:
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
            update={"staged": _STAGED + response.staged.removeprefix(prefix)}
        )


def whole_result(result: ToolCallResult, invocation_id: str) -> ToolCallResult:
    """The workflow's side: a tool step's result with its staged id whole again."""
    if result.staged is None or not result.staged.startswith(_STAGED):
        return result
    call_id = result.staged.removeprefix(_STAGED)
    return result.model_copy(update={"staged": stage_id(invocation_id, call_id)})


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
    if sent.ref.invocation_id or result.staged != stage_id(whole.ref.invocation_id, whole.call.id):
        return result
    return result.model_copy(update={"staged": _STAGED + whole.call.id})


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
        if not response.staged.startswith(_STAGED):
            return response
        call_id = response.staged.removeprefix(_STAGED)
        return response.model_copy(update={"staged": stage_id(self.invocation_id, call_id)})
