"""What every adk-temporal activity takes from Temporal, and what it gives back on failure."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from adk_temporal.errors import AdkRequestError, AdkRunError
from adk_temporal.flow.messages import InvocationRef
from adk_temporal.steps import Heartbeat, SessionRef

__all__ = ["FAILURE_MESSAGE_LIMIT", "heartbeat", "step_ref", "translate_errors"]

P = ParamSpec("P")
R = TypeVar("R")

FAILURE_MESSAGE_LIMIT = 1000
"""The most characters of an error message a step failure carries.

Temporal keeps a failing activity's last failure in the workflow's state only up to a few
KB — beyond that ``describe`` and the UI show "Failure exceeds size limit" instead of the
cause. A short message, without the chain of causes and their stack traces, always fits;
the worker's log keeps the whole traceback.
"""


def step_ref(ref: InvocationRef) -> SessionRef:
    """The running activity's work, its session ids read back from its workflow id.

    Raises:
        ApplicationError: The activity was started on its own, not by an invocation
            workflow, or its workflow id names no session (non-retryable: it can never find
            its session).
    """
    workflow_id = activity.info().workflow_id
    try:
        if workflow_id is None:
            raise ValueError("no workflow started it")
        return SessionRef.resolve(ref, workflow_id)
    except ValueError as err:
        raise ApplicationError(
            f"adk-temporal activities run only under InvocationWorkflow ({err})",
            non_retryable=True,
        ) from None


def heartbeat() -> Heartbeat | None:
    """The running activity's heartbeat, a third of its heartbeat timeout apart (if any)."""
    timeout = activity.info().heartbeat_timeout
    return Heartbeat(activity.heartbeat, timeout.total_seconds() / 3) if timeout else None


def _message(err: BaseException) -> str:
    message = str(err) or type(err).__name__
    if len(message) > FAILURE_MESSAGE_LIMIT:
        message = f"{message[: FAILURE_MESSAGE_LIMIT - 40]}… ({len(message)} characters)"
    return message


def _failure(
    err: BaseException, *, non_retryable: bool, expected: bool = False
) -> ApplicationError:
    message = _message(err)
    details: list[Any] = []
    status = getattr(err, "status", None)
    if isinstance(status, int):
        details.append({"status": status})
    wait = err.retry_after if isinstance(err, AdkRunError) else None
    return ApplicationError(
        message,
        *details,
        type=type(err).__name__,
        non_retryable=non_retryable,
        # Temporal waits this long before the next attempt instead of its back-off.
        next_retry_delay=timedelta(seconds=wait) if wait is not None else None,
        # Benign: the SDK logs it at debug level, where its traceback does not bury the
        # one line the wrapper logs for the operator.
        category=ApplicationErrorCategory.BENIGN
        if expected
        else ApplicationErrorCategory.UNSPECIFIED,
    )


def translate_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map a step's errors to Temporal's retry semantics, as failures that stay readable.

    Request errors (bad input, unknown agent or model, a 4xx from the model API) can never
    succeed on retry, so they become non-retryable ``ApplicationError`` values typed with
    the class name, logged as one line without a traceback (they are expected). Anything
    else — a model that is rate-limited or down, a tool that raised — stays retryable under
    the activity's policy, typed with its class name (so a tool's
    ``non_retryable_error_types`` applies). A run error whose ``retryable`` attribute is
    ``False`` (an MCP server that answered a listing with a protocol error, say) is
    non-retryable too. Every failure is compact: its message is at most
    :data:`FAILURE_MESSAGE_LIMIT` characters and it carries no chained causes.
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ApplicationError:
            raise
        except AdkRequestError as err:
            # The caller's mistake (an unknown agent, say): one line saying what it was;
            # a traceback would only point at this library.
            activity.logger.warning("refused: %s: %s", type(err).__name__, _message(err))
            raise _failure(err, non_retryable=True, expected=True) from None
        except Exception as err:
            activity.logger.warning("step failed: %s", type(err).__name__, exc_info=True)
            final = isinstance(err, AdkRunError) and not err.retryable
            raise _failure(err, non_retryable=final) from None

    return wrapper
