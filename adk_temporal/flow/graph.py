"""``GraphRun``: one run of an ADK 2 graph workflow, as engine-neutral flow code.

The scheduling of ADK 2.13's ``Workflow._run_impl`` (``google/adk/workflow/_workflow.py``)
over an :class:`~adk_temporal.flow.executor.Executor`: triggers are buffered per node in
arrival order and started as far as ``max_concurrency`` allows; finished nodes are handled
in the order they were started, so the outcome does not depend on which finished first; a
join fires once every predecessor has arrived since it last fired; a node's output goes
along the edges its route selects, with a sub-branch per target when it fans out. Every
node that does work is a step (``Executor.node_step``) or a nested run of this class; a
node's retries wait on the engine's timer (durable on Temporal), its timeout is a timer
raced against the step. The flow holds names, run counters and small values only: a large
output travels as the id of its stored event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..events import Event, EventActions, NodeInfo
from . import gates
from .executor import Executor
from .graph_messages import (
    InlineValue,
    JoinedValue,
    NodeFailed,
    NodeRan,
    NodeStepInput,
    NodeStepResult,
    NodeValue,
)
from .graph_spec import DEFAULT_ROUTE, GraphSpec, NodeSpec
from .graph_state import GraphCarry, Loop, NodeRun, NodeStatus, Trigger
from .messages import AppendEventsInput, InvocationRef
from .node_retry import retry_delay, should_retry
from .pauses import open_pause, take_answers
from .requests import RequestBook

__all__ = ["GraphHost", "GraphOutcome", "GraphRun"]

_TIMEOUT_NAMES = ["NodeTimeoutError", "AdkError", "Exception", "BaseException"]
_CONFIGURATION_NAMES = ["WorkflowConfigurationError", "ValueError", "Exception", "BaseException"]


@dataclass
class GraphHost:
    """What a graph run shares with its invocation: the engine, identity, ``temp:`` state,
    the book its pauses' requests are answered in, and how it runs an LLM agent node (the
    invocation's own step loop: ``run_agent(agent, node, path, branch, input)``)."""

    executor: Executor
    ref: InvocationRef
    temp_state: dict[str, Any]
    book: RequestBook
    run_agent: Callable[[str, str, str, str, NodeValue], Awaitable[GraphOutcome]]
    hand_over: Callable[[GraphCarry], Awaitable[None]]
    """Continue the invocation in a fresh run from the root graph's state (never returns)."""
    nodes: dict[str, NodeStatus] = field(default_factory=dict)
    """Each node's status by its name below the root (``inner/step``); a node not listed
    is pending."""


@dataclass
class GraphOutcome:
    """How a node (or a whole graph) ended: its output, route, or the error it failed on."""

    output: NodeValue | None = None
    route: Any = None
    error: NodeFailed | None = None
    branch: str = ""


def common_branch(branches: list[str]) -> str:
    """The dot-separated prefix every branch shares (a join's branch)."""
    split = [b.split(".") if b else [] for b in branches]
    common: list[str] = []
    for segments in zip(*split, strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    return ".".join(common)


def _next_nodes(spec: GraphSpec, source: str, route: Any) -> list[str]:
    """The targets ``source``'s output goes to under ``route`` (ADK's
    ``get_next_pending_nodes``): unrouted edges always, matching routed edges, and the
    default edges only when no routed edge matched."""
    chosen = set(route) if isinstance(route, list) else {route}
    found: list[str] = []
    defaults: list[str] = []
    matched = False
    for edge in spec.edges:
        if edge.source != source:
            continue
        if edge.routes is None:
            found.append(edge.target)
        elif edge.routes == [DEFAULT_ROUTE]:
            defaults.append(edge.target)
        elif not chosen.isdisjoint(edge.routes):
            found.append(edge.target)
            matched = True
    return found if matched else found + defaults


class GraphRun:
    """Runs one graph (the root workflow, or one nested in it) to its terminal output.

    Args:
        host: The invocation's engine, identity and ``temp:`` state.
        spec: The graph.
        names: The workflows from the root down to this one.
        path: This run's node path (``wf@1``, ``wf@1/inner@1``).
        branch: The branch this graph runs on.
        output_for: The runs a terminal node's output is also the output of (this one,
            then each enclosing run it finishes).
    """

    def __init__(
        self,
        host: GraphHost,
        spec: GraphSpec,
        *,
        names: list[str],
        path: str,
        branch: str = "",
        output_for: list[str] | None = None,
    ) -> None:
        self._host = host
        self._exec = host.executor
        self._spec = spec
        self._names = names
        self._path = path
        self._branch = branch
        self._output_for = output_for if output_for is not None else [path]
        self._loop = Loop()
        self._handing_over = False

    async def run(self, node_input: NodeValue) -> GraphOutcome:
        """Run the graph from ``START`` with ``node_input``; its terminal output, or the
        error of the first node that failed for good."""
        self._seed(node_input)
        return await self._to_the_end()

    async def resume(self, carried: GraphCarry) -> GraphOutcome:
        """Go on from where an earlier run of the invocation handed over: its paused nodes
        wait for their answers again, the rest is scheduled as it was."""
        self._loop = Loop.restored(carried)
        self._host.nodes.update(carried.statuses)
        for pause in carried.paused:
            run, waiting = pause.run, pause.waiting
            self._loop.running[run.name] = asyncio.ensure_future(self._waiting(run, waiting))
        return await self._to_the_end()

    async def _to_the_end(self) -> GraphOutcome:
        error = await self._schedule_all()
        if error is not None:
            return GraphOutcome(error=error, branch=self._branch)
        outputs = [self._loop.outputs[n] for n in self._spec.terminals if n in self._loop.outputs]
        if len(outputs) > 1:
            return GraphOutcome(error=await self._too_many_outputs(len(outputs)))
        return GraphOutcome(output=outputs[0] if outputs else None, branch=self._branch)

    def _seed(self, node_input: NodeValue) -> None:
        starts = [e for e in self._spec.edges if e.source == "__START__"]
        for edge in starts:
            if self._spec.node(edge.target).joins:
                self._loop.outputs["__START__"] = node_input
                self._loop.completed.add("__START__")
                self._arrive(edge.target, "__START__")
                continue
            trigger = Trigger(input=node_input, use_sub_branch=len(starts) > 1)
            self._loop.triggers.setdefault(edge.target, []).append(trigger)

    async def _schedule_all(self) -> NodeFailed | None:
        """Start what is ready, handle what finished, until nothing runs (ADK's
        ``_run_loop``); the first error stops the graph once the finished are handled."""
        loop = self._loop
        while True:
            if self._may_hand_over():
                await self._hand_over()
            self._start_ready()
            if not loop.running:
                return None
            self._exec.status_changed()
            try:
                await asyncio.wait(list(loop.running.values()), return_when=asyncio.FIRST_COMPLETED)
                error = self._handle_finished()
            except BaseException:
                # A step that failed for good, a hand-over, or the invocation cancelled:
                # nothing runs on.
                await self._stop()
                raise
            if error is not None:
                self._exec.status_changed()
                await self._stop()
                return error

    def _may_hand_over(self) -> bool:
        """Whether the root graph hands over now: something is left to do, every node that
        runs waits for answers (a node's step is never cut), and the engine asks for it.
        Runs recorded before graphs handed over never do (:data:`gates.GRAPH_HAND_OVER`)."""
        loop = self._loop
        if len(self._names) > 1 or not (loop.triggers or loop.running):
            return False
        if any(name not in loop.paused for name in loop.running):
            return False
        return self._exec.should_hand_over() and self._exec.patched(gates.GRAPH_HAND_OVER)

    async def _hand_over(self) -> None:
        """Hand the graph's state to a fresh run. Its paused nodes stop looking at answers
        first: one arriving meanwhile is carried in the book, and taken by the next run."""
        self._handing_over = True
        read = {e.source for e in self._spec.edges if self._spec.node(e.target).joins}
        carried = self._loop.carry(read | set(self._spec.terminals), self._host.nodes)
        await self._host.hand_over(carried)

    def _handle_finished(self) -> NodeFailed | None:
        """Handle the finished nodes in start order, never completion order (the same on
        every replay and engine); the first error among them."""
        loop = self._loop
        error: NodeFailed | None = None
        for name in [n for n, t in loop.running.items() if t.done()]:
            outcome = loop.running.pop(name).result()
            if outcome.error is not None:
                self._status(name, "failed")
                error = error or outcome.error
            else:
                self._status(name, "done")
                self._completed(name, outcome)
        return error

    def _status(self, name: str, status: NodeStatus) -> None:
        """Record where node ``name`` of this graph stands, for ``show`` and the console."""
        self._host.nodes[self._key(name)] = status

    def _key(self, name: str) -> str:
        """Node ``name`` of this graph, named below the root graph (``inner/step``)."""
        return "/".join([*self._names[1:], name])

    async def _stop(self) -> None:
        """Cancel the nodes still running after another failed, and wait for them."""
        tasks = list(self._loop.running.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._loop.running.clear()

    def _start_ready(self) -> None:
        loop = self._loop
        for name in list(loop.triggers):
            if name in loop.running:
                continue
            limit = self._spec.max_concurrency
            if limit is not None and limit > 0 and len(loop.running) >= limit:
                break
            queue = loop.triggers[name]
            trigger = queue.pop(0)
            if not queue:
                del loop.triggers[name]
            loop.completed.discard(name)
            self._status(name, "running")
            loop.running[name] = asyncio.ensure_future(self._node(name, trigger))

    def _completed(self, name: str, outcome: GraphOutcome) -> None:
        """Record a node's output and send it along the edges its route selects."""
        spec = self._spec.node(name)
        if spec.wait_for_output and outcome.output is None and outcome.route is None:
            return
        loop = self._loop
        loop.completed.add(name)
        if outcome.output is not None:
            loop.outputs[name] = outcome.output
        else:
            loop.outputs.pop(name, None)
        loop.branches[name] = outcome.branch
        targets = _next_nodes(self._spec, name, outcome.route)
        for target in targets:
            if self._spec.node(target).joins:
                self._arrive(target, name)
                continue
            value = outcome.output if outcome.output is not None else InlineValue(kind="inline")
            trigger = Trigger(input=value, use_sub_branch=len(targets) > 1, branch=outcome.branch)
            loop.triggers.setdefault(target, []).append(trigger)

    def _arrive(self, join: str, source: str) -> None:
        """A predecessor of ``join`` arrived; fire the join once all have (ADK's
        ``_buffer_barrier_trigger``)."""
        loop = self._loop
        arrived = loop.arrivals.setdefault(join, set())
        arrived.add(source)
        predecessors = list(dict.fromkeys(e.source for e in self._spec.edges if e.target == join))
        ready = all(
            p == "__START__" or (p in arrived and p in loop.completed) for p in predecessors
        )
        if not ready:
            return
        loop.arrivals.pop(join, None)
        values = {p: loop.outputs.get(p, InlineValue(kind="inline")) for p in predecessors}
        branch = common_branch([loop.branches.get(p, "") for p in predecessors])
        trigger = Trigger(input=JoinedValue(kind="joined", values=values), branch=branch)
        loop.triggers.setdefault(join, []).append(trigger)

    # ------------------------------------------------------------------ a node

    def _place(self, name: str, trigger: Trigger) -> tuple[str, str, str]:
        """A new run of ``name``: its run id, node path and branch (ADK's NodeRunner)."""
        runs = self._loop.runs[name] = self._loop.runs.get(name, 0) + 1
        run_id = str(runs)
        base = trigger.branch if trigger.branch is not None else self._branch
        branch = base
        if trigger.use_sub_branch:
            branch = f"{base}.{name}@{run_id}" if base else f"{name}@{run_id}"
        return run_id, f"{self._path}/{name}@{run_id}", branch

    async def _node(self, name: str, trigger: Trigger) -> GraphOutcome:
        spec = self._spec.node(name)
        _, path, branch = self._place(name, trigger)
        terminal = name in self._spec.terminals
        output_for = [path, *self._output_for] if terminal else [path]
        if spec.kind == "workflow":
            assert spec.graph is not None
            nested = GraphRun(
                self._host,
                spec.graph,
                names=[*self._names, name],
                path=path,
                branch=branch,
                output_for=output_for if terminal else [path],
            )
            return await nested.run(trigger.input)
        if spec.kind == "agent":
            assert spec.agent is not None
            key = self._key(name)
            outcome = await self._host.run_agent(spec.agent, key, path, branch, trigger.input)
        else:
            run = NodeRun(
                name=name, path=path, branch=branch, output_for=output_for, input=trigger.input
            )
            outcome = await self._attempts(spec, run)
        outcome.branch = branch
        return outcome

    async def _waiting(self, run: NodeRun, waiting: list[str]) -> GraphOutcome:
        """A carried node run, going on from its wait for answers."""
        outcome = await self._attempts(self._spec.node(run.name), run, waiting)
        outcome.branch = run.branch
        return outcome

    async def _attempts(
        self, spec: NodeSpec, run: NodeRun, waiting: list[str] | None = None
    ) -> GraphOutcome:
        """Run a node's step until it succeeds or fails for good under its ``RetryConfig``;
        the wait between attempts is the engine's timer. ``waiting``: the run starts in
        its wait for these requests (a carried pause)."""
        while True:
            if waiting is None:
                result = await self._step(spec, run)
                if isinstance(result, NodeRan) and result.requests:
                    waiting = self._open(run, result)
            if waiting is not None:
                # ADK: a node that reruns on resume does so once any answer is in, with
                # the answers so far; another waits for all, the answer its output.
                taken = await self._pause(spec, run, waiting)
                waiting = None
                if not spec.rerun_on_resume:
                    value = next(iter(taken.values())) if len(taken) == 1 else taken
                    return GraphOutcome(output=InlineValue(kind="inline", value=value))
                run.answers.update(taken)
                continue
            if isinstance(result, NodeRan):
                self._host.temp_state.update(result.temp_delta)
                return GraphOutcome(output=result.output, route=result.route)
            if not should_retry(spec.retry, result.error_names, run.attempt):
                return GraphOutcome(error=result)
            delay = retry_delay(spec.retry, run.attempt, self._draw())
            if delay > 0:
                await self._exec.wait_until(lambda: False, timeout=delay)
            run.attempt += 1

    def _open(self, run: NodeRun, result: NodeRan) -> list[str]:
        """Open the requests a node's run raised (their events are stored); their ids."""
        book = self._host.book
        return open_pause(book, result.requests, self._names[-1], run.branch, self._exec.now())

    async def _pause(self, spec: NodeSpec, run: NodeRun, ids: list[str]) -> dict[str, Any]:
        """Wait until the node's rule is met (any answer for a node that reruns, all for
        one that does not), store the answers as the user's function responses, and return
        them as ADK hands them over (``{"result": x}`` unwrapped)."""
        book, host = self._host.book, self._host
        self._loop.paused[run.name] = (run, ids)
        self._status(run.name, "waiting")
        self._exec.status_changed()

        def ready() -> bool:
            done = [book.answered([i]) for i in ids]
            met = any(done) if spec.rerun_on_resume else all(done)
            return met and not self._handing_over

        try:
            await self._exec.wait_until(ready)
        finally:
            del self._loop.paused[run.name]
        self._status(run.name, "running")
        ref = host.ref.model_copy(update={"branch": run.branch})
        event, taken = take_answers(book, ids, ref, self._exec)
        await self._exec.append_events(
            AppendEventsInput(ref=ref, events=[event]), summary=f"{spec.name} · answer"
        )
        self._exec.status_changed()
        return taken

    def _draw(self) -> float:
        """A uniform number in [0, 1) from the engine's replayed ids."""
        return int(self._exec.new_id().replace("-", ""), 16) / 2**128

    async def _step(self, spec: NodeSpec, run: NodeRun) -> NodeStepResult:
        inp = NodeStepInput(
            ref=self._host.ref.model_copy(update={"branch": run.branch}),
            names=[*self._names, spec.name],
            path=run.path,
            author=self._names[-1],
            input=run.input,
            event_id=self._exec.new_id(),
            timestamp=self._exec.now(),
            attempt=run.attempt,
            output_for=run.output_for,
            temp_state=dict(self._host.temp_state),
            resume_inputs=run.answers,
        )
        summary = f"{self._names[-1]} · {spec.name}"
        if spec.timeout is None:
            return await self._exec.node_step(inp, summary=summary)
        task = asyncio.ensure_future(self._exec.node_step(inp, summary=summary))
        if await self._exec.wait_until(task.done, timeout=spec.timeout):
            return task.result()
        task.cancel()
        await asyncio.wait([task])
        message = f"Node '{spec.name}' timed out after {spec.timeout} seconds."
        await self._error_event(inp.author, run.path, run.branch, "NodeTimeoutError", message)
        return NodeFailed(
            kind="failed",
            error_type="NodeTimeoutError",
            error_names=_TIMEOUT_NAMES,
            message=message,
        )

    async def _error_event(
        self, author: str, path: str, branch: str, code: str, message: str
    ) -> None:
        event = Event(
            id=self._exec.new_id(),
            invocation_id=self._host.ref.invocation_id,
            author=author,
            branch=branch,
            actions=EventActions(),
            timestamp=self._exec.now(),
            error_code=code,
            error_message=message,
            node_info=NodeInfo(path=path),
        )
        ref = self._host.ref.model_copy(update={"branch": branch})
        await self._exec.append_events(
            AppendEventsInput(ref=ref, events=[event]), summary=f"{author} · {code}"
        )

    async def _too_many_outputs(self, count: int) -> NodeFailed:
        """ADK's rule: a workflow has at most one terminal output; the error is stored."""
        name = self._names[-1]
        message = (
            f"Workflow {name}: multiple terminal nodes produced output ({count}). A workflow "
            "must have at most one terminal output."
        )
        code = "WorkflowConfigurationError"
        await self._error_event(name, self._path, self._branch, code, message)
        return NodeFailed(
            kind="failed", error_type=code, error_names=_CONFIGURATION_NAMES, message=message
        )


def output_text(value: NodeValue | None) -> str:
    """A graph's output as the invocation's final text: a string as it is, other inline
    values as JSON, a stored one as nothing (its event holds it)."""
    if not isinstance(value, InlineValue) or value.value is None:
        return ""
    if isinstance(value.value, str):
        return value.value
    return json.dumps(value.value, default=str)
