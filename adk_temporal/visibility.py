"""Finding invocations with Temporal's visibility queries: served by the server, no worker.

Every value placed in a query goes through :func:`quoted`. Temporal's parser takes both
``'`` and ``"`` as string delimiters, honours ``''`` and backslash escapes inside a
literal, and ``--`` / ``#`` comments outside one: a value able to close its literal turns a
filter into query text (``user_id=x\\' OR AdkApp = "other" -- `` listed another app's runs).

Page tokens wrap Temporal's with a check of the listing they belong to. Given a key (the
gateway's secret), the check is an HMAC: a token nobody handed out cannot be made without
the key. Without one (the CLI and ``AdkClient``, whose callers query Temporal directly
anyway) it is a plain hash: it catches a token edited, truncated or passed to another
listing, but anyone can compute it, so it proves nothing about who made the token.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from .errors import AdkRequestError, EncryptionError, InvalidIdError
from .ids import app_queues_prefix, hidden_character_problem, id_problem
from .workflows.messages import ADK_STATUS, Published

__all__ = [
    "INVOCATIONS_VIEW",
    "MAX_PAGE_SIZE",
    "WAITING_VIEW",
    "InvalidPageTokenError",
    "UnquotableValueError",
    "VisibilityPage",
    "invocations_query",
    "list_page",
    "published_or_unreadable",
    "quote_problem",
    "quoted",
    "run_status",
    "task_queue_clause",
]


class UnquotableValueError(AdkRequestError, ValueError):
    """A value cannot be placed in a visibility query: it holds a backslash, a double quote
    or a control or format character."""


class InvalidPageTokenError(AdkRequestError, ValueError):
    """A page token is not one this listing handed out (edited, truncated, or from a
    listing with other filters)."""


MAX_PAGE_SIZE = 1000
"""The largest page a listing asks Temporal for."""
_MAX_TOKEN_CHARS = 4096
_CHECK_BYTES = 8
_MAC_BYTES = 16


@dataclass(frozen=True)
class VisibilityPage:
    """One page of a visibility listing and the token of the next (``None``: the last)."""

    executions: list[WorkflowExecution]
    next_page_token: str | None


def _check(query: str, raw: bytes, key: bytes | None) -> bytes:
    message = query.encode() + b"\0" + raw
    if key is None:
        return hashlib.sha256(message).digest()[:_CHECK_BYTES]
    return hmac.new(key, message, hashlib.sha256).digest()[:_MAC_BYTES]


def _token_bytes(query: str, token: str | None, key: bytes | None) -> bytes | None:
    """Temporal's token inside ``token``, once its check says it came from ``query``'s
    listing unchanged (and, with ``key``, from a holder of the key): Temporal answers a
    mangled token with an error it retries for seconds, or with a page of another
    listing."""
    if not token:
        return None
    if len(token) > _MAX_TOKEN_CHARS:
        raise InvalidPageTokenError(f"page token is longer than {_MAX_TOKEN_CHARS} characters")
    try:
        framed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        framed = b""
    size = _CHECK_BYTES if key is None else _MAC_BYTES
    check, raw = framed[:size], framed[size:]
    if not raw or not hmac.compare_digest(check, _check(query, raw, key)):
        raise InvalidPageTokenError(
            f"page token {token[:40]!r} was not handed out by this listing: pass the "
            "next_page_token of the previous page of the same listing unchanged"
        )
    return raw


def _token_text(query: str, raw: bytes | None, key: bytes | None) -> str | None:
    if not raw:
        return None
    return base64.urlsafe_b64encode(_check(query, raw, key) + raw).decode().rstrip("=")


async def list_page(
    client: Client,
    query: str,
    *,
    page_size: int,
    page_token: str | None = None,
    key: bytes | None = None,
) -> VisibilityPage:
    """One page of ``query``'s runs, newest first: one visibility call, never more.

    Args:
        client: The Temporal client to list with.
        query: The visibility query.
        page_size: At most this many runs (1 to :data:`MAX_PAGE_SIZE`).
        page_token: The ``next_page_token`` of the previous page; ``None`` for the first.
        key: Signs the tokens handed out and checks those passed in (HMAC-SHA256), for
            tokens that cross to callers who must not mint them; ``None``: a plain hash.

    Raises:
        InvalidPageTokenError: The token was not handed out by a listing (with ``key``: by
            one using the same key).
        ValueError: ``page_size`` is out of range.
    """
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page_size must be from 1 to {MAX_PAGE_SIZE}, not {page_size}")
    token = _token_bytes(query, page_token, key)
    listing = client.list_workflows(query, page_size=page_size, next_page_token=token)
    try:
        await listing.fetch_next_page()
    except RPCError as err:
        if token is not None and err.status == RPCStatusCode.INVALID_ARGUMENT:
            raise InvalidPageTokenError(
                f"Temporal refused the page token ({err.message}): pass the next_page_token "
                "of the previous page of the same listing unchanged"
            ) from err
        raise
    executions = list(listing.current_page or [])
    return VisibilityPage(executions, _token_text(query, listing.next_page_token, key))


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


def task_queue_clause(task_queue: str) -> str:
    """The clause selecting runs on ``task_queue`` or on an app's own queue beside it (the
    client starts a named app's runs there, :mod:`~adk_temporal.start_queues`).

    Raises:
        UnquotableValueError: The queue name cannot be quoted (:func:`quote_problem`).
    """
    # Quoted like every value: a queue name holding a quote would end its literal.
    own = quoted(app_queues_prefix(task_queue), "task_queue")
    return f"(TaskQueue = {quoted(task_queue, 'task_queue')} OR TaskQueue STARTS_WITH {own})"


def invocations_query(
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    statuses: Sequence[str] = (),
    schedule_id: str | None = None,
) -> str:
    """The query for invocations of these ids (any, where ``None`` or empty) in any of
    ``statuses``; with ``schedule_id``, only those its firings started.

    Raises:
        InvalidIdError: An id breaks the id grammar (:func:`~adk_temporal.ids.id_problem`).
        UnquotableValueError: A value cannot be quoted (:func:`quote_problem`).
    """
    clauses = ["WorkflowType = 'InvocationWorkflow'"]
    filters = (
        ("AdkApp", "app_name", app_name),
        ("AdkUser", "user_id", user_id),
        ("AdkSession", "session_id", session_id),
        ("AdkSchedule", "schedule_id", schedule_id),
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


WAITING_VIEW = invocations_query(statuses=("awaiting_confirmation", "awaiting_input"))
"""The Temporal UI's saved view of the runs that wait for an answer: invocations only, so
notification runs (``adk_notify``) stay out of it."""

INVOCATIONS_VIEW = invocations_query()
"""The Temporal UI's saved view of every invocation, without auxiliary runs."""


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
