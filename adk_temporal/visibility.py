"""Finding invocations with Temporal's visibility queries: served by the server, no worker.

Every value placed in a query goes through :func:`quoted`. Temporal's parser takes both
``'`` and ``"`` as string delimiters, honours ``''`` and backslash escapes inside a
literal, and ``--`` / ``#`` comments outside one: a value able to close its literal turns a
filter into query text (``user_id=x\\' OR AdkApp = "other" -- `` listed another app's runs).
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import WorkflowExecution, WorkflowExecutionStatus

from .errors import AdkRequestError, EncryptionError, InvalidIdError
from .ids import hidden_character_problem, id_problem
from .workflows.messages import ADK_STATUS, Published

__all__ = [
    "UnquotableValueError",
    "invocations_query",
    "published_or_unreadable",
    "quote_problem",
    "quoted",
    "run_status",
]


class UnquotableValueError(AdkRequestError, ValueError):
    """A value cannot be placed in a visibility query: it holds a backslash, a double quote
    or a control or format character."""


def quote_problem(field: str, value: str) -> str | None:
    """Why ``value`` cannot stand in a visibility query as ``field``, or ``None``.

    Accepted: any text without a backslash (an escape), a double quote (the other delimiter;
    the server never matches a value holding one) or a control or format character; a
    single quote is fine, :func:`quoted` doubles it.
    """
    if "\\" in value:
        return f"{field} cannot contain a backslash in a visibility query ({field}={value!r})"
    if '"' in value:
        return f"{field} cannot contain a double quote in a visibility query ({field}={value!r})"
    return hidden_character_problem(field, value)


def quoted(value: str, field: str = "value") -> str:
    """``value`` as a visibility query's single-quoted literal, ``'`` doubled.

    Raises:
        UnquotableValueError: :func:`quote_problem` names a problem (``field`` names the
            value in the message); nothing is escaped that could be misread.
    """
    problem = quote_problem(field, value)
    if problem is not None:
        raise UnquotableValueError(problem)
    return "'" + value.replace("'", "''") + "'"


def invocations_query(
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    statuses: Sequence[str] = (),
) -> str:
    """The query for invocations of these ids (any, where ``None`` or empty) in any of
    ``statuses``.

    Raises:
        InvalidIdError: An id breaks the id grammar (:func:`~adk_temporal.ids.id_problem`).
        UnquotableValueError: A value cannot be quoted (:func:`quote_problem`).
    """
    clauses = ["WorkflowType = 'InvocationWorkflow'"]
    filters = (
        ("AdkApp", "app_name", app_name),
        ("AdkUser", "user_id", user_id),
        ("AdkSession", "session_id", session_id),
    )
    for key, field, value in filters:
        if value:
            problem = id_problem(field, value)
            if problem is not None:
                raise InvalidIdError(f"invalid filter: {problem}")
            clauses.append(f"{key} = {quoted(value, field)}")
    if statuses:
        clauses.append(f"AdkStatus IN ({', '.join(quoted(s, 'status') for s in statuses)})")
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
