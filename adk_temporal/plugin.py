"""``AdkPlugin``: everything a Temporal worker needs to run ADK invocations.

Pass it to the worker (``Worker(client, task_queue=..., plugins=[AdkPlugin(...)])``); a
client that only starts and answers invocations needs just :func:`adk_data_converter`. The
plugin registers ``InvocationWorkflow``, ``adk_notify`` (notifications out) and the
activities bound to this worker's services,
switches the data converter to pydantic (so ``google.genai`` content with bytes round-trips)
and lets the workflow sandbox pass the third-party data modules through.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from .activities.notify import NotifyActivity
from .activities.steps import (
    AppendEventsActivity,
    CompactionActivity,
    ModelStepActivity,
    ToolCallActivity,
)
from .agents import BaseAgent
from .artifacts import ArtifactService
from .compaction import EventsCompactionConfig
from .converter import AdkPayloadConverter, adk_data_converter
from .memory import MemoryService
from .model_limits import ModelLimit
from .models import ModelRegistry
from .notifications import Notifications
from .queues import check_worker_queue
from .sessions import SessionService
from .steps import StepServices
from .usage import TokenBudgets
from .workflows.invocation import InvocationWorkflow
from .workflows.notify import NotifyWorkflow

__all__ = ["PASSTHROUGH_MODULES", "AdkPayloadConverter", "AdkPlugin", "adk_data_converter"]

# Kept importable from here, where workers find everything they need.

PASSTHROUGH_MODULES = ("google.genai", "pydantic", "pydantic_core", "jsonschema")
"""Third-party modules the workflow sandbox shares with the worker instead of re-importing.

``google.genai`` must be passed through: its httpx import trips the sandbox's ``urllib``
restriction. The others are deterministic data/validation code; sharing them avoids
re-importing them for every workflow run. Our own pure modules are passed through where the
workflow imports them (``workflow.unsafe.imports_passed_through``).
"""


def _runner(existing: WorkflowRunner | None) -> WorkflowRunner:
    if existing is None or isinstance(existing, SandboxedWorkflowRunner):
        restrictions = (
            existing.restrictions if existing is not None else SandboxRestrictions.default
        )
        return SandboxedWorkflowRunner(
            restrictions=restrictions.with_passthrough_modules(*PASSTHROUGH_MODULES)
        )
    return existing


class AdkPlugin(SimplePlugin):
    """Registers adk-temporal's workflow, activities, converter and sandbox settings.

    Args:
        agents: The agents this worker serves (looked up by name).
        session_service: Where sessions live; ``SqliteSessionService`` is the embedded
            default, and every worker of a deployment must share it.
        artifact_service: Where artifacts live; ``None`` leaves ``ctx.artifacts`` as ``None``.
        memory_service: Backs ``ctx.search_memory``; ``None`` makes it raise
            ``MemoryServiceNotConfiguredError``.
        models: Resolves agents' model names; defaults to Gemini plus the scripted models.
        request_timeout: How long confirmation and input requests wait when their tool set
            no timeout; ``None`` waits for ever.
        app_name: The app this worker serves; another app's steps are sent back untouched
            (a model step) or failed retryably (``UnknownAppError``), never for good.
        notifications: The webhooks the app's invocations notify; ``None``: none.
        model_limits: Models whose steps run on their limit's own task queue, served by the
            workers :meth:`model_step_plugin` configures (``worker.build_worker`` does it).
        max_retry_after: The longest wait a model's ``Retry-After`` may impose on a step's
            next attempt.
        token_budgets: Cumulative token budgets per session, user and app (none: unbounded).
        compaction: When the app's sessions are compacted (``None``: never).
    """

    def __init__(
        self,
        agents: Sequence[BaseAgent],
        *,
        session_service: SessionService,
        artifact_service: ArtifactService | None = None,
        memory_service: MemoryService | None = None,
        models: ModelRegistry | None = None,
        request_timeout: timedelta | None = None,
        app_name: str | None = None,
        notifications: Notifications | None = None,
        model_limits: Sequence[ModelLimit] = (),
        max_retry_after: timedelta = timedelta(minutes=5),
        token_budgets: TokenBudgets | None = None,
        compaction: EventsCompactionConfig | None = None,
    ) -> None:
        services = StepServices.build(
            agents,
            session_service=session_service,
            artifact_service=artifact_service,
            memory_service=memory_service,
            models=models,
            request_timeout=request_timeout,
            app_name=app_name,
            notifications=notifications,
            model_limits=model_limits,
            max_retry_after=max_retry_after,
            token_budgets=token_budgets,
            compaction=compaction,
        )
        self.services = services
        super().__init__(
            "adk_temporal.AdkPlugin",
            data_converter=adk_data_converter,
            activities=[
                ModelStepActivity(services).run,
                ToolCallActivity(services).run,
                AppendEventsActivity(services).run,
                CompactionActivity(services).run,
                NotifyActivity(notifications).run,
            ],
            workflows=[InvocationWorkflow, NotifyWorkflow],
            workflow_runner=_runner,
            run_context=services.models.in_use,
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """The worker's configuration with this plugin's parts, once its queue is checked.

        Raises:
            WorkerQueueError: The worker's task queue is another app's own queue (or the
                unnamed apps' queue, for a named app): it would take steps it must not.
        """
        check_worker_queue(config.get("task_queue", ""), self.services.app_name)
        return super().configure_worker(config)

    def model_step_plugin(self) -> SimplePlugin:
        """What a worker of a model limit's task queue runs: this plugin's model steps."""
        return SimplePlugin(
            "adk_temporal.ModelSteps",
            data_converter=adk_data_converter,
            activities=[ModelStepActivity(self.services).run],
            run_context=self.services.models.in_use,
        )
