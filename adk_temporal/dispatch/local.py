"""``LocalSteps``: which of an app's steps may run on the worker that runs the workflow task."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta

from ..errors import AdkRequestError

__all__ = ["LocalSteps", "LocalStepsError"]


class LocalStepsError(AdkRequestError, ValueError):
    """A ``LocalSteps`` setting is out of range (a bound that is not positive)."""


@dataclass(frozen=True)
class LocalSteps:
    """The app's short steps run as Temporal local activities, where the run's worker can.

    A local step runs on the worker that runs the run's workflow task, inside that task:
    no activity task is dispatched and none completes, so a chain of short steps is one
    workflow task instead of two round trips and a task each. What changes for such a step:

    * A worker that dies loses the steps of the task it was running whose results it had
      not sent yet, even those that ended: the task runs again elsewhere and so do they. A
      model step finds its reply stored and returns it (no second model call); a tool runs
      again, so only tools safe to run twice are named in ``tools``.
    * It has no heartbeat: a stuck step is noticed at its start-to-close timeout, a dead
      worker at the workflow task's timeout (10 s), and it is retried on the worker.
    * Answers, messages and queries sent while it runs wait until the task ends: a short
      step delays them by its length.

    Steps that stream, model steps of a limited model (``App.model_limits``), tools with a
    heartbeat timeout and long-running tools stay activities, and so does every step of a
    run whose steps moved to another task queue than the run's own.

    Args:
        models: Model steps of an agent whose steps on this worker took under ``short``
            (median of the latest; an agent not measured yet counts as short) run locally.
        tools: Names of tools whose calls may run locally while they are short: tools that
            are quick and safe to run again (a lookup, a read, an idempotent write).
        short: The longest median step time that counts as short.

    Raises:
        LocalStepsError: ``short`` is not positive.
    """

    models: bool = True
    tools: Collection[str] = field(default_factory=frozenset)
    short: timedelta = timedelta(seconds=1)

    def __post_init__(self) -> None:
        if self.short <= timedelta(0):
            raise LocalStepsError(f"LocalSteps.short must be above 0, got {self.short}")
        object.__setattr__(self, "tools", frozenset(self.tools))
