"""Where a step that reached a worker of another app goes, as this worker sees who polls what.

Workers of several apps share a task queue, so a step of app ``foo`` may reach a worker of
app ``bar``. It touches nothing and is handed back with where to go: the app's own queue
when a worker of the app polls it; else the queue of unnamed apps' workers, which serve
every app; else the app's own queue all the same, marked unpolled, where it waits for a
worker of the app and the run says so. (Back where it came from is no choice: a worker
holding the run's workflow in its cache takes that run's next workflow tasks, and with
them, eagerly, each step it schedules on the run's own queue.)

A run served by an unnamed app's worker on a queue shared with named apps moves its steps
to the unnamed apps' queue at once, before any reaches a worker of another app.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from adk_temporal.flow.messages import AgentSpec, RouteStep
from adk_temporal.ids import any_app_task_queue, app_task_queue
from adk_temporal.queues import QueuePolls, identity_serves, queue_role, served_apps, start_hint

__all__ = ["AppRouter"]

_TRUSTED_SECONDS = 5.0
"""How long a worker trusts what Temporal said of a queue's pollers: routing is rare (a
step that reached the wrong app), and a worker that just started should be found soon."""


class AppRouter:
    """Routes the steps of other apps that reached this worker; one per activity kind."""

    def __init__(self) -> None:
        self._polls: QueuePolls | None = None

    async def _live(self, client: Client, task_queue: str) -> list[str] | None:
        """The queue's live pollers' identities; ``None`` when Temporal cannot say."""
        if self._polls is None:
            self._polls = QueuePolls(client, trusted_seconds=_TRUSTED_SECONDS)
        return await self._polls.live(task_queue)

    async def route(self, app_name: str) -> RouteStep:
        """Where the running activity's step, of ``app_name``, goes (see the module)."""
        client, here = activity.client(), activity.info().task_queue
        base = queue_role(here).base
        own_queue = app_task_queue(base, app_name)
        own = await self._live(client, own_queue)
        if own and any(identity_serves(i, app_name) for i in own):
            return RouteStep(kind="route", group=None, app=app_name, to="app")
        if await self._live(client, any_app_task_queue(base)):
            return RouteStep(kind="route", group=None, app=app_name, to="any_app")
        # Known unpolled: Temporal listed the queue's pollers, and none may serve the app.
        unpolled = own is not None and not any(identity_serves(i, app_name) for i in own)
        if unpolled:
            # The worker's log is where an operator looks first; `show` and the run's
            # details say it too.
            activity.logger.warning(
                "a step of app %r goes to task queue %r, which no worker of the app polls: %s",
                app_name,
                own_queue,
                start_hint(own_queue, app_name),
            )
        return RouteStep(kind="route", group=None, app=app_name, to="app", unpolled=unpolled)

    async def refusal(self, app_name: str) -> ApplicationError:
        """The failure that hands a tool call, append or compaction of ``app_name`` back:
        non-retryable, since retrying here could reach this worker again; the run reads
        where to send it from the failure's details (a :class:`RouteStep`)."""
        route = await self.route(app_name)
        return ApplicationError(
            f"a worker of another app took a step of app {app_name!r}: handed back",
            route.model_dump(mode="json"),
            type="UnknownAppError",
            non_retryable=True,
        )

    async def unnamed_tree(self, tree: AgentSpec) -> AgentSpec:
        """``tree`` as an unnamed app's worker describes it: marked to move the run's steps
        to the unnamed apps' queue when workers of named apps share this one and a worker
        polls that queue."""
        client, here = activity.client(), activity.info().task_queue
        role = queue_role(here)
        if role.kind != "shared" or tree.any_app_queue:
            return tree
        named = any(served_apps([i]) for i in await self._live(client, here) or [])
        if named and await self._live(client, any_app_task_queue(role.base)):
            return tree.model_copy(update={"any_app_queue": True})
        return tree
