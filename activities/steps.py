"""``adk_model_step``, ``adk_tool_call``, ``adk_node_step``, ``adk_remote_step``,
``adk_append_events``, ``adk_compact``: the flow's steps as activities."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from types import TracebackType
from typing import TypeVar

from temporalio import activity

from adk_temporal.activities.short_ids import StepInput, restored, short_result
from adk_temporal.dispatch.timings import StepKind
from adk_temporal.errors import UnknownAppError
from adk_temporal.flow.compacting import CompactionInput, CompactionResult
from adk_temporal.flow.graph_messages import NodeStepInput, NodeStepResult
from adk_temporal.flow.messages import (
    AppendEventsInput,
    ModelStepInput,
    ModelStepReply,
    RouteStep,
    ToolCallInput,
    ToolCallResult,
)
from adk_temporal.flow.remote import RemoteStepInput, RemoteStepResult
from adk_temporal.steps import SessionRef, StepServices, append_events, model_step, tool_call
from adk_temporal.steps.compaction import compact_events
from adk_temporal.steps.node_step import node_step
from adk_temporal.steps.remote_step import remote_step

from .adapter import heartbeat, step_ref, translate_errors
from .routing import AppRouter

T = TypeVar("T")

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
        self._router = AppRouter()

    @activity.defn(name="adk_model_step")
    @translate_errors
    async def run(self, inp: ModelStepInput) -> ModelStepReply:
        """The model step (``adk_temporal.steps.model_step``) as a Temporal activity."""
        whole = _whole(inp)
        with _Timed(self._services, "model", whole.ref.agent_name) as timed:
            reply = await model_step(
                self._services,
                whole,
                step_ref(whole.ref),
                attempt=activity.info().attempt,
                heartbeat=heartbeat(),
            )
            if isinstance(reply, RouteStep):
                timed.skip()  # it did nothing: its time says nothing of the agent's steps
        return await self._routed(reply)

    async def _routed(self, reply: ModelStepReply) -> ModelStepReply:
        """``reply`` with where the run's steps go: a step of another app is routed, and an
        unnamed app's tree says whether to leave a queue named apps share."""
        if isinstance(reply, RouteStep):
            return await self._router.route(reply.app) if reply.app is not None else reply
        tree = getattr(reply, "tree", None)
        if tree is None or self._services.app_name is not None:
            return reply
        return reply.model_copy(update={"tree": await self._router.unnamed_tree(tree)})


class ToolCallActivity:
    """Runs one function call of an agent against the worker's services."""

    def __init__(self, services: StepServices) -> None:
        self._services = services
        self._router = AppRouter()

    @activity.defn(name="adk_tool_call")
    @translate_errors
    async def run(self, inp: ToolCallInput) -> ToolCallResult:
        """The tool call (``adk_temporal.steps.tool_call``) as a Temporal activity."""
        whole = _whole(inp)
        ref = step_ref(whole.ref)
        step = tool_call(
            self._services, whole, ref, attempt=activity.info().attempt, heartbeat=heartbeat()
        )
        with _Timed(self._services, "tool", whole.call.name):
            result = await _handed_back(self._router, ref, step)
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
        self._router = AppRouter()

    @activity.defn(name="adk_append_events")
    @translate_errors
    async def run(self, inp: AppendEventsInput) -> None:
        """The append step (``adk_temporal.steps.append_events``) as a Temporal activity."""
        whole = _whole(inp)
        ref = step_ref(whole.ref)
        await _handed_back(self._router, ref, append_events(self._services, whole, ref))


class CompactionActivity:
    """Summarises a session's older events into one compaction event; idempotent by id."""

    def __init__(self, services: StepServices) -> None:
        self._services = services
        self._router = AppRouter()

    @activity.defn(name="adk_compact")
    @translate_errors
    async def run(self, inp: CompactionInput) -> CompactionResult:
        """The compaction step (``adk_temporal.steps.compaction``) as a Temporal activity."""
        whole = _whole(inp)
        ref = step_ref(whole.ref)
        return await _handed_back(self._router, ref, compact_events(self._services, whole, ref))


async def _handed_back(router: AppRouter, ref: SessionRef, step: Awaitable[T]) -> T:
    """``step``'s result; a step of another app is handed back with where it goes."""
    try:
        return await step
    except UnknownAppError:
        raise await router.refusal(ref.key.app_name) from None


class _Timed:
    """Times a step for ``App.local_steps`` (a failed one too: a step that timed out is
    not short), unless told to :meth:`skip` it."""

    def __init__(self, services: StepServices, kind: StepKind, name: str) -> None:
        self._services = services
        self._kind: StepKind = kind
        self._name = name
        self._started = 0.0
        self._skipped = False

    def __enter__(self) -> _Timed:
        self._started = time.perf_counter()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._skipped:
            took = time.perf_counter() - self._started
            self._services.timings.record(self._kind, self._name, took)

    def skip(self) -> None:
        """Leave this step untimed."""
        self._skipped = True


def _whole(inp: StepInput) -> StepInput:
    """``inp`` with the ids and values a baseline run's workflow left out put back."""
    info = activity.info()
    return restored(inp, info.workflow_run_id or "", info.scheduled_time.timestamp())
