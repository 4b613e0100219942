"""What a worker's activities run against: agents, models and the session/artifact stores.

Live objects stay here, on the worker; only ids and deltas cross into workflow history.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from google.genai import types
from temporalio import activity
from temporalio.exceptions import ApplicationError

from adk_temporal.agents import Agent, AgentRegistry
from adk_temporal.artifacts import ArtifactService
from adk_temporal.context import InvocationContext
from adk_temporal.errors import (
    AdkRequestError,
    AdkRunError,
    SessionNotFoundError,
    StagedResponseNotFoundError,
    UnknownAppError,
)
from adk_temporal.events import Event
from adk_temporal.flow.messages import (
    MergedResponses,
    NotifyPlan,
    PendingEvent,
    SessionRef,
    StagedResponse,
)
from adk_temporal.history import USER_AUTHOR
from adk_temporal.memory import MemoryService
from adk_temporal.merge import merge_function_response_events
from adk_temporal.models import ModelRegistry
from adk_temporal.sessions import Session, SessionService
from adk_temporal.tracing import record_requests, span

from .session_cache import LoadedSession, SessionEventsCache

__all__ = [
    "FAILURE_MESSAGE_LIMIT",
    "WorkerServices",
    "append_to_session",
    "current_workflow_id",
    "heartbeating",
    "stored_form",
    "translate_errors",
    "user_content",
]


@dataclass(frozen=True)
class WorkerServices:
    """The worker-side services every adk-temporal activity uses."""

    agents: AgentRegistry
    sessions: SessionService
    models: ModelRegistry
    artifacts: ArtifactService | None = None
    memory: MemoryService | None = None
    events_cache: SessionEventsCache = field(default_factory=SessionEventsCache)
    request_timeout_seconds: float | None = None
    """How long requests wait when their tool set no timeout; ``None``: for ever."""
    app_name: str | None = None
    """The app this worker serves; invocations of another app are refused."""
    notify: NotifyPlan | None = None
    """The notifications the app sends, told to the workflow with the agent tree."""

    def check_app(self, ref: SessionRef) -> None:
        """Refuse an invocation of an app this worker does not serve.

        Raises:
            UnknownAppError: The worker serves a named app and ``ref`` is of another.
        """
        if self.app_name is not None and ref.app_name != self.app_name:
            raise UnknownAppError(
                f"this worker serves app {self.app_name!r}, not {ref.app_name!r}; start the "
                f"invocation with that app name or a worker for {ref.app_name!r}"
            )

    def invocation_context(
        self,
        ref: SessionRef,
        loaded: LoadedSession,
        agent: Agent,
        *,
        workflow_id: str,
        resume_inputs: Mapping[str, Any] | None = None,
        expired_inputs: Sequence[str] = (),
        session: Session | None = None,
    ) -> InvocationContext:
        """The context a step runs an agent's callbacks or tools in.

        ``session`` replaces ``loaded.session`` when the step changed a copy of it; its
        events are what ``loaded`` stored plus any the step sees as if stored.
        """
        session = session or loaded.session
        return InvocationContext(
            session=session,
            agent=agent,
            invocation_id=ref.invocation_id,
            branch=ref.branch,
            isolation_scope=ref.isolation_scope,
            user_content=user_content(loaded, ref, session.events),
            artifact_service=self.artifacts,
            memory_service=self.memory,
            resume_inputs=resume_inputs,
            expired_inputs=expired_inputs,
            workflow_id=workflow_id,
        )

    async def load_session(self, ref: SessionRef) -> LoadedSession:
        """The stored session with its events (created on the invocation's first step)."""
        return await self.events_cache.load(
            self.sessions,
            app_name=ref.app_name,
            user_id=ref.user_id,
            session_id=ref.session_id,
            create=True,
        )


def user_content(
    loaded: LoadedSession, ref: SessionRef, events: Sequence[Event]
) -> types.Content | None:
    """The user message that started this invocation (or this scoped agent call).

    ``events`` are the session's events as the step sees them: the stored ones, whose
    index answers at once, then those not stored yet, at the end (the message of an
    invocation's first step is stored with that step's reply).
    """
    event = loaded.stored.user_message(ref.invocation_id, ref.isolation_scope)
    if event is None:
        for unstored in reversed(events):
            if unstored.id in loaded.stored.ids:
                break
            if (
                unstored.invocation_id == ref.invocation_id
                and unstored.author == USER_AUTHOR
                and unstored.isolation_scope == ref.isolation_scope
            ):
                event = unstored
    # A copy: the event may be the worker's cached one, shared with later steps.
    return event.content.model_copy(deep=True) if event is not None and event.content else None


P = ParamSpec("P")
R = TypeVar("R")


FAILURE_MESSAGE_LIMIT = 1000
"""The most characters of an error message a step failure carries.

Temporal keeps a failing activity's last failure in the workflow's state only up to a few
KB — beyond that ``describe`` and the UI show "Failure exceeds size limit" instead of the
cause. A short message, without the chain of causes and their stack traces, always fits;
the worker's log keeps the whole traceback.
"""


def _failure(err: BaseException, *, non_retryable: bool) -> ApplicationError:
    message = str(err) or type(err).__name__
    if len(message) > FAILURE_MESSAGE_LIMIT:
        message = f"{message[: FAILURE_MESSAGE_LIMIT - 40]}… ({len(message)} characters)"
    details: list[Any] = []
    status = getattr(err, "status", None)
    if isinstance(status, int):
        details.append({"status": status})
    return ApplicationError(message, *details, type=type(err).__name__, non_retryable=non_retryable)


def translate_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map a step's errors to Temporal's retry semantics, as failures that stay readable.

    Request errors (bad input, unknown agent or model, a 4xx from the model API) can never
    succeed on retry, so they become non-retryable ``ApplicationError`` values typed with
    the class name. Anything else — a model that is rate-limited or down, a tool that
    raised — stays retryable under the activity's policy, typed with its class name (so a
    tool's ``non_retryable_error_types`` applies). A run error whose ``retryable`` attribute
    is ``False`` (an MCP server that answered a listing with a protocol error, say) is
    non-retryable too. Every failure is compact: its message is
    at most :data:`FAILURE_MESSAGE_LIMIT` characters and it carries no chained causes.
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ApplicationError:
            raise
        except AdkRequestError as err:
            raise _failure(err, non_retryable=True) from None
        except Exception as err:
            activity.logger.warning("step failed: %s", type(err).__name__, exc_info=True)
            final = isinstance(err, AdkRunError) and not err.retryable
            raise _failure(err, non_retryable=final) from None

    return wrapper


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat while a step runs, when its activity has a heartbeat timeout.

    Heartbeats are how a running activity learns that its workflow was cancelled: the
    cancellation then surfaces in the tool or the model call as ``asyncio.CancelledError``.
    Outside an activity (the in-process runner) there is nobody to tell.
    """
    timeout = activity.info().heartbeat_timeout if activity.in_activity() else None
    if not timeout:
        yield
        return

    async def beat() -> None:
        # The first beat waits too: each one is a call to the server that records it, and
        # most steps end long before it is due, so they cost the server nothing extra.
        while True:
            await asyncio.sleep(max(timeout.total_seconds() / 3, 0.05))
            activity.heartbeat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def stored_form(
    sessions: SessionService,
    ref: SessionRef,
    pending: Sequence[PendingEvent],
    stored: Container[str],
) -> tuple[list[Event], list[str]]:
    """The pending events as they are stored, and the staged ids that made them.

    A merged response is built from what its tool steps staged (read in one call) and the
    responses the flow made itself. One already in ``stored`` (the session's event ids) is
    skipped: a retry after the append that took its staged parts finds them gone.

    Raises:
        StagedResponseNotFoundError: A staged response is missing though its merged event
            was never stored.
    """
    wanted = [
        response.staged
        for item in pending
        if isinstance(item, MergedResponses) and item.id not in stored
        for response in item.responses
        if isinstance(response, StagedResponse)
    ]
    staged = (
        await sessions.staged_events(
            app_name=ref.app_name, user_id=ref.user_id, session_id=ref.session_id, ids=wanted
        )
        if wanted
        else {}
    )
    events: list[Event] = []
    for item in pending:
        if isinstance(item, Event):
            events.append(item)
            continue
        if item.id in stored:
            continue
        parts: list[Event] = []
        for response in item.responses:
            if isinstance(response, Event):
                parts.append(response)
                continue
            found = staged.get(response.staged)
            if found is None:
                raise StagedResponseNotFoundError(
                    f"the staged response {response.staged!r} of event {item.id!r} is not in "
                    f"the session store of {ref.app_name}/{ref.user_id}/{ref.session_id}"
                )
            parts.append(found)
        parts[0] = parts[0].model_copy(update={"id": item.id, "timestamp": item.timestamp})
        events.append(merge_function_response_events(parts))
    return events, wanted


async def append_to_session(
    sessions: SessionService,
    ref: SessionRef,
    events: list[Event],
    unstage: Sequence[str] = (),
) -> None:
    """Append ``events`` idempotently, creating the session on an invocation's first write.

    ``unstage`` names the staged events they were made from, removed in the same write.
    """
    with span("adk.session.append", {"adk.events": len(events)}):
        await _append_or_create(sessions, ref, events, unstage)
    record_requests(events)


async def _append_or_create(
    sessions: SessionService, ref: SessionRef, events: list[Event], unstage: Sequence[str]
) -> None:
    app_name, user_id, session_id = ref.app_name, ref.user_id, ref.session_id
    try:
        await sessions.append_events(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            events=events,
            unstage=unstage,
        )
    except SessionNotFoundError:
        await sessions.get_or_create(app_name=app_name, user_id=user_id, session_id=session_id)
        await sessions.append_events(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            events=events,
            unstage=unstage,
        )


def current_workflow_id() -> str:
    """The id of the workflow that scheduled the running activity.

    Raises:
        ApplicationError: The activity was started on its own, not by an invocation
            workflow (non-retryable: it can never find its session).
    """
    workflow_id = activity.info().workflow_id
    if workflow_id is None:
        raise ApplicationError(
            "adk-temporal activities run only under InvocationWorkflow", non_retryable=True
        )
    return workflow_id
