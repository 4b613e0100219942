"""Steps that wait on a task queue no worker polls, as ``show`` and ``pending`` print them."""

from __future__ import annotations

import asyncio

from rich.markup import escape
from temporalio.client import Client, WorkflowExecutionDescription
from temporalio.service import RPCError

from ..queues import QueuePolls, QueueWait, unpolled_waits
from ..visibility import invocations_query, list_page, task_queue_clause
from .common import console

__all__ = ["RUNS_CHECKED", "print_waits", "unpolled_runs"]

RUNS_CHECKED = 200
"""How many running invocations ``pending`` describes, newest first: one call each."""

_AT_ONCE = 8


async def unpolled_runs(client: Client, task_queue: str) -> list[tuple[str, list[QueueWait]]]:
    """The running invocations on ``task_queue`` (or an app's queue beside it) with a step
    waiting on a queue no worker polls, newest first; the newest :data:`RUNS_CHECKED`."""
    query = (
        f"{invocations_query()} AND ExecutionStatus = 'Running' AND {task_queue_clause(task_queue)}"
    )
    page = await list_page(client, query, page_size=RUNS_CHECKED)
    gate = asyncio.Semaphore(_AT_ONCE)
    polls = QueuePolls(client)

    async def waits_of(workflow_id: str) -> list[QueueWait]:
        async with gate:
            try:
                description: WorkflowExecutionDescription = await client.get_workflow_handle(
                    workflow_id
                ).describe()
            except RPCError:
                return []  # closed or gone since it was listed
            return await unpolled_waits(client, description, polls)

    found = await asyncio.gather(*(waits_of(wf.id) for wf in page.executions))
    return [(wf.id, waits) for wf, waits in zip(page.executions, found, strict=True) if waits]


def print_waits(waits: list[QueueWait], head: str) -> None:
    """One line per wait, each after ``head``."""
    for wait in waits:
        console.print(escape(f"{head}{wait.line()}"))
