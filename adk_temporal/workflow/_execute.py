"""Running a node's code on the worker: the events it yields, its output and route.

Ports what ADK 2.13's ``NodeRunner`` (``google/adk/workflow/_node_runner.py``) and
``FunctionNode`` (``_function_node.py``) do with a node's yields: a value is the output
(at most one), ``RequestInput`` a pause, ``types.Content`` a message, ``None`` nothing;
the state written so far rides on each event; an output or route set on the context and
not yielded, and writes left over, go out in one last event; an exception becomes an error
event named after its class. Parameters are bound from state by name, ``node_input`` from
the edge (a message as its text where a ``str`` is wanted).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from google.genai import types
from pydantic import BaseModel, TypeAdapter

from ..errors import WorkflowConfigurationError
from ..events import Event, EventActions
from ._agent_nodes import ToolNode, tool_arguments
from ._context import Context
from ._nodes import BaseNode, FunctionNode, JoinNode, Node
from ._request_input import RequestInput, request_event

__all__ = ["NodeRun", "run_node_code"]


@dataclass
class NodeRun:
    """What one run of a node produced, its events not yet stamped or stored."""

    events: list[Event] = field(default_factory=list)
    output: Any = None
    route: Any = None
    requests: list[RequestInput] = field(default_factory=list)
    error: BaseException | None = None
    temp_delta: dict[str, Any] = field(default_factory=dict)


def _message_text(value: types.Content) -> str:
    return "".join(p.text for p in value.parts or [] if p.text)


def _coerce(value: Any, hint: Any) -> Any:
    """``value`` for a parameter annotated ``hint``: a message as its text (or its JSON),
    then pydantic's coercion (ADK's ``_coerce_param``)."""
    if hint is Any or hint is inspect.Parameter.empty:
        return value
    if isinstance(value, types.Content) and hint is not types.Content:
        text = _message_text(value)
        if hint is str or hint == str | None:
            value = text
        else:
            try:
                value = json.loads(text)
            except ValueError:
                value = text
    return TypeAdapter(hint).validate_python(value)


def _bind(node: FunctionNode, ctx: Context, node_input: Any) -> dict[str, Any]:
    """The function's arguments: the context, ``node_input``, the rest from state."""
    try:
        hints = get_type_hints(node.func)
    except Exception:  # unresolvable forward references: no coercion
        hints = {}
    kwargs: dict[str, Any] = {}
    for name, param in inspect.signature(node.func).parameters.items():
        if name == node.context_param:
            kwargs[name] = ctx
        elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        elif name == "node_input":
            kwargs[name] = _coerce(node_input, hints.get(name, Any))
        elif name in ctx.state:
            kwargs[name] = _coerce(ctx.state[name], hints.get(name, Any))
        elif param.default is not param.empty:
            kwargs[name] = param.default
        else:
            raise WorkflowConfigurationError(
                f'Missing value for parameter "{name}" of function "{node.name}". It was not '
                "found in state and has no default value."
            )
    return kwargs


async def _items(node: BaseNode, ctx: Context, node_input: Any) -> AsyncIterator[Any]:
    """What the node's code yields, one item at a time."""
    if isinstance(node, JoinNode):
        yield node_input
    elif isinstance(node, ToolNode):
        yield await node.tool.call(tool_arguments(node.tool, ctx, node_input), ctx)
    elif isinstance(node, Node):
        async for item in node.run_node_impl(ctx=ctx, node_input=node_input):
            yield item
    elif isinstance(node, FunctionNode):
        async for item in _function_items(node, ctx, node_input):
            yield item
    else:
        raise WorkflowConfigurationError(
            f"node {node.name!r} is a {type(node).__name__}, which runs only as a node of a "
            "graph's edges, not with ctx.run_node"
        )


async def _function_items(node: FunctionNode, ctx: Context, node_input: Any) -> AsyncIterator[Any]:
    func: Callable[..., Any] = node.func
    kwargs = _bind(node, ctx, node_input)
    if inspect.isasyncgenfunction(func):
        async for item in func(**kwargs):
            yield item
    elif inspect.isgeneratorfunction(func):
        for item in func(**kwargs):
            yield item
    elif inspect.iscoroutinefunction(func):
        yield await func(**kwargs)
    else:
        # A plain function may block: off the loop, so a timeout or a heartbeat still runs.
        yield await asyncio.to_thread(func, **kwargs)


def _as_event(item: Any) -> Event | RequestInput | None:
    """One yielded item as an event (ADK's ``FunctionNode._to_event``)."""
    if item is None or isinstance(item, Event | RequestInput):
        return item
    if isinstance(item, types.Content):
        return Event(content=item)
    if isinstance(item, BaseModel):
        item = item.model_dump()
    return Event(output=item)


class _Tracker:
    """Collects a run's events, output and route as ADK's NodeRunner tracks them."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.run = NodeRun()

    def add(self, item: Any) -> None:
        event = _as_event(item)
        if isinstance(event, RequestInput):
            self.run.requests.append(event)
            event = request_event(event)
        elif event is None:
            if not self.ctx.actions.state_delta:
                return
            event = Event()
        if event.output is not None:
            self.ctx.output = event.output
            self.ctx.output_emitted = True
        if event.actions.route is not None:
            self.ctx.route = event.actions.route
            self.ctx.route_emitted = True
        self._emit(event)

    def _emit(self, event: Event) -> None:
        delta = self.ctx.actions.state_delta
        if delta:
            merged = {**delta, **event.actions.state_delta}
            event.actions = event.actions.model_copy(update={"state_delta": merged})
            self._keep_temp(delta)
            delta.clear()
        self.run.events.append(event)

    def _keep_temp(self, delta: dict[str, Any]) -> None:
        self.run.temp_delta.update({k: v for k, v in delta.items() if k.startswith("temp:")})

    def finish(self) -> NodeRun:
        ctx = self.ctx
        deferred = ctx.output is not None and not ctx.output_emitted
        route = ctx.route is not None and not ctx.route_emitted
        if deferred or route or ctx.actions.state_delta:
            actions = EventActions(route=ctx.route if route else None)
            self._emit(Event(output=ctx.output if deferred else None, actions=actions))
        self.run.output = ctx.output
        self.run.route = ctx.route
        return self.run

    def fail(self, error: BaseException) -> NodeRun:
        status = getattr(error, "status", None)
        code = status if isinstance(status, str) else type(error).__name__
        self._emit(Event(error_code=code, error_message=str(error)))
        self.run.error = error
        return self.run


async def run_node_code(node: BaseNode, ctx: Context, node_input: Any) -> NodeRun:
    """Run ``node``'s code once with ``ctx`` and ``node_input``.

    Returns:
        The run's events (not yet stamped with ids, author or path), output and route, the
        pauses it raised, or the error it raised (recorded as its last event).
    """
    tracker = _Tracker(ctx)
    try:
        async for item in _items(node, ctx, node_input):
            tracker.add(item)
    except asyncio.CancelledError:
        raise
    except Exception as err:
        return tracker.fail(err)
    return tracker.finish()
