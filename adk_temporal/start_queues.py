"""Which task queue a run starts on: its app's own queue when a worker of the app polls it.

A named app's workers poll the client's task queue and the app's own queue beside it
(:func:`~adk_temporal.ids.app_task_queue`), where only they take tasks. A run started on
the own queue has its workflow tasks and its steps on one queue, so Temporal hands each
step straight back to the worker that scheduled it (eager dispatch, as a bare workflow's
activity gets); a run started on the shared queue moves its steps to the own queue after
its first model step, and each then waits to be matched. The client cannot know whether an
app is named, so it asks Temporal who polls the own queue, at most once per
:data:`SEEN_SECONDS` per app (:data:`UNSEEN_SECONDS` while nobody does).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from time import monotonic

from temporalio.client import Client
from temporalio.service import RPCError

from .ids import app_task_queue
from .queues.pollers import STARTS_HERE_MARK, polled_since, workflow_pollers

__all__ = [
    "POLLED_WITHIN",
    "SEEN_SECONDS",
    "STARTS_HERE_MARK",
    "UNSEEN_SECONDS",
    "StartQueues",
    "workflow_pollers",
]

SEEN_SECONDS = 30.0
"""How long the client trusts that an app's own queue is polled."""

UNSEEN_SECONDS = 5.0
"""How long the client trusts that it is not: shorter, so that runs started while the app's
workers come up move to its queue soon after they poll."""

POLLED_WITHIN = timedelta(minutes=2)
"""A poller counts as a running worker when it polled this recently: a live worker's long
polls return within about a minute, while Temporal lists a gone one for a few minutes."""


class StartQueues:
    """The start queue of each app, asked of Temporal at most once per :data:`SEEN_SECONDS`.

    Args:
        client: The connected client.
        task_queue: The client's queue, where runs start when their app's own queue has no
            worker polling it.
        own_queues: ``False`` starts every run on ``task_queue``.
    """

    def __init__(self, client: Client, task_queue: str, *, own_queues: bool = True) -> None:
        self._client = client
        self._task_queue = task_queue
        self._own_queues = own_queues
        self._seen: dict[str, tuple[str, float]] = {}
        self._looking: dict[str, asyncio.Future[str]] = {}

    async def of(self, app_name: str) -> str:
        """The queue a run of ``app_name`` starts on now."""
        if not self._own_queues:
            return self._task_queue
        seen = self._seen.get(app_name)
        if seen is not None and seen[1] > monotonic():
            return seen[0]
        # Many starts at once ask Temporal once.
        looking = self._looking.get(app_name)
        if looking is None:
            looking = asyncio.ensure_future(self._look(app_name))
            self._looking[app_name] = looking
            looking.add_done_callback(lambda _: self._looking.pop(app_name, None))
        return await asyncio.shield(looking)

    async def _look(self, app_name: str) -> str:
        own = app_task_queue(self._task_queue, app_name)
        queue = own if await self._polled(own) else self._task_queue
        trusted = SEEN_SECONDS if queue == own else UNSEEN_SECONDS
        self._seen[app_name] = (queue, monotonic() + trusted)
        return queue

    async def _polled(self, task_queue: str) -> bool:
        """Whether a worker that takes runs started there (:data:`STARTS_HERE_MARK`) polled
        ``task_queue`` for workflow tasks within :data:`POLLED_WITHIN`; ``False`` when
        Temporal cannot say (the shared queue is then the safe start: its first step finds
        the app's worker wherever it polls)."""
        try:
            pollers = await workflow_pollers(self._client, task_queue)
        except RPCError:
            return False
        since = datetime.now(UTC) - POLLED_WITHIN
        return any(STARTS_HERE_MARK in identity for identity in polled_since(pollers, since))
