"""``StepServices``: what the steps run against — agents, models and the stores.

Live objects stay here, on the worker (or in the in-process runner); only ids and deltas
cross into workflow history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from ..agents import Agent, AgentRegistry
from ..app import App, Stores
from ..artifacts import ArtifactService
from ..context import InvocationContext
from ..dispatch import StepTimings
from ..errors import UnknownAppError
from ..events import Event
from ..flow.messages import NotifyPlan
from ..history import USER_AUTHOR
from ..model_limits import limit_for
from ..models import ModelRegistry
from ..run_config import RunConfig
from ..sessions import Session, SessionService
from ..tools import FunctionTool
from .ref import SessionRef
from .session_cache import LoadedSession, SessionEventsCache

__all__ = ["StepServices", "user_content"]


@dataclass(frozen=True)
class StepServices:
    """The services every step uses, shared by the steps of one worker or runner.

    Built from the :class:`~adk_temporal.app.App` and its :class:`~adk_temporal.app.Stores`
    whole (:meth:`build`); each setting is read from the app under the app's own name.
    """

    app: App
    stores: Stores
    agents: AgentRegistry
    events_cache: SessionEventsCache = field(default_factory=SessionEventsCache)
    timings: StepTimings = field(default_factory=StepTimings)
    """How long this worker's steps took, by agent and tool (``App.local_steps``)."""

    @classmethod
    def build(cls, app: App, stores: Stores) -> StepServices:
        """The services of ``app`` over ``stores``."""
        return cls(app=app, stores=stores, agents=AgentRegistry(app.agents))

    @property
    def sessions(self) -> SessionService:
        """The session store."""
        return self.stores.sessions

    @property
    def artifacts(self) -> ArtifactService | None:
        """The artifact store; ``None`` leaves ``ctx.artifacts`` as ``None``."""
        return self.stores.artifacts

    @property
    def models(self) -> ModelRegistry:
        """The app's model registry."""
        return self.app.models

    @property
    def app_name(self) -> str | None:
        """The app these services serve; steps of another app are refused."""
        return self.app.name

    @property
    def notify(self) -> NotifyPlan | None:
        """The notifications the app sends, told to the workflow with the agent tree."""
        notifications = self.app.notifications
        return notifications.plan() if notifications is not None else None

    def model_group(self, model: str) -> str | None:
        """The limit ``model``'s steps run under, by name; ``None`` when it has none."""
        limit = limit_for(self.app.model_limits, model)
        return limit.group if limit is not None else None

    def local_model_steps(self, agent: str) -> bool:
        """Whether ``agent``'s model steps may run as local activities: the app asks for
        it, its model has no limit (whose queue paces it) and its steps were short here."""
        local = self.app.local_steps
        if local is None or not local.models:
            return False
        if self.model_group(self.agents.model_of(agent)) is not None:
            return False
        return self.timings.short("model", agent, local.short.total_seconds())

    def local_tool(self, tool: FunctionTool) -> bool:
        """Whether ``tool``'s calls may run as local activities: the app names it, it
        neither heartbeats nor runs long, and its calls were short here."""
        local = self.app.local_steps
        return (
            local is not None
            and tool.name in local.tools
            and not tool.is_long_running
            and tool.heartbeat_timeout is None
            and self.timings.short("tool", tool.name, local.short.total_seconds())
        )

    def serves(self, ref: SessionRef) -> bool:
        """Whether ``ref``'s app is this worker's: an unnamed app serves every app."""
        return self.app_name is None or ref.key.app_name == self.app_name

    def check_app(self, ref: SessionRef) -> None:
        """Refuse, for another worker to take, a step of an app these services do not serve.

        Raises:
            UnknownAppError: A named app is served and ``ref`` is of another (retryable:
                the step is left to the app's own workers).
        """
        if not self.serves(ref):
            raise UnknownAppError(
                f"this worker serves app {self.app_name!r}, not {ref.key.app_name!r}: the "
                f"step is left to a worker of {ref.key.app_name!r} (start one if none runs)"
            )

    def invocation_context(
        self,
        ref: SessionRef,
        loaded: LoadedSession,
        agent: Agent,
        *,
        resume_inputs: Mapping[str, Any] | None = None,
        expired_inputs: Sequence[str] = (),
        session: Session | None = None,
        run_config: RunConfig | None = None,
    ) -> InvocationContext:
        """The context a step runs an agent's callbacks or tools in.

        ``session`` replaces ``loaded.session`` when the step changed a copy of it; its
        events are what ``loaded`` stored plus any the step sees as if stored.
        ``run_config`` is the invocation's (``None``: a step recorded before it travelled,
        which sees the defaults).
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
            memory_service=self.app.memory_service,
            resume_inputs=resume_inputs,
            expired_inputs=expired_inputs,
            workflow_id=ref.workflow_id,
            run_config=run_config,
        )

    async def load_session(self, ref: SessionRef) -> LoadedSession:
        """The stored session with its events (created on the invocation's first step)."""
        return await self.events_cache.load(self.sessions, ref.key, create=True)


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
