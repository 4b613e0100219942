"""Task queues: whose steps a queue carries, who polls it, and steps waiting on one nobody polls.

Workers of several apps may share a task queue ``q``. A named app's workers also poll its
own queue ``q/apps/<app>``; unnamed apps' workers (``--app module:root_agent``, which serve
every app) also poll ``q/any-app``; a step that reached a worker of another app is sent
to the one of those two that a worker of its app polls. A worker refuses to start on
another app's own queue (:func:`check_worker_queue`). Whatever still waits on a queue no
worker polls is found from Temporal's own descriptions (:func:`unpolled_waits`), with what
to start (:func:`start_hint`).
"""

from __future__ import annotations

from .names import QueueRole, check_worker_queue, queue_role, start_hint, worker_queue_problem
from .pollers import (
    APPS_MARK,
    LIVE_WITHIN,
    STARTS_HERE_MARK,
    identity_serves,
    live_identities,
    served_apps,
)
from .waits import QueuePolls, QueueWait, unpolled_waits

__all__ = [
    "APPS_MARK",
    "LIVE_WITHIN",
    "STARTS_HERE_MARK",
    "QueuePolls",
    "QueueRole",
    "QueueWait",
    "check_worker_queue",
    "identity_serves",
    "live_identities",
    "queue_role",
    "served_apps",
    "start_hint",
    "unpolled_waits",
    "worker_queue_problem",
]
