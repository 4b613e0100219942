"""Who polls a task queue, as Temporal lists it, and which apps those workers serve.

A worker's identity carries the apps it serves (:data:`APPS_MARK`) and, on an app's own
queue, whether it takes runs started there (:data:`STARTS_HERE_MARK`); Temporal shows the
identity of each poller, so clients and workers read from it who serves what.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

__all__ = [
    "APPS_MARK",
    "LIVE_WITHIN",
    "STARTS_HERE_MARK",
    "identity_serves",
    "live_identities",
    "polled_since",
    "queue_pollers",
    "served_apps",
    "workflow_pollers",
]

APPS_MARK = " adk-apps="
"""Marks the apps a worker serves in its identity, which Temporal shows for each poller."""

STARTS_HERE_MARK = " adk-starts-here"
"""In the identity of an app's own-queue worker that takes runs started on that queue. Only
such pollers count: earlier workers polled the queue too, but a run started there would
have had its steps sent on to a queue beside it that nobody polls."""

LIVE_WITHIN = timedelta(seconds=75)
"""A poller counts as a live worker when it polled this recently. An idle worker's long
polls return about every 60 s (measured on the dev server: the last access time of an idle
worker's pollers grew to 62 s before falling back); a stopped worker stops polling, though
Temporal goes on listing it for a few minutes."""

_KINDS = (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)


async def queue_pollers(
    client: Client, task_queue: str, kind: TaskQueueType.ValueType
) -> list[PollerInfo]:
    """The pollers of ``kind`` Temporal lists for ``task_queue`` (the last few minutes')."""
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=kind,
        )
    )
    return list(response.pollers)


async def workflow_pollers(client: Client, task_queue: str) -> list[PollerInfo]:
    """The workflow-task pollers Temporal lists for ``task_queue`` (the last few minutes')."""
    return await queue_pollers(client, task_queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)


def polled_since(pollers: Iterable[PollerInfo], since: datetime) -> list[str]:
    """The identities of ``pollers`` that polled at ``since`` or later."""
    return [
        p.identity
        for p in pollers
        if p.HasField("last_access_time") and p.last_access_time.ToDatetime(UTC) >= since
    ]


async def live_identities(
    client: Client, task_queue: str, *, within: timedelta = LIVE_WITHIN
) -> list[str]:
    """The identities of the workers that polled ``task_queue`` for workflow or activity
    tasks within ``within``: a worker whose activity slots are all taken stops polling
    activities, but goes on polling workflow tasks on the same queue.

    Raises:
        RPCError: Temporal could not describe the queue.
    """
    since = datetime.now(UTC) - within
    found = await asyncio.gather(*(queue_pollers(client, task_queue, k) for k in _KINDS))
    return list(dict.fromkeys(i for pollers in found for i in polled_since(pollers, since)))


def served_apps(identities: list[str]) -> set[str] | None:
    """The apps the pollers with ``identities`` serve; ``None`` if one serves any app."""
    apps: set[str] = set()
    for identity in identities:
        _, mark, names = identity.partition(APPS_MARK)
        if not mark:
            return None
        apps.update(names.split(","))
    return apps


def identity_serves(identity: str, app_name: str) -> bool:
    """Whether the worker with ``identity`` may serve ``app_name``: it names the app, or
    names none (an unnamed app's worker, or one whose identity was set by hand)."""
    apps = served_apps([identity])
    return apps is None or app_name in apps
