"""The node step: run one node of a graph workflow once, and store what it produced.

The node is found in the serving app by its workflow names; its input is read back from
what the flow sent (a stored output is read from its event, the user's message from the
session). The run's events are stamped with ADK's author, node path, branch and
``output_for``, and appended under ids derived from the flow's: a step retried after its
append (its worker died before reporting) finds them stored and answers from them without
running the node again. A child node the code runs with ``ctx.run_node`` is stored as it
finishes and, when the parent runs again, answered from the store.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..budgets import json_size
from ..errors import UnknownAgentError
from ..events import REQUEST_INPUT_FUNCTION_NAME, Event, NodeInfo
from ..flow.graph_messages import (
    INLINE_VALUE_BYTES,
    InlineValue,
    NodeFailed,
    NodeRan,
    NodeRequest,
    NodeStepInput,
    NodeStepResult,
    NodeValue,
    StoredValue,
)
from ..workflow import Context, RequestInput, Workflow
from ..workflow._build import build_node
from ..workflow._execute import NodeRun, run_node_code
from ..workflow._nodes import BaseNode
from .agent_node import edge_value
from .heartbeat import Heartbeat, heartbeating
from .ref import SessionRef
from .services import StepServices
from .session_cache import LoadedSession
from .writes import append_to_session

__all__ = ["node_step"]


def _event_id(base: str, n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{base}/{n}"))


class _Run:
    """One node step under way: the session it read and how it stamps and stores events."""

    def __init__(self, services: StepServices, inp: NodeStepInput, ref: SessionRef) -> None:
        self.services = services
        self.inp = inp
        self.ref = ref
        self.children: dict[str, int] = {}
        self.state: dict[str, Any] = {}

    async def loaded(self) -> LoadedSession:
        return await self.services.load_session(self.ref)

    def stamp(self, run: NodeRun, path: str, output_for: list[str], base: str) -> list[Event]:
        events: list[Event] = []
        for n, event in enumerate(run.events):
            info = NodeInfo(path=path, output_for=output_for if event.output is not None else [])
            events.append(
                event.model_copy(
                    update={
                        "id": _event_id(base, n),
                        "invocation_id": self.ref.invocation_id,
                        "author": self.inp.author,
                        "branch": event.branch or self.ref.branch,
                        "timestamp": self.inp.timestamp,
                        "node_info": info,
                    }
                )
            )
        return events

    async def value(self, value: NodeValue) -> Any:
        """The value an edge carries, read back where it is stored."""
        return edge_value(value, await self.loaded(), self.ref)

    async def run_child(
        self, parent: Context, node_like: Any, node_input: Any, run_id: str | None
    ) -> Any:
        """``ctx.run_node``: the child's stored output if it finished before, else run it
        now and store its events at once (ADK's dynamic node scheduler)."""
        child = build_node(node_like)
        if run_id is None:
            count = self.children[f"{parent.node_path}/{child.name}"] = (
                self.children.get(f"{parent.node_path}/{child.name}", 0) + 1
            )
            run_id = str(count)
        path = f"{parent.node_path}/{child.name}@{run_id}"
        loaded = await self.loaded()
        for event in loaded.stored.events:
            if (
                event.node_info is not None
                and event.node_info.path == path
                and event.output is not None
            ):
                return event.output
        ctx = self.context(child, path, parent.resume_inputs)
        run = await run_node_code(child, ctx, node_input)
        await self.store(self.stamp(run, path, [path], f"{self.inp.event_id}/{path}"))
        if run.error is not None:
            raise run.error
        return run.output

    def context(self, node: BaseNode, path: str, resume_inputs: dict[str, Any]) -> Context:
        return Context(
            state=self.state,
            node_path=path,
            invocation_id=self.ref.invocation_id,
            attempt_count=self.inp.attempt,
            resume_inputs=resume_inputs,
            rerun_on_resume=node.rerun_on_resume,
            run_child=self.run_child,
        )

    async def store(self, events: list[Event]) -> None:
        if events:
            await append_to_session(self.services, self.ref, events)


def _find(services: StepServices, names: list[str]) -> BaseNode:
    root = services.agents[names[0]]
    if not isinstance(root, Workflow):
        raise UnknownAgentError(f"agent {names[0]!r} is a {type(root).__name__}, not a Workflow")
    try:
        return root.find(names[1:])
    except KeyError:
        raise UnknownAgentError(
            f"workflow {names[0]!r} has no node {'/'.join(names[1:])!r} on this worker"
        ) from None


def _result(run: NodeRun, events: list[Event]) -> NodeStepResult:
    if run.error is not None:
        names = [c.__name__ for c in type(run.error).__mro__ if c is not object]
        return NodeFailed(
            kind="failed", error_type=names[0], error_names=names, message=str(run.error)
        )
    output: NodeValue | None = None
    if run.output is not None:
        inline = json_size(run.output, "the node's output") <= INLINE_VALUE_BYTES
        holder = next(e for e in reversed(events) if e.output is not None)
        output = (
            InlineValue(kind="inline", value=run.output)
            if inline
            else StoredValue(kind="stored", event_id=holder.id)
        )
    requests = [
        NodeRequest(
            interrupt_id=r.interrupt_id,
            message=r.message or "",
            payload=r.payload,
            response_schema=r.response_schema,
        )
        for r in run.requests
    ]
    return NodeRan(
        kind="ran", output=output, route=run.route, temp_delta=run.temp_delta, requests=requests
    )


def _replayed(stored: list[Event]) -> NodeRun:
    """What an earlier attempt of the same step stored, as its run."""
    run = NodeRun(events=stored)
    for event in stored:
        if event.output is not None:
            run.output = event.output
        if event.actions.route is not None:
            run.route = event.actions.route
        if event.error_code is not None:
            run.error = RuntimeError(event.error_message or event.error_code)
        for call in event.function_calls():
            if call.name == REQUEST_INPUT_FUNCTION_NAME and call.id:
                run.requests.append(RequestInput(interrupt_id=call.id, **_request_args(call.args)))
    return run


def _request_args(args: dict[str, Any] | None) -> dict[str, Any]:
    args = args or {}
    return {key: args.get(key) for key in ("payload", "message", "response_schema")}


async def node_step(
    services: StepServices,
    inp: NodeStepInput,
    ref: SessionRef,
    *,
    heartbeat: Heartbeat | None = None,
) -> NodeStepResult:
    """Run node ``inp.names`` once as run ``inp.path`` and store its events.

    Args:
        services: What the step runs against.
        inp: The node, its input and the ids its events take.
        ref: The session and invocation (``ref.branch``: the run's branch).
        heartbeat: Called while the node runs, when the engine watches the step.

    Raises:
        UnknownAgentError: The worker serves no such workflow or node.
    """
    node = _find(services, inp.names)
    step = _Run(services, inp, ref)
    loaded = await step.loaded()
    first = _event_id(inp.event_id, 0)
    if first in loaded.stored.ids:
        stored: list[Event] = []
        while (found := loaded.stored.ids.get(_event_id(inp.event_id, len(stored)))) is not None:
            stored.append(found)
        return _result(_replayed(stored), stored)
    step.state = {**loaded.session.state, **inp.temp_state}
    node_input = await step.value(inp.input)
    ctx = step.context(node, inp.path, inp.resume_inputs)
    async with heartbeating(heartbeat):
        run = await run_node_code(node, ctx, node_input)
    events = step.stamp(run, inp.path, inp.output_for, inp.event_id)
    await step.store(events)
    return _result(run, events)
