"""Finding invocations with Temporal's visibility queries: served by the server, no worker."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import WorkflowExecution, WorkflowExecutionStatus

from .errors import EncryptionError
from .workflows.messages import ADK_STATUS, Published

__all__ = ["invocations_query", "published_or_unreadable", "quoted", "run_status"]


def quoted(value: str) -> str:
    """``value`` as a visibility query's string literal."""
    return "'" + value.replace("'", "''") + "'"


def invocations_query(
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    statuses: Sequence[str] = (),
) -> str:
    """The query for invocations of these ids (any, where ``None``) in any of ``statuses``."""
    clauses = ["WorkflowType = 'InvocationWorkflow'"]
    for key, value in (("AdkApp", app_name), ("AdkUser", user_id), ("AdkSession", session_id)):
        if value:
            clauses.append(f"{key} = {quoted(value)}")
    if statuses:
        clauses.append(f"AdkStatus IN ({', '.join(map(quoted, statuses))})")
    return " AND ".join(clauses)


def run_status(wf: WorkflowExecution) -> str:
    """The run's ``AdkStatus``, or Temporal's own status for a run closed from outside."""
    adk = wf.typed_search_attributes.get(ADK_STATUS)
    closed = wf.status not in (None, WorkflowExecutionStatus.RUNNING)
    if closed and adk in ("running", "awaiting_confirmation", "awaiting_input"):
        # Terminated or timed out: the run never recorded its end.
        return wf.status.name.lower() if wf.status else "unknown"
    return adk or (wf.status.name.lower() if wf.status else "unknown")


async def published_or_unreadable(wf: WorkflowExecution) -> tuple[Published, str | None]:
    """What the run published, or nothing and why it cannot be read.

    A listing shows every run: one whose payloads are sealed with a key this process lacks
    (another deployment's, an older key file) is listed with the reason, not a failure.
    """
    try:
        return Published.from_memo(await wf.memo()), None
    except EncryptionError as err:
        return Published(), str(err)
