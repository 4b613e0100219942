"""What a task queue's name says: whose queue it is, who may poll it, what to start."""

from __future__ import annotations

import pytest

from adk_temporal.errors import WorkerQueueError
from adk_temporal.ids import any_app_task_queue, app_task_queue, queue_owner
from adk_temporal.model_limits import model_queue
from adk_temporal.queues import (
    QueueRole,
    check_worker_queue,
    identity_serves,
    queue_role,
    served_apps,
    start_hint,
    worker_queue_problem,
)


@pytest.mark.parametrize(
    ("queue", "role"),
    [
        ("q", QueueRole("shared", "q")),
        (app_task_queue("q", "alpha"), QueueRole("app", "q", "alpha")),
        (app_task_queue("team/x", "alpha"), QueueRole("app", "team/x", "alpha")),
        (any_app_task_queue("q"), QueueRole("any_app", "q")),
        (model_queue("q", "gemini"), QueueRole("model", "q", "gemini")),
        ("q/apps/", QueueRole("shared", "q/apps/")),
        ("/apps/alpha", QueueRole("shared", "/apps/alpha")),
        ("q/apps/..", QueueRole("shared", "q/apps/..")),
        ("any-app", QueueRole("shared", "any-app")),
    ],
)
def test_a_queue_name_says_whose_steps_it_carries(queue: str, role: QueueRole) -> None:
    """Own, unnamed-apps' and model-limit queues are read from their names; anything else
    (an empty or invalid app name, no base) is a shared queue."""
    assert queue_role(queue) == role
    assert queue_owner(queue) == (role.name if role.kind == "app" else None)


@pytest.mark.parametrize(
    ("queue", "app", "refused"),
    [
        ("q/apps/alpha", "evil", True),
        ("q/apps/alpha", None, True),
        ("q/apps/alpha", "alpha", False),
        ("q/any-app", "evil", True),
        ("q/any-app", None, False),
        ("q", "evil", False),
        ("q", None, False),
        ("q/models/gemini", "evil", False),
    ],
)
def test_a_worker_may_not_poll_another_apps_own_queue(
    queue: str, app: str | None, refused: bool
) -> None:
    """Another app's own queue is refused to every worker but the app's own, and the
    unnamed apps' queue to named apps; the refusal is typed and names the queue to use."""
    problem = worker_queue_problem(queue, app)
    assert (problem is not None) == refused
    if refused:
        with pytest.raises(WorkerQueueError, match="--task-queue q"):
            check_worker_queue(queue, app)
    else:
        check_worker_queue(queue, app)


def test_the_hint_says_what_to_start_for_each_kind_of_queue() -> None:
    """An app's queue needs a worker of that app, the unnamed apps' queue an unnamed app's
    worker, a model-limit queue a worker with that limit, each on the base queue."""
    assert "App(name='foo')" in start_hint("q/apps/foo")
    assert "unnamed app serving app 'foo'" in start_hint("q/any-app", "foo")
    assert "model limit 'gemini'" in start_hint("q/models/gemini")
    assert "serving app 'foo'" in start_hint("q", "foo")
    for queue in ("q/apps/foo", "q/any-app", "q/models/gemini", "q"):
        assert "--task-queue q`" in start_hint(queue)


def test_identities_say_which_apps_a_worker_serves() -> None:
    """A marked identity serves the apps it names; an unmarked one any app."""
    named = "1@host adk-starts-here adk-apps=alpha"
    assert identity_serves(named, "alpha") and not identity_serves(named, "beta")
    assert identity_serves("1@host", "beta")
    assert served_apps([named, "2@host adk-apps=beta"]) == {"alpha", "beta"}
    assert served_apps([named, "1@host"]) is None
