"""Steps waiting on a task queue that no worker polls, found from what Temporal serves.

A run's step is an activity on some task queue; if no worker polls that queue, the step
waits for ever and the run stays ``running`` with nothing to say why. Temporal says both
halves without any worker: ``DescribeWorkflowExecution`` lists the run's pending
activities with their task queue and whether one started, and ``DescribeTaskQueue`` lists
who polled a queue and when. ``show``, ``pending``, the console and the API read them here.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from math import inf
from time import monotonic

from pydantic import BaseModel
from temporalio.api.enums.v1 import PendingActivityState, PendingWorkflowTaskState
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError

from ..ids import session_key_of
from .names import start_hint
from .pollers import LIVE_WITHIN, live_identities

__all__ = ["QueuePolls", "QueueWait", "unpolled_waits"]

_STEP_NAMES = {
    "adk_model_step": "model step",
    "adk_tool_call": "tool call",
    "adk_append_events": "append",
    "adk_compact": "compaction",
    "adk_notify": "notification",
}

_SCHEDULED = PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
_TASK_SCHEDULED = PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED


class QueueWait(BaseModel):
    """A step of a run (or its next workflow task) waiting on a task queue no live worker
    polls: no worker polled it within :data:`~.pollers.LIVE_WITHIN`."""

    task_queue: str
    step: str
    """What waits: ``model step``, ``tool call``, ``append``, ``compaction``,
    ``notification`` or ``workflow task``."""
    since: datetime | None = None
    """When it was scheduled."""
    start: str
    """What an operator starts so that a worker takes it (:func:`~.names.start_hint`)."""

    def line(self) -> str:
        """The wait in one line, as ``show`` prints it."""
        since = f" since {self.since:%H:%M:%S} UTC" if self.since is not None else ""
        return (
            f"{self.step} waits on task queue {self.task_queue!r}{since}, which no worker "
            f"polls: {self.start}"
        )


def _waiting(description: WorkflowExecutionDescription) -> list[tuple[str, str, datetime]]:
    """The run's steps not started yet, and its workflow task if scheduled: (queue, what,
    scheduled at)."""
    raw = description.raw_description
    found: list[tuple[str, str, datetime]] = []
    for activity in raw.pending_activities:
        if activity.state != _SCHEDULED:
            continue
        queue = activity.activity_options.task_queue.name or description.task_queue
        step = _STEP_NAMES.get(activity.activity_type.name, activity.activity_type.name)
        found.append((queue, step, activity.scheduled_time.ToDatetime(UTC)))
    task = raw.pending_workflow_task
    if raw.HasField("pending_workflow_task") and task.state == _TASK_SCHEDULED:
        scheduled = task.scheduled_time.ToDatetime(UTC)
        found.append((description.task_queue, "workflow task", scheduled))
    return found


class QueuePolls:
    """The live pollers of each queue asked about, asked of Temporal once per queue (or
    once per ``trusted_seconds``): many runs on the same few queues describe each once.

    Args:
        client: The client to describe queues with.
        trusted_seconds: How long an answer is reused; ``None``: for the object's life.
        live_within: A worker counts as live when it polled this recently
            (:data:`~.pollers.LIVE_WITHIN`: a live worker's long poll may last a minute).
    """

    def __init__(
        self,
        client: Client,
        trusted_seconds: float | None = None,
        *,
        live_within: timedelta = LIVE_WITHIN,
    ) -> None:
        self._client = client
        self._trusted = trusted_seconds
        self._within = live_within
        self._asked: dict[str, tuple[asyncio.Future[list[str] | None], float]] = {}

    async def live(self, task_queue: str) -> list[str] | None:
        """The queue's live pollers' identities; ``None`` when Temporal cannot say."""
        asked = self._asked.get(task_queue)
        if asked is None or asked[1] <= monotonic():
            until = monotonic() + self._trusted if self._trusted is not None else inf
            asked = (asyncio.ensure_future(self._describe(task_queue)), until)
            self._asked[task_queue] = asked
        return await asyncio.shield(asked[0])

    async def _describe(self, task_queue: str) -> list[str] | None:
        try:
            return await live_identities(self._client, task_queue, within=self._within)
        except RPCError:
            return None


async def unpolled_waits(
    client: Client, description: WorkflowExecutionDescription, polls: QueuePolls | None = None
) -> list[QueueWait]:
    """What of the described run waits on a task queue no live worker polls.

    A queue Temporal cannot describe is left out: nothing is claimed that was not seen.

    Args:
        client: The client the run was described with.
        description: The run, from ``describe``.
        polls: What is known of queues' pollers already (several runs at once).
    """
    if description.status != WorkflowExecutionStatus.RUNNING:
        return []
    waiting = _waiting(description)
    queues = list(dict.fromkeys(queue for queue, _, _ in waiting))
    polls = polls or QueuePolls(client)
    polled = await asyncio.gather(*(polls.live(q) for q in queues))
    unpolled = {q for q, found in zip(queues, polled, strict=True) if found == []}
    key = session_key_of(description.id)
    app = key.app_name if key is not None else None
    return [
        QueueWait(task_queue=queue, step=step, since=since, start=start_hint(queue, app))
        for queue, step, since in waiting
        if queue in unpolled
    ]
