"""``adk_notify``: deliver one notification to every endpoint, retried durably.

An invocation starts one per notification as an abandoned child, and waits only until it
started: a dead endpoint never holds the invocation up, and a delivery outlives the run
that asked for it (a completion notice, a pause answered through another channel).
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from adk_temporal.activities.notify import (
        NOTIFICATION_REJECTED,
        NOTIFICATION_UNDELIVERED,
        NotifyActivity,
    )
    from adk_temporal.flow.messages import NotifyPlan
    from adk_temporal.notifications import Notice, NoticeDelivery

__all__ = ["NOTIFY_ID_PREFIX", "NotifyInput", "NotifyWorkflow", "notify_workflow_id"]

NOTIFY_ID_PREFIX = "adk-notify-"
"""How every notification workflow's id starts (runs recorded before: ``notify/``)."""


def notify_workflow_id(parent_id: str, invocation_id: str, event: str, suffix: str = "") -> str:
    """The id of the ``adk_notify`` run of one notice: ``adk-notify-<20 hex digits>``.

    Derived from the parent's workflow id, the invocation, the event and the first request
    (``suffix``), so one notice has one delivery; short, unlike the parent's id it names,
    so the Temporal UI's list stays readable (the run's summary names the parent).
    """
    key = f"{parent_id}\0{invocation_id}\0{event}\0{suffix}".encode()
    return NOTIFY_ID_PREFIX + hashlib.sha256(key).hexdigest()[:20]


# A bound on one attempt; the worker's own HTTP timeout (Notifications.timeout) is shorter.
_ATTEMPT_TIMEOUT = timedelta(minutes=2)


class NotifyInput(BaseModel):
    """Start input of ``adk_notify``: the notice and how to deliver it."""

    notice: Notice
    plan: NotifyPlan


# Outside the sandbox, as InvocationWorkflow: only this package's code runs here.
@workflow.defn(name="adk_notify", sandboxed=False)
class NotifyWorkflow:
    """Posts one notice to each endpoint concurrently, each with its own retries."""

    @workflow.run
    async def run(self, inp: NotifyInput) -> None:
        """Deliver to every endpoint; fail (after trying all) if one never took it."""
        plan = inp.plan
        retry = RetryPolicy(
            initial_interval=timedelta(seconds=plan.initial_interval_seconds),
            backoff_coefficient=2.0,
            maximum_interval=timedelta(seconds=plan.maximum_interval_seconds),
            non_retryable_error_types=[NOTIFICATION_REJECTED],
        )
        deliveries = [
            workflow.execute_activity_method(
                NotifyActivity.run,
                NoticeDelivery(notice=inp.notice, endpoint=endpoint),
                start_to_close_timeout=_ATTEMPT_TIMEOUT,
                schedule_to_close_timeout=timedelta(seconds=plan.give_up_after_seconds),
                retry_policy=retry,
                summary=f"invocation.{inp.notice.event} → endpoint {endpoint}",
            )
            for endpoint in plan.endpoints
        ]
        outcomes = await asyncio.gather(*deliveries, return_exceptions=True)
        failed = [e for e, o in zip(plan.endpoints, outcomes, strict=True) if o is not None]
        if failed:
            raise ApplicationError(
                f"notification {inp.notice.id} was not delivered to endpoint(s) {failed}",
                type=NOTIFICATION_UNDELIVERED,
                non_retryable=True,
            )
