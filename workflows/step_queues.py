"""Which task queue a run's steps go to, and handing back the steps another app's worker took.

A run's steps start on the run's own task queue. A named app's worker says, in the tree
the first model step describes, that it polls the app's own queue, and the steps move
there; an unnamed app's worker says so of the unnamed apps' queue when named apps' workers
share the run's queue. A step that reached a worker of another app comes back with where
to go (a :class:`RouteStep`, as a model step's reply or in a refused step's failure): the
steps move there, or, when they are there already, the step is scheduled again after a
pause — a worker of another app was given that queue — never failing the run. When that
queue is the run's own, the step is scheduled once on the queue beside which it is the
app's own queue instead: a worker holding the run in its cache takes the run's workflow
tasks, and with them, eagerly, every step it schedules on the run's queue, so a worker of
another app that holds it would take the step again and again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from adk_temporal.errors import StepFailedError
    from adk_temporal.flow import gates
    from adk_temporal.flow.messages import AgentSpec, RouteStep
    from adk_temporal.ids import any_app_task_queue, app_task_queue, base_task_queue
    from adk_temporal.queues.names import start_hint

__all__ = ["StepQueues", "handed_back_route"]

_FIRST_PAUSE_SECONDS = 1.0
_LONGEST_PAUSE_SECONDS = 300.0
"""Pauses before a handed-back step is scheduled again double from the first to this: a
worker of another app that polls the queue is refused at start now, so one still there is
an old or hand-built worker, and the step waits for the app's own to take it. With a worker
of the app polling too, each try reaches it about half the time, so pauses stay short; with
none, a try every 5 minutes costs about 11 history events: two weeks before Temporal's
limit of 50,000."""


def handed_back_route(err: ActivityError) -> RouteStep | None:
    """Where a step refused by a worker of another app goes, from its failure; ``None`` for
    any other failure (workers before hand-backs failed such steps without saying)."""
    cause = err.cause
    if not isinstance(cause, ApplicationError) or cause.type != "UnknownAppError":
        return None
    details = cause.details
    if not details or not isinstance(details[0], dict):
        return None
    return RouteStep.model_validate(details[0])


class StepQueues:
    """The queue of a run's steps (``None``: the run's own), and what the run says of it.

    Args:
        app_name: The run's app.
        carried: The queue the previous run's steps were on (continue-as-new).
        patched: Whether the run takes a behaviour change (``workflow.patched`` with the
            run's baseline).
        changed: Called when :meth:`note` changes, to show it in the run's details.
    """

    def __init__(
        self,
        app_name: str,
        carried: str | None,
        patched: Callable[[str], bool],
        changed: Callable[[], None],
    ) -> None:
        self.app_name = app_name
        # Runs recorded before app queues never set it, so their steps keep the commands
        # they were recorded with.
        self.current = carried
        self._patched = patched
        self._changed = changed
        self._unpolled: str | None = None
        self._once: str | None = None

    def base(self) -> str:
        """The queue the run's queues are named after: the run's own, or the one its app's
        own queue is beside when the run was started on that."""
        return base_task_queue(workflow.info().task_queue, self.app_name)

    def next_try(self) -> str | None:
        """The queue of a step's next try: the steps' queue, or once where a handed-back
        step goes instead."""
        once, self._once = self._once, None
        return once or self.current

    def local(self) -> bool:
        """Whether a step may run where the run's workflow task runs: the steps are on the
        run's own queue and no handed-back step is to go elsewhere first."""
        return self._once is None and self.current in (None, workflow.info().task_queue)

    def learn(self, tree: AgentSpec | None) -> bool:
        """Move the steps where the tree's serving worker says its app's workers poll;
        ``True`` when they moved."""
        if tree is None or self.current is not None:
            return False
        base = self.base()
        target = (
            app_task_queue(base, self.app_name)
            if tree.own_queue
            else any_app_task_queue(base)
            if tree.any_app_queue
            else None
        )
        if (
            target is None
            or target == workflow.info().task_queue
            or not self._patched(gates.APP_QUEUES)
        ):
            return False
        # A run started on its app's queue keeps its steps there, where Temporal hands each
        # straight back to the worker that scheduled it.
        self.current = target
        return True

    async def route(self, route: RouteStep, pauses: int) -> bool:
        """Send the steps where ``route`` says; ``True`` when the step goes back to the same
        queue after a pause (not a move: the caller does not count it as a try).

        Raises:
            StepFailedError: The step must stay where it is and the run was recorded before
                steps were handed back (or before steps could move at all).
        """
        app = route.app or self.app_name
        base = self.base()
        target = app_task_queue(base, app) if route.to == "app" else any_app_task_queue(base)
        if target in (self.current, workflow.info().task_queue) or not self._patched(
            gates.APP_QUEUES
        ):
            if not self._patched(gates.HAND_BACK):
                raise StepFailedError(
                    "UnknownAppError",
                    f"a worker of another app took a step of app {app!r}; start a worker for "
                    f"{app!r} (with App(name={app!r})) on task queue {base!r}",
                )
            pause = min(_FIRST_PAUSE_SECONDS * 2**pauses, _LONGEST_PAUSE_SECONDS)
            await workflow.sleep(timedelta(seconds=pause), summary=f"hand back a step of app {app}")
            if target == workflow.info().task_queue and base != target:
                self._once = base
            return True
        self.current = target
        self._note(target if route.unpolled else None)
        return False

    def settled(self) -> None:
        """A step came back: whatever waited on an unpolled queue is no longer waiting."""
        self._note(None)

    def _note(self, unpolled: str | None) -> None:
        if unpolled != self._unpolled:
            self._unpolled = unpolled
            self._changed()

    def note(self) -> str:
        """What the run's details say of its steps' queue (markdown; empty when they are on
        the run's own queue)."""
        if self._unpolled is not None:
            return (
                f"**No worker of app `{self.app_name}` polls task queue `{self._unpolled}`**, "
                f"where the run's next step waits: {start_hint(self._unpolled, self.app_name)}"
            )
        if self.current is not None and self.current != workflow.info().task_queue:
            return f"Steps run on task queue `{self.current}`."
        return ""
