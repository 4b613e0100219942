"""``adk_retention_sweep``: forget the app's sessions idle past its retention."""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from adk_temporal.ids import SessionKey, workflow_id_for
from adk_temporal.keys import (
    CannotForgetError,
    DataKeys,
    RetentionReport,
    SweepRequest,
    data_keys_of,
    sweep,
)
from adk_temporal.steps import StepServices

__all__ = ["RETENTION_REFUSED", "RetentionActivity"]

RETENTION_REFUSED = "RetentionRefused"
"""The failure type of a sweep this worker cannot run (no data keys, another app)."""


def _data_keys(client: Client) -> DataKeys:
    found = data_keys_of(client.data_converter.payload_codec)
    if found is None:
        raise ApplicationError(
            "retention needs per-session data keys: give the worker the key file with a "
            "'data_keys' section",
            type=RETENTION_REFUSED,
            non_retryable=True,
        )
    return found


class RetentionActivity:
    """Sweeps the served app's sessions with the worker's stores and data keys."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_retention_sweep")
    async def run(self, request: SweepRequest) -> RetentionReport:
        """Forget (or list) the sessions idle longer than ``App.retention``.

        Raises:
            ApplicationError: ``RetentionRefused`` (non-retryable): the worker has no data
                keys, serves another app, or its session store cannot list idle sessions.
        """
        services = self._services
        if services.app_name != request.app_name:
            raise ApplicationError(
                f"this worker serves app {services.app_name!r}, not {request.app_name!r}",
                type=RETENTION_REFUSED,
                non_retryable=True,
            )
        client = activity.client()
        keys = _data_keys(client)

        async def run_is_open(key: SessionKey) -> bool:
            activity.heartbeat(str(key))
            try:
                described = await client.get_workflow_handle(workflow_id_for(key)).describe()
            except RPCError as err:
                if err.status == RPCStatusCode.NOT_FOUND:
                    return False
                raise
            return described.status == WorkflowExecutionStatus.RUNNING

        try:
            return await sweep(
                request.app_name,
                retention=services.app.retention,
                keys=keys,
                sessions=services.sessions,
                artifacts=services.artifacts,
                run_is_open=run_is_open,
                dry_run=request.dry_run,
                limit=request.limit,
            )
        except CannotForgetError as err:
            raise ApplicationError(str(err), type=RETENTION_REFUSED, non_retryable=True) from None
