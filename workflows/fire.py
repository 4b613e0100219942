"""``adk_schedule_fire``: one firing of a schedule — an ordinary invocation in its session.

A schedule (:mod:`adk_temporal.schedules`) starts this small workflow at each time it fires;
Temporal appends the time to its id. It decides the session — a new one named after the
schedule and the scheduled time, or the schedule's one long session — and starts the
invocation as an abandoned child, then waits for it, so the schedule's overlap policy
governs the invocations themselves (``skip`` never runs two at once). Everything here is
decided from the firing's own start, so a retried or replayed firing starts the same
invocation once.

When the long session is busy with another invocation (someone chatting in it, or a run of
this schedule that outlived the overlap policy), the schedule's double-texting policy
decides: ``reject`` skips the firing; the others send the message to the running run
(signal ``adk_message``), which queues it, or interrupts or rolls back its invocation for it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError, ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ChildWorkflowCancellationType, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from google.genai import types

    from adk_temporal.budgets import Budgets
    from adk_temporal.double_texting import DoubleTexting, QueuedMessage
    from adk_temporal.flow.messages import AdkStatus, InvocationResult
    from adk_temporal.ids import SessionKey, workflow_id_for
    from adk_temporal.run_config import RunConfig
    from adk_temporal.workflows.messages import (
        MESSAGE_SIGNAL,
        SCHEDULE_MEMO,
        InvocationInput,
        start_attributes,
    )

__all__ = [
    "FIRE_ID_PREFIX",
    "FIRE_WORKFLOW",
    "FireInput",
    "FireResult",
    "FireWorkflow",
    "SessionMode",
    "firing_session_id",
]

FIRE_WORKFLOW = "adk_schedule_fire"
"""The workflow type a schedule starts."""

FIRE_ID_PREFIX = "adk-schedule/"
"""How a firing's workflow id starts: ``adk-schedule/<schedule id>-<scheduled time>``."""

SessionMode = Literal["per_firing", "shared"]
"""``per_firing``: each firing in a new session; ``shared``: all in the schedule's session."""

_SCHEDULED_TIME = SearchAttributeKey.for_datetime("TemporalScheduledStartTime")
"""Set by Temporal on a run a schedule started: the time it was due (a trigger's: now)."""

_ATTEMPTS = 5
"""How often a firing tries to start or reach the busy session's run: each failed try means
the run it found ended meanwhile, so the next start succeeds unless another began."""


class FireInput(BaseModel):
    """Start input of ``adk_schedule_fire``: what every firing of the schedule runs."""

    schedule_id: str
    app_name: str
    user_id: str
    agent_name: str
    message: types.Content | None = None
    sessions: SessionMode = "per_firing"
    session_id: str | None = None
    """The shared session (``sessions="shared"``)."""
    double_texting: DoubleTexting | None = None
    """When the shared session is busy: ``None`` is the app's policy."""
    config: RunConfig = Field(default_factory=RunConfig)
    budgets: Budgets = Field(default_factory=Budgets)
    baseline: int = 0
    """The baseline of the release that created the schedule."""
    answer_address: str | None = None


class FireResult(BaseModel):
    """How a firing went."""

    session_id: str
    invocation_id: str
    outcome: Literal["ran", "sent", "skipped"]
    """``ran``: it started the invocation and waited for it; ``sent``: the session was busy
    and the message went to its run; ``skipped``: busy, and the policy is ``reject``."""
    status: AdkStatus | None = None
    """How the invocation ended (``ran`` only)."""
    error: str | None = None

    @classmethod
    def of(
        cls,
        key: SessionKey,
        message: QueuedMessage,
        outcome: Literal["ran", "sent", "skipped"],
        result: InvocationResult | None = None,
    ) -> FireResult:
        """The firing of ``message`` in ``key``'s session, and how it ended if it ran."""
        return cls(
            session_id=key.session_id,
            invocation_id=message.invocation_id,
            outcome=outcome,
            status=result.status if result is not None else None,
            error=result.error if result is not None else None,
        )


def firing_session_id(schedule_id: str, at: datetime) -> str:
    """The session of the firing due at ``at``: ``<schedule id>-<UTC time, to the second>``."""
    return f"{schedule_id}-{at:%Y%m%dT%H%M%SZ}"


# Outside the sandbox, as InvocationWorkflow: only this package's code runs here.
@workflow.defn(name=FIRE_WORKFLOW, sandboxed=False)
class FireWorkflow:
    """Starts one scheduled invocation, or hands its message to the busy session's run."""

    @workflow.run
    async def run(self, inp: FireInput) -> FireResult:
        """Start the invocation and wait for it (or send the message, or skip).

        Raises:
            ApplicationError: The invocation failed (so the schedule's ``pause_on_failure``
                can pause it), or the session stayed busy through every attempt.
        """
        info = workflow.info()
        due = info.typed_search_attributes.get(_SCHEDULED_TIME) or info.start_time
        session_id = (
            inp.session_id
            if inp.sessions == "shared" and inp.session_id
            else firing_session_id(inp.schedule_id, due)
        )
        key = SessionKey(inp.app_name, inp.user_id, session_id)
        message = QueuedMessage(
            invocation_id=f"e-{workflow.uuid4()}",
            agent_name=inp.agent_name,
            message=inp.message,
            policy=inp.double_texting,
            config=inp.config,
            baseline=inp.baseline,
            schedule_id=inp.schedule_id,
            channel="schedule",
        )
        for _ in range(_ATTEMPTS):
            try:
                return await self._start(inp, key, message)
            except WorkflowAlreadyStartedError:
                if inp.double_texting == "reject":
                    return FireResult.of(key, message, "skipped")
            if await self._send(key, message):
                return FireResult.of(key, message, "sent")
        raise ApplicationError(
            f"session {session_id!r} changed hands {_ATTEMPTS} times while the firing tried "
            "to start or reach its run",
            type="SessionBusyError",
            non_retryable=True,
        )

    async def _start(self, inp: FireInput, key: SessionKey, message: QueuedMessage) -> FireResult:
        child = await workflow.start_child_workflow(
            "InvocationWorkflow",
            InvocationInput.of_message(
                message, key, budgets=inp.budgets, answer_address=inp.answer_address
            ),
            id=workflow_id_for(key),
            result_type=InvocationResult,
            parent_close_policy=ParentClosePolicy.ABANDON,
            # A cancelled firing (overlap cancel_other) cancels its invocation.
            cancellation_type=ChildWorkflowCancellationType.TRY_CANCEL,
            search_attributes=start_attributes(key, inp.agent_name, inp.schedule_id),
            memo={SCHEDULE_MEMO: inp.schedule_id},
            static_summary=f"{inp.agent_name} · schedule {inp.schedule_id}",
        )
        try:
            result = await child
        except ChildWorkflowError as err:
            raise ApplicationError(
                f"the scheduled invocation failed: {err.cause or err}",
                type="ScheduledInvocationFailed",
                non_retryable=True,
            ) from None
        if result.status == "failed":
            raise ApplicationError(
                f"the scheduled invocation failed: {result.error}",
                type="ScheduledInvocationFailed",
                non_retryable=True,
            )
        return FireResult.of(key, message, "ran", result)

    async def _send(self, key: SessionKey, message: QueuedMessage) -> bool:
        """Send the message to the busy session's run; ``False`` when it ended meanwhile."""
        try:
            await workflow.get_external_workflow_handle(workflow_id_for(key)).signal(
                MESSAGE_SIGNAL, message
            )
        except ApplicationError:
            return False  # the run closed between the start and the signal
        return True
