"""When a run's history shows every signal sent to it (and what its workflow task is doing).

Temporal keeps a signal that arrives while a workflow task is running out of the history
until that task ends: completed by its worker, or timed out when the worker hung or died
holding it (a process stopped, a poll the server answered as the worker was killed). Until
then an answer sent as a signal is invisible to a reader of the history, who would accept a
second, conflicting one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from temporalio.api.enums.v1 import PendingWorkflowTaskState
from temporalio.client import WorkflowExecutionDescription

__all__ = ["DEFAULT_TASK_TIMEOUT_SECONDS", "TASK_STARTED", "once_signals_show"]

DEFAULT_TASK_TIMEOUT_SECONDS = 10.0
"""Temporal's workflow task timeout when a run's description names none."""

_GRACE_SECONDS = 10.0
"""How long past its timeout a task may take to end. The server's timer fires late under
load, by seconds on a busy two-core machine; a reader that stops waiting first reads a
history without the held answer, and lets a conflicting one by."""

_POLL_SECONDS = 0.2

TASK_STARTED = PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED
"""The state of a pending workflow task a worker took and has not completed."""


async def once_signals_show(
    describe: Callable[[], Awaitable[WorkflowExecutionDescription]],
    described: WorkflowExecutionDescription,
) -> WorkflowExecutionDescription:
    """The run's description once no workflow task that was running at ``described`` runs.

    Returns ``described`` itself when no task was running. Waits at most the task's
    timeout (and a grace), then returns the latest description: by then Temporal has timed
    the task out and written what it held.
    """
    task = described.raw_description.pending_workflow_task
    if task.state != TASK_STARTED:
        return described
    started = task.started_time
    config = described.raw_description.execution_config
    timeout = (
        config.default_workflow_task_timeout.ToTimedelta().total_seconds()
        if config.HasField("default_workflow_task_timeout")
        else 0.0
    ) or DEFAULT_TASK_TIMEOUT_SECONDS
    latest = described
    try:
        async with asyncio.timeout(timeout + _GRACE_SECONDS):
            while True:
                await asyncio.sleep(_POLL_SECONDS)
                latest = await describe()
                now = latest.raw_description.pending_workflow_task
                if now.state != TASK_STARTED or now.started_time != started:
                    return latest
    except TimeoutError:
        return latest
