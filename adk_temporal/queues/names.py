"""What a task queue's name says: whose steps it carries, and what to start to serve it.

Beside the queue a deployment's workers and clients share (``q``) there are: each named
app's own queue ``q/apps/<app>`` (``ids.app_task_queue``), polled only by that app's
workers; the queue of unnamed apps' workers ``q/any-app`` (``ids.any_app_task_queue``),
which serve every app; and each model limit's queue ``q/models/<group>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import WorkerQueueError
from ..ids import ANY_APP, queue_owner

__all__ = ["QueueRole", "check_worker_queue", "queue_role", "start_hint", "worker_queue_problem"]

_MODELS = "/models/"


@dataclass(frozen=True)
class QueueRole:
    """Whose steps a task queue carries, read from its name."""

    kind: Literal["shared", "app", "any_app", "model"]
    base: str
    """The queue it is beside (itself for a shared queue)."""
    name: str | None = None
    """The app of an app's own queue, or the limit of a model limit's queue."""


def queue_role(task_queue: str) -> QueueRole:
    """What ``task_queue``'s name says it carries."""
    owner = queue_owner(task_queue)
    if owner is not None:
        return QueueRole("app", task_queue.removesuffix(f"/apps/{owner}"), owner)
    suffix = f"/{ANY_APP}"
    if task_queue.endswith(suffix) and len(task_queue) > len(suffix):
        return QueueRole("any_app", task_queue.removesuffix(suffix))
    base, mark, group = task_queue.rpartition(_MODELS)
    if mark and base and group and "/" not in group:
        return QueueRole("model", base, group)
    return QueueRole("shared", task_queue)


def start_hint(task_queue: str, app_name: str | None = None) -> str:
    """What an operator starts so that a worker polls ``task_queue``, as one sentence.

    Args:
        task_queue: The queue nobody polls.
        app_name: The app of the run whose step waits there, when known.
    """
    role = queue_role(task_queue)
    run = f"adk-temporal worker --app package.module:app --task-queue {role.base}"
    if role.kind == "app":
        return f"start a worker of app {role.name!r} (its App(name={role.name!r})): `{run}`"
    if role.kind == "any_app":
        serving = f"app {app_name!r}'s agents" if app_name else "the run's agents"
        return f"start a worker of an unnamed app serving {serving}: `{run}`"
    if role.kind == "model":
        return (
            f"start a worker with the model limit {role.name!r} (the app's "
            f"model_limits or --model-limit ...@{role.name}): `{run}`"
        )
    serving = f" serving app {app_name!r}" if app_name else ""
    return f"start a worker{serving}: `{run}`"


def worker_queue_problem(task_queue: str, app_name: str | None) -> str | None:
    """Why a worker of ``app_name`` (``None``: an unnamed app) may not poll ``task_queue``,
    or ``None`` when it may."""
    role = queue_role(task_queue)
    served = f"app {app_name!r}" if app_name else "an unnamed app"
    if role.kind == "app" and role.name != app_name:
        return (
            f"task queue {task_queue!r} is the own queue of app {role.name!r}, polled only by "
            f"that app's workers; a worker of {served} there would take its steps. Start it "
            f"with --task-queue {role.base}: a named app's worker polls its own queue beside "
            "that by itself"
        )
    if role.kind == "any_app" and app_name:
        return (
            f"task queue {task_queue!r} is the queue of unnamed apps' workers, which serve "
            f"every app; a worker of app {app_name!r} there would take other apps' steps. "
            f"Start it with --task-queue {role.base}"
        )
    return None


def check_worker_queue(task_queue: str, app_name: str | None) -> None:
    """Refuse a task queue a worker of ``app_name`` may not poll (:func:`worker_queue_problem`).

    Raises:
        WorkerQueueError: ``task_queue`` is another app's own queue, or the unnamed apps'
            queue for a named app.
    """
    problem = worker_queue_problem(task_queue, app_name)
    if problem is not None:
        raise WorkerQueueError(problem)
