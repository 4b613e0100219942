"""``AdkPlugin``: everything a Temporal worker needs to run ADK invocations.

Pass it to the worker (``Worker(client, task_queue=..., plugins=[AdkPlugin(...)])``); a
client that only starts and answers invocations needs just :func:`adk_data_converter`. The
plugin registers ``InvocationWorkflow``, ``adk_notify`` (notifications out),
``adk_retention`` (forgetting idle sessions), ``adk_schedule_fire`` (a schedule's
firing) and the activities bound to this worker's services,
switches the data converter to pydantic (so ``google.genai`` content with bytes round-trips)
and lets the workflow sandbox pass the third-party data modules through.
"""

from __future__ import annotations

from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from .activities.notify import NotifyActivity
from .activities.retention import RetentionActivity
from .activities.rewind import RewindActivity
from .activities.steps import (
    AppendEventsActivity,
    CompactionActivity,
    ModelStepActivity,
    NodeStepActivity,
    RemoteStepActivity,
    ToolCallActivity,
)
from .app import App, Stores
from .converter import AdkPayloadConverter, adk_data_converter
from .queues import check_worker_queue
from .steps import StepServices
from .workflows.fire import FireWorkflow
from .workflows.invocation import InvocationWorkflow
from .workflows.notify import NotifyWorkflow
from .workflows.retention import RetentionWorkflow

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
        app: What the worker serves, and every setting of it (:class:`~adk_temporal.app.App`).
            A named app's worker sends another app's steps back untouched (a model step) or
            fails them retryably (``UnknownAppError``), never for good; its model limits'
            steps run on their limits' own task queues, served by the workers
            :meth:`model_step_plugin` configures (``worker.build_worker`` does it).
        stores: Where sessions and artifacts live; every worker of a deployment shares them.
    """

    def __init__(self, app: App, *, stores: Stores) -> None:
        services = StepServices.build(app, stores)
        self.services = services
        super().__init__(
            "adk_temporal.AdkPlugin",
            data_converter=adk_data_converter,
            activities=[
                ModelStepActivity(services).run,
                ToolCallActivity(services).run,
                NodeStepActivity(services).run,
                RemoteStepActivity(services).run,
                AppendEventsActivity(services).run,
                CompactionActivity(services).run,
                NotifyActivity(app.notifications).run,
                RetentionActivity(services).run,
                RewindActivity(services).run,
            ],
            workflows=[InvocationWorkflow, NotifyWorkflow, RetentionWorkflow, FireWorkflow],
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
