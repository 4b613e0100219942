"""``adk_retention``: one retention sweep of an app, as its schedule starts it.

A small workflow over one activity (``adk_retention_sweep``), run on the app's own task
queue so only the app's workers — which hold its retention, stores and data keys — take it.
Its result lists every session past the limit and what became of it.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from adk_temporal.activities.retention import RETENTION_REFUSED, RetentionActivity
    from adk_temporal.keys import RetentionReport, SweepRequest

__all__ = ["RETENTION_SCHEDULE_PREFIX", "RetentionWorkflow", "retention_schedule_id"]

RETENTION_SCHEDULE_PREFIX = "adk-retention-"
"""How the id of every app's retention schedule (and its runs) starts."""


def retention_schedule_id(app_name: str) -> str:
    """The id of ``app_name``'s retention schedule: ``adk-retention-<app>``."""
    return RETENTION_SCHEDULE_PREFIX + app_name


# Outside the sandbox, as InvocationWorkflow: only this package's code runs here.
@workflow.defn(name="adk_retention", sandboxed=False)
class RetentionWorkflow:
    """Runs one sweep; a sweep that fails is retried, a refused one fails the run."""

    @workflow.run
    async def run(self, request: SweepRequest) -> RetentionReport:
        """Sweep ``request.app_name`` and return what became of each idle session."""
        return await workflow.execute_activity_method(
            RetentionActivity.run,
            request,
            start_to_close_timeout=timedelta(hours=1),
            heartbeat_timeout=timedelta(minutes=2),
            retry_policy=RetryPolicy(
                maximum_attempts=5, non_retryable_error_types=[RETENTION_REFUSED]
            ),
            summary=f"retention sweep of {request.app_name}"
            + (" (dry run)" if request.dry_run else ""),
        )
