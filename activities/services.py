"""What a worker's activities run against: agents, models and the session/artifact stores.

Live objects stay here, on the worker; only ids and deltas cross into workflow history.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from google.genai import types
from temporalio import activity
from temporalio.exceptions import ApplicationError

from adk_temporal.agents import Agent, AgentRegistry
from adk_temporal.artifacts import ArtifactService
from adk_temporal.context import InvocationContext
from adk_temporal.errors import AdkRequestError, ModelUnavailableError, SessionNotFoundError
from adk_temporal.events import Event
from adk_temporal.memory import MemoryService
from adk_temporal.models import ModelRegistry
from adk_temporal.sessions import Session, SessionService

from .messages import InvocationRef
from .session_cache import SessionEventsCache

__all__ = ["WorkerServices", "append_to_session", "resolve", "translate_errors"]


@dataclass(frozen=True)
class WorkerServices:
    """The worker-side services every adk-temporal activity uses."""

    agents: AgentRegistry
    sessions: SessionService
    models: ModelRegistry
    artifacts: ArtifactService | None = None
    memory: MemoryService | None = None
    events_cache: SessionEventsCache = field(default_factory=SessionEventsCache)

    def invocation_context(
        self,
        ref: InvocationRef,
        session: Session,
        agent: Agent,
        *,
        user_content: types.Content | None = None,
        resume_inputs: Mapping[str, Any] | None = None,
    ) -> InvocationContext:
        """The context an activity runs an agent's callbacks or tools in."""
        return InvocationContext(
            session=session,
            agent=agent,
            invocation_id=ref.invocation_id,
            branch=ref.branch,
            isolation_scope=ref.isolation_scope,
            user_content=user_content,
            artifact_service=self.artifacts,
            memory_service=self.memory,
            resume_inputs=resume_inputs,
            workflow_id=activity.info().workflow_id,
        )


P = ParamSpec("P")
R = TypeVar("R")


def translate_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map adk-temporal errors to Temporal's retry semantics.

    Request errors (bad input, unknown agent or model, a 4xx from the model API) can never
    succeed on retry, so they become non-retryable ``ApplicationError`` values typed with
    the class name; a model that is rate-limited or down stays retryable. Anything else
    propagates unchanged and Temporal retries it under the activity's policy.
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except AdkRequestError as err:
            details: list[Any] = []
            status = getattr(err, "status", None)
            if status is not None:
                details.append({"status": status})
            raise ApplicationError(
                str(err), *details, type=type(err).__name__, non_retryable=True
            ) from err
        except ModelUnavailableError as err:
            raise ApplicationError(str(err), type=type(err).__name__) from err

    return wrapper


async def append_to_session(
    sessions: SessionService, ref: InvocationRef, events: list[Event]
) -> None:
    """Append ``events`` idempotently, creating the session on an invocation's first write."""
    app_name, user_id, session_id = ref.app_name, ref.user_id, ref.session_id
    try:
        await sessions.append_events(
            app_name=app_name, user_id=user_id, session_id=session_id, events=events
        )
    except SessionNotFoundError:
        await sessions.get_or_create(app_name=app_name, user_id=user_id, session_id=session_id)
        await sessions.append_events(
            app_name=app_name, user_id=user_id, session_id=session_id, events=events
        )


def resolve(ref: InvocationRef) -> InvocationRef:
    """``ref`` with the session ids the workflow left out, read from this activity's info."""
    return ref.resolved(activity.info().workflow_id)
