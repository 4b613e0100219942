"""``adk_model_step``, ``adk_tool_call``, ``adk_node_step``, ``adk_remote_step``,
``adk_append_events``, ``adk_compact``: the flow's steps as activities."""

from __future__ import annotations

from temporalio import activity

from adk_temporal.activities.short_ids import StepInput, restored, short_result
from adk_temporal.flow.compacting import CompactionInput, CompactionResult
from adk_temporal.flow.graph_messages import NodeStepInput, NodeStepResult
from adk_temporal.flow.messages import (
    AppendEventsInput,
    ModelStepInput,
    ModelStepReply,
    ToolCallInput,
    ToolCallResult,
)
from adk_temporal.flow.remote import RemoteStepInput, RemoteStepResult
from adk_temporal.steps import StepServices, append_events, model_step, tool_call
from adk_temporal.steps.compaction import compact_events
from adk_temporal.steps.node_step import node_step
from adk_temporal.steps.remote_step import remote_step

from .adapter import heartbeat, step_ref, translate_errors

__all__ = [
    "AppendEventsActivity",
    "CompactionActivity",
    "ModelStepActivity",
    "NodeStepActivity",
    "RemoteStepActivity",
    "ToolCallActivity",
]


class ModelStepActivity:
    """Runs one model step of an agent against the worker's services."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_model_step")
    @translate_errors
    async def run(self, inp: ModelStepInput) -> ModelStepReply:
        """The model step (``adk_temporal.steps.model_step``) as a Temporal activity."""
        whole = _whole(inp)
        return await model_step(
            self._services,
            whole,
            step_ref(whole.ref),
            attempt=activity.info().attempt,
            heartbeat=heartbeat(),
        )


class ToolCallActivity:
    """Runs one function call of an agent against the worker's services."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_tool_call")
    @translate_errors
    async def run(self, inp: ToolCallInput) -> ToolCallResult:
        """The tool call (``adk_temporal.steps.tool_call``) as a Temporal activity."""
        whole = _whole(inp)
        result = await tool_call(
            self._services,
            whole,
            step_ref(whole.ref),
            attempt=activity.info().attempt,
            heartbeat=heartbeat(),
        )
        return short_result(result, inp, whole)


class NodeStepActivity:
    """Runs one node of a graph workflow against the worker's services."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_node_step")
    @translate_errors
    async def run(self, inp: NodeStepInput) -> NodeStepResult:
        """The node step (``adk_temporal.steps.node_step``) as a Temporal activity."""
        return await node_step(self._services, inp, step_ref(inp.ref), heartbeat=heartbeat())


class RemoteStepActivity:
    """Sends a remote agent its turn and follows its task, against the worker's services."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_remote_step")
    @translate_errors
    async def run(self, inp: RemoteStepInput) -> RemoteStepResult:
        """The remote step (``adk_temporal.steps.remote_step``) as a Temporal activity."""
        return await remote_step(
            self._services,
            inp,
            step_ref(inp.ref),
            attempt=activity.info().attempt,
            heartbeat=heartbeat(),
        )


class AppendEventsActivity:
    """Appends workflow-built events to the session; idempotent by event id."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_append_events")
    @translate_errors
    async def run(self, inp: AppendEventsInput) -> None:
        """The append step (``adk_temporal.steps.append_events``) as a Temporal activity."""
        whole = _whole(inp)
        await append_events(self._services, whole, step_ref(whole.ref))


class CompactionActivity:
    """Summarises a session's older events into one compaction event; idempotent by id."""

    def __init__(self, services: StepServices) -> None:
        self._services = services

    @activity.defn(name="adk_compact")
    @translate_errors
    async def run(self, inp: CompactionInput) -> CompactionResult:
        """The compaction step (``adk_temporal.steps.compaction``) as a Temporal activity."""
        whole = _whole(inp)
        return await compact_events(self._services, whole, step_ref(whole.ref))


def _whole(inp: StepInput) -> StepInput:
    """``inp`` with the ids and values a baseline run's workflow left out put back."""
    info = activity.info()
    return restored(inp, info.workflow_run_id or "", info.scheduled_time.timestamp())
