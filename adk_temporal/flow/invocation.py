"""``InvocationFlow``: one ADK invocation as plain async code over an :class:`Executor`.

For an LLM agent it runs the step loop (a model step, then one tool step per function
call, concurrently), merges the tools' deltas, records pauses and waits for the
confirmations and inputs that answer them, then re-dispatches the paused calls with the
same function-call ids. Sequential and parallel agents, transfers, escalations and agents
used as tools are orchestrated here too, in the same invocation. The flow holds only ids,
the current step's new events and the open requests, never the conversation.

Everything engine-specific — where steps run, how waiting and ids work, when a long run
hands over to a fresh one — is the executor's, so Temporal and the in-process runner run
exactly this code and store the same events.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from google.genai import types

from adk_temporal.budgets import Budgets
from adk_temporal.confirmation import (
    build_confirmation_request_event,
    call_digest,
)
from adk_temporal.errors import InvocationErrorCode, StepFailedError
from adk_temporal.events import (
    Event,
    EventActions,
    InputRequest,
)
from adk_temporal.merge import merge_actions
from adk_temporal.resume import build_input_request_event
from adk_temporal.run_config import RunConfig
from adk_temporal.state import TEMP_PREFIX
from adk_temporal.usage import TokenGrant, TokenUsage

from . import gates
from .budget_requests import BUDGET_REQUEST_PREFIX, allowed, budget_request
from .compacting import CompactionInput
from .doubt_requests import (
    DOUBT_REQUEST_PREFIX,
    compensating,
    doubt_request,
    failed_in_doubt,
    resolution_of,
)
from .executor import Executor
from .graph import GraphHost, GraphOutcome, GraphRun, output_text
from .graph_messages import MessageValue, NodeFailed, NodeValue, StoredValue
from .graph_spec import GraphSpec
from .graph_state import GraphCarry, NodeStatus
from .messages import (
    AdkStatus,
    AgentSpec,
    AppendEventsInput,
    CallsStep,
    DelegateStep,
    EndedStep,
    ErrorStep,
    FinalStep,
    InDoubtResult,
    InlineResult,
    InvocationCarry,
    InvocationRef,
    InvocationResult,
    InvocationStatus,
    MergedResponses,
    ModelStepInput,
    ModelStepResult,
    OverBudgetStep,
    PendingConfirmation,
    PendingEvent,
    PendingInput,
    PendingRequest,
    PlannedCall,
    RanStep,
    ResumeInput,
    StagedResponse,
    StagedResult,
    ToolCallInput,
    ToolCallResult,
    WorkflowPosition,
    stage_id,
)
from .remote import (
    RemoteAnswer,
    RemoteAsked,
    RemoteDone,
    RemoteFailed,
    RemoteQuestion,
    RemoteStepInput,
    RemoteWorking,
    remote_request,
)
from .replies import Answers, answered_metadata, reply_part
from .requests import RequestBook

__all__ = ["FLOW_CHANGES", "InvocationFlow"]

_FUNCTION_RESPONSE_SCHEMA: dict[str, Any] = {"type": "object"}
"""What answers a long-running call: a function response is a JSON object."""

FLOW_CHANGES = frozenset(
    {
        gates.TOOL_FAILURES_REACH_THE_MODEL,
        gates.RECORD_CANCELLATION,
        gates.CARRY_POSITIONS,
        gates.FOREIGN_CONFIRMATIONS,
        gates.ADK_ESCALATION,
        gates.PARALLEL_FAILURE,
        gates.KEEP_CANCELLED_OUTCOMES,
        gates.COMPACTION,
    }
)
"""Every gate the flow asks for (:mod:`.gates`), for the executor's baselines."""


@dataclass
class _NodeTurn:
    """An LLM agent's run as a graph node: its node path, its input, and its last model
    event (the node's output once it answered)."""

    path: str
    key: str
    """The node's name below the root graph, as its status is published."""
    input: NodeValue
    answer: str = ""


@dataclass
class _Frame:
    """Where an agent runs, and what its run recorded.

    ``outer`` lists the sequential and loop agents around the agent, with where each
    stood, outermost first: the invocation may hand over to a fresh run from such a
    position, since the next run can re-enter it. It is ``None`` inside a parallel branch
    or an agent tool, whose concurrent or nested position cannot be carried.
    """

    agent: str
    branch: str = ""
    isolation_scope: str = ""
    outer: tuple[WorkflowPosition, ...] | None = ()
    actions: list[EventActions] = field(default_factory=list)
    node: _NodeTurn | None = None
    """Set when the agent runs as a node of a graph workflow."""

    def moved(self, agent: str, *, branch: str | None = None) -> _Frame:
        """A frame for ``agent`` on this level, collecting its own actions."""
        return _Frame(
            agent,
            self.branch if branch is None else branch,
            self.isolation_scope,
            self.outer,
        )

    def nested(
        self,
        agent: str,
        *,
        position: WorkflowPosition | None = None,
        branch: str | None = None,
        isolation_scope: str | None = None,
    ) -> _Frame:
        """A frame for ``agent`` one level down, collecting its own actions: inside a
        sequence or loop at ``position``, else in a branch or scope that is not carried."""
        carried = position is not None and self.outer is not None
        return _Frame(
            agent,
            self.branch if branch is None else branch,
            self.isolation_scope if isolation_scope is None else isolation_scope,
            (*(self.outer or ()), position) if carried and position is not None else None,
        )


@dataclass
class _Outcome:
    """How an agent's run ended."""

    text: str = ""
    ended: bool = False
    escalated: bool = False
    error: str | None = None


def _raised(task: asyncio.Future[_Outcome]) -> bool:
    """Whether a finished branch raised (was not cancelled)."""
    return not task.cancelled() and task.exception() is not None


def _failed(task: asyncio.Future[_Outcome]) -> bool:
    """Whether a finished branch failed: it raised, or its outcome is an error."""
    return _raised(task) or (not task.cancelled() and task.result().error is not None)


def _child_branch(branch: str, parent: str, sub: str) -> str:
    """A parallel sub-agent's branch: ``<parent>.<sub>``, prefixed by the current branch."""
    own = f"{parent}.{sub}"
    return f"{branch}.{own}" if branch else own


@dataclass
class _Responses:
    """A step's function responses: the event to store, and their merged actions."""

    event: MergedResponses
    actions: EventActions

    def has_requests(self, call_ids: Collection[str]) -> bool:
        """True when one of the step's calls (``call_ids``) asked for a confirmation, or a
        call asked for an input."""
        actions = self.actions
        confirmations = actions.requested_tool_confirmations
        return bool(actions.requested_inputs) or any(i in call_ids for i in confirmations)


class InvocationFlow:
    """Runs one invocation of one agent (and its sub-agents) in one session.

    Args:
        executor: Runs the steps and provides waiting, ids and time.
        ref: The invocation's identity as steps receive it (agent = the starting agent).
        config: The invocation's limits and switches (steps see them as ``ctx.run_config``).
        budgets: The size limits of what enters the invocation.
        book: The request book answers are delivered to; the executor may have to accept
            answers before the flow starts, so it can pass its own.
    """

    def __init__(
        self,
        executor: Executor,
        ref: InvocationRef,
        *,
        config: RunConfig | None = None,
        budgets: Budgets | None = None,
        book: RequestBook | None = None,
    ) -> None:
        self._exec = executor
        self._config = config or RunConfig()
        self._base = ref
        self._budgets = budgets or Budgets()
        self.book = book if book is not None else RequestBook(self._budgets)
        self.step = 0
        self.final_text = ""
        self.error: str | None = None
        self._ended_as: AdkStatus | None = None
        self._temp_state: dict[str, Any] = {}
        self._trees: dict[str, AgentSpec] = {}
        self.usage = TokenUsage()
        self._choose_agent = not self._config.pin_agent
        self._continued_by: str | None = None
        self._kept: list[PendingEvent] = []
        """What a cancellation found produced but not stored yet, stored before its event."""
        self._grants: list[TokenGrant] = []
        """Budget grants answered and not yet recorded by a model step."""
        self.graph: GraphSpec | None = None
        """The graph workflow the invocation runs, once it started it."""
        self.graph_nodes: dict[str, NodeStatus] = {}
        """Each node of ``graph`` that ran, by its name below the root, and where it stands."""
        self.stop_reason: str | None = None
        """Why the engine stops the invocation, when it does for a reason of its own (a new
        message interrupts it): the cancellation event says this instead."""

    @property
    def invocation_id(self) -> str:
        """The invocation id."""
        return self._base.invocation_id

    @property
    def agent(self) -> str:
        """The agent the invocation runs: the one it was started with, or the one a follow-up
        message continued the conversation with."""
        return self._continued_by or self._base.agent_name

    @property
    def status(self) -> AdkStatus:
        """Completed or failed once ended; else what it waits for, or running."""
        return self._status(listed_only=False)

    def _status(self, *, listed_only: bool) -> AdkStatus:
        if self._ended_as is not None:
            return self._ended_as
        waiting = self.book.waiting_for(listed_only=listed_only)
        if waiting == "confirmation":
            return "awaiting_confirmation"
        return "awaiting_input" if waiting == "input" else "running"

    def snapshot(self, *, listed_only: bool = False) -> InvocationStatus:
        """Where the invocation stands; ``listed_only``: as ``adk_status`` reports it, waiting
        only on requests whose events are stored, so a caller that sees the pause finds its
        request in the session."""
        return InvocationStatus(
            status=self._status(listed_only=listed_only),
            invocation_id=self.invocation_id,
            agent=self.agent,
            step=self.step,
            pending=len(self.book.unanswered(listed_only=listed_only)),
            final_text=self.final_text,
            error=self.error,
            ignored_signals=self.book.report(),
            usage=self.usage,
            nodes=dict(self.graph_nodes),
        )

    # ------------------------------------------------------------------ run

    async def run(
        self, message: types.Content | None, carry: InvocationCarry | None = None
    ) -> InvocationResult:
        """Run the agent until a final answer, an end, an error or the step limit.

        Args:
            message: The user's message (ignored when ``carry`` is given).
            carry: What an earlier run of this invocation handed over; the book given to
                the flow holds its requests already (:meth:`RequestBook.restore`).

        Returns:
            The result; ``status`` is ``failed`` when the model answered with an error or
            the step limit was reached.

        Raises:
            StepFailedError: A step failed for good; the error is recorded in the session
                first.
            asyncio.CancelledError: The invocation was cancelled: its open requests are
                closed and one cancellation event is stored first.
        """
        frame = _Frame(self.agent)
        pending: list[PendingEvent] = []
        if carry is not None:
            self._restore(carry)
        elif message is not None:
            pending.append(self._event(frame, "user", message))
        self._exec.status_changed()
        try:
            if carry is not None:
                outcome = await self._resume(carry)
            else:
                outcome = await self._run_named(frame, pending)
        except StepFailedError as err:
            await self._record_error(frame, err.kind, err.message)
            raise
        except asyncio.CancelledError:
            # Runs cancelled before cancellations were recorded must replay without it.
            if self._exec.patched(gates.RECORD_CANCELLATION):
                await self._record_cancellation(frame)
            raise
        if outcome.error is not None:
            return self._finish("failed", error=outcome.error)
        await self._compact(frame)
        return self._finish("completed", text=outcome.text)

    async def _run_named(self, frame: _Frame, pending: list[PendingEvent]) -> _Outcome:
        """Run ``frame.agent``, whose kind may not be known yet.

        An unknown agent is run as an LLM agent: its first model step describes the agent's
        tree, and answers ``delegate`` instead of calling a model when it is a workflow
        agent. The common case (an LLM agent) thus costs no extra round trip.
        """
        spec = self._known(frame.agent)
        if spec is not None and spec.kind != "llm":
            return await self._run_agent(spec, frame, pending)
        return await self._llm(frame, pending, entry=frame.agent)

    async def _run_agent(
        self, spec: AgentSpec, frame: _Frame, pending: list[PendingEvent]
    ) -> _Outcome:
        """Run ``spec`` (any kind) in ``frame`` (whose agent is ``spec``), from ``pending``."""
        if spec.kind == "llm":
            return await self._llm(frame, pending, entry=spec.name)
        if spec.kind == "graph":
            return await self._graph(spec, frame, pending)
        if spec.kind == "remote":
            return await self._remote(frame, pending)
        if spec.kind == "parallel":
            return await self._parallel(spec, frame, pending)
        return await self._sequence(spec, frame, pending)

    async def _sequence(
        self,
        spec: AgentSpec,
        frame: _Frame,
        pending: list[PendingEvent],
        *,
        resumed: tuple[WorkflowPosition, _Outcome] | None = None,
    ) -> _Outcome:
        """Run a sequential agent's sub-agents once, or a loop agent's until it ends.

        ``resumed`` is where a carried run re-entered this agent, and how the sub-agent it
        was running ended; the sequence goes on after it.
        """
        iteration, index, outcome = 0, 0, _Outcome()
        escalated = False
        if resumed is not None:
            at, outcome = resumed
            iteration, index = at.iteration, at.index + 1
            if self._stops(spec, outcome):
                return self._leave(spec, outcome)
        while spec.sub_agents:
            while index < len(spec.sub_agents):
                sub = spec.sub_agents[index]
                at = WorkflowPosition(agent=spec.name, iteration=iteration, index=index)
                child = frame.nested(sub.name, position=at)
                outcome = await self._run_agent(sub, child, pending)
                frame.actions += child.actions
                pending = []
                if self._stops(spec, outcome):
                    return self._leave(spec, outcome)
                escalated = escalated or outcome.escalated
                index += 1
            iteration, index = iteration + 1, 0
            if spec.kind != "loop" or iteration == spec.max_iterations:
                break
        return dataclasses.replace(outcome, escalated=escalated)

    def _stops(self, spec: AgentSpec, outcome: _Outcome) -> bool:
        """Whether a sequence or loop ends after a sub-agent that ended this way: on an end
        or an error; on an escalation, a loop (ADK) — or any sequence, for runs that keep
        the old arm of :data:`gates.ADK_ESCALATION` or ``escalation="stop"``."""
        if outcome.ended or outcome.error is not None:
            return True
        if not outcome.escalated:
            return False
        return spec.kind == "loop" or not self._adk_escalation()

    def _leave(self, spec: AgentSpec, outcome: _Outcome) -> _Outcome:
        """How a sequence that stopped early ends. Under ADK's rule an escalation goes on
        up (the loops above stop too, sequences ignore it); under the old one a loop takes
        its sub-agent's escalation as its own end, so an enclosing sequence goes on."""
        if spec.kind == "loop" and outcome.escalated and not self._adk_escalation():
            return dataclasses.replace(outcome, escalated=False)
        return outcome

    async def _resume(self, carry: InvocationCarry) -> _Outcome:
        """Re-enter the sequences and loops a handed-over run stood in, innermost first."""
        positions = carry.positions
        frame = _Frame(positions[0].agent if positions else carry.agent)
        if carry.graph is not None:
            spec = self._known(carry.agent)
            assert spec is not None, f"carried graph {carry.agent!r} is unknown"
            return await self._graph(spec, frame, [], carried=carry.graph)

        async def enter(frame: _Frame, depth: int) -> _Outcome:
            if depth == len(positions):
                moved = frame.moved(agent=carry.agent)
                return await self._llm(moved, [], entry=carry.entry_agent, carry=carry)
            at = positions[depth]
            spec = self._known(at.agent)
            assert spec is not None, f"carried position in unknown agent {at.agent!r}"
            child = frame.nested(spec.sub_agents[at.index].name, position=at)
            inner = await enter(child, depth + 1)
            frame.actions += child.actions
            return await self._sequence(spec, frame, [], resumed=(at, inner))

        return await enter(frame, 0)

    async def _graph(
        self,
        spec: AgentSpec,
        frame: _Frame,
        pending: list[PendingEvent],
        *,
        carried: GraphCarry | None = None,
    ) -> _Outcome:
        """Run a graph workflow (ADK 2) from the invocation's message, or from where an
        earlier run handed over (``carried``), to its output."""
        assert spec.graph is not None
        await self._append(frame, pending)

        async def hand_over(graph: GraphCarry) -> None:
            await self._hand_over(frame, spec.name, {}, ended=False, graph=graph)

        host = GraphHost(
            self._exec,
            self._ref(frame),
            self._temp_state,
            self.book,
            self._agent_node,
            hand_over,
            self.graph_nodes,
        )
        self.graph = spec.graph
        run = GraphRun(
            host, spec.graph, names=[spec.name], path=f"{spec.name}@1", branch=frame.branch
        )
        if carried is not None:
            outcome = await run.resume(carried)
        else:
            outcome = await run.run(MessageValue(kind="message"))
        if outcome.error is not None:
            return _Outcome(error=f"{outcome.error.error_type}: {outcome.error.message}")
        return _Outcome(text=output_text(outcome.output))

    async def _agent_node(
        self, agent: str, key: str, path: str, branch: str, node_input: NodeValue
    ) -> GraphOutcome:
        """Run an LLM agent as a graph node (ADK 2's single-turn agent node): the step loop
        of any agent, its events on the node's path; its answer is the node's output.

        The run cannot hand over inside the node (``outer=None``): the graph hands over
        between nodes.
        """
        turn = _NodeTurn(path, key, node_input)
        frame = _Frame(agent, branch, outer=None, node=turn)
        outcome = await self._llm(frame, [], entry=agent)
        if outcome.error is not None:
            names = ["ModelError", "Exception", "BaseException"]
            failed = NodeFailed(
                kind="failed", error_type=names[0], error_names=names, message=outcome.error
            )
            return GraphOutcome(error=failed)
        if not turn.answer:
            return GraphOutcome()
        return GraphOutcome(output=StoredValue(kind="stored", event_id=turn.answer))

    async def _remote(self, frame: _Frame, pending: list[PendingEvent]) -> _Outcome:
        """Run a remote agent's turn: remote steps until its task ends; each question it
        asks is a request of ours, whose answer the next step sends back on the same task."""
        question: RemoteQuestion | None = None
        answer: RemoteAnswer | None = None
        task_id: str | None = None
        while True:
            inp = RemoteStepInput(
                ref=self._ref(frame),
                event_id=self._exec.new_id(),
                message_id=self._exec.new_id(),
                pending_events=pending,
                question=question,
                answer=answer,
                task_id=task_id,
                timestamp=self._exec.now(),
                stream=self._config.stream,
                budgets=self._budgets,
                # Handed back well before the step's timeout: a long remote task is followed
                # by one step after another, never by a step that times out.
                follow_seconds=self._config.tool_timeout_seconds * 0.8,
            )
            result = await self._exec.remote_step(inp, summary=f"{frame.agent} · remote step")
            pending, question, answer, task_id = [], None, None, None
            match result:
                case RemoteDone():
                    return _Outcome(text=result.text)
                case RemoteFailed():
                    return _Outcome(error=result.error)
                case RemoteWorking():
                    task_id = result.task_id
                case RemoteAsked():
                    question = result.question
                    answer, reply = await self._ask_for_remote(frame, question)
                    pending = [reply]
                case _:
                    assert_never(result)

    async def _ask_for_remote(
        self, frame: _Frame, question: RemoteQuestion
    ) -> tuple[RemoteAnswer, Event]:
        """Open our request for a remote agent's question, wait for its answer; return what
        goes back to the far side and the reply event recording the answer."""
        pending, request, event = remote_request(
            question,
            request_id=f"adk-{self._exec.new_id()}",
            event_id=self._exec.new_id(),
            invocation_id=self.invocation_id,
            author=frame.agent,
            branch=frame.branch,
            isolation_scope=frame.isolation_scope,
            now=self._exec.now(),
        )
        self.book.open(pending, request, stored=False)
        await self._append(frame, [event])
        self.book.stored([pending.id])
        answers = await self._wait_for_answers(frame, [pending.id])
        assert answers.reply is not None
        call_id = pending.function_call_id
        confirmation = answers.confirmations.get(call_id)
        if confirmation is not None:
            answer = RemoteAnswer(
                kind="confirmation",
                confirmed=confirmation.confirmed,
                payload=confirmation.payload,
                expired=confirmation.expired,
            )
        else:
            values = answers.inputs.get(call_id, {})
            answer = RemoteAnswer(
                kind="input", value=values.get(pending.id), expired=pending.id not in values
            )
        return answer, answers.reply

    async def _parallel(
        self, spec: AgentSpec, frame: _Frame, pending: list[PendingEvent]
    ) -> _Outcome:
        # The message is stored once, before the branches start, so every branch sees it.
        await self._append(frame, pending)
        children = [
            frame.nested(agent=sub.name, branch=_child_branch(frame.branch, spec.name, sub.name))
            for sub in spec.sub_agents
        ]
        outcomes = await self._branches(
            [
                asyncio.ensure_future(self._run_agent(sub, child, []))
                for sub, child in zip(spec.sub_agents, children, strict=True)
            ],
            frame,
        )
        # Re-apply the branches' deltas in sub-agent order so the final state does not depend
        # on which branch finished first; artifact deltas keep the highest version.
        merged = merge_actions([a for child in children for a in child.actions])
        frame.actions.append(merged)
        if merged.state_delta or merged.artifact_delta:
            event = self._event(
                frame,
                spec.name,
                None,
                EventActions(state_delta=merged.state_delta, artifact_delta=merged.artifact_delta),
            )
            await self._append(frame, [event])
        errors = [o.error for o in outcomes if o.error is not None]
        return _Outcome(
            text="\n".join(o.text for o in outcomes if o.text),
            ended=any(o.ended for o in outcomes),
            escalated=any(o.escalated for o in outcomes),
            error=errors[0] if errors else None,
        )

    async def _branches(
        self, tasks: list[asyncio.Future[_Outcome]], frame: _Frame
    ) -> list[_Outcome]:
        """Wait for a parallel agent's branches. Once one fails, the others are stopped at
        once (ADK-Go cancels their context) and what they had produced is stored; runs
        recorded before :data:`gates.PARALLEL_FAILURE` let them run on.

        Lists, never sets, are iterated: the order of cancellations is a command order.
        """
        while running := [t for t in tasks if not t.done()]:
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            if not any(_failed(t) for t in tasks if t.done()):
                continue
            raised = next((t.exception() for t in tasks if t.done() and _raised(t)), None)
            if self._exec.patched(gates.PARALLEL_FAILURE):
                for task in running:
                    task.cancel()
                await asyncio.wait(running)
                kept, self._kept = self._kept, []
                await self._append(frame, kept)
            if raised is not None:
                raise raised  # As asyncio.gather did, the error goes up at once.
        return [t.result() if not t.cancelled() else _Outcome() for t in tasks]

    async def _llm(
        self,
        frame: _Frame,
        pending: list[PendingEvent],
        *,
        entry: str,
        carry: InvocationCarry | None = None,
    ) -> _Outcome:
        """The step loop of LLM agents, following transfers and escalations among them.

        ``entry`` is the agent this loop started with: an escalation from it returns to the
        caller, while one from an agent transferred to goes back to that agent's parent.
        """
        first_step = carry is None
        if carry is not None and carry.paused_calls:
            # This run continued a paused step: finish it before the next model step.
            by_id = {c.id: c for c in carry.paused_calls}
            pending, ended, _ = await self._settle(frame, None, by_id, pending, carry.ended)
            if ended:
                await self._append(frame, pending)
                return _Outcome(ended=True)
        while True:
            if self.step >= self._config.max_steps:
                message = f"step limit of {self._config.max_steps} model steps reached"
                await self._record_error(
                    frame, InvocationErrorCode.STEP_LIMIT_EXCEEDED, message, pending
                )
                return _Outcome(error=message)
            if self._may_hand_over(frame):
                await self._append(frame, pending)
                await self._hand_over(frame, entry, {}, ended=False)
            describe = self._known(frame.agent) is None
            result = await self._model_step(
                frame, pending, run_before_agent=first_step, describe=describe
            )
            pending = []
            chosen = None if isinstance(result, DelegateStep) else result.agent
            if chosen is not None and chosen != frame.agent:
                # The conversation was with another agent: it runs as if started with.
                frame, entry = dataclasses.replace(frame, agent=chosen), chosen
                self._continued_by = chosen
            outcome = await self._model_outcome(frame, result)
            if outcome is not None:
                reply = await self._after_turn(frame, outcome)
                if reply is None:
                    return outcome
                pending, first_step = [reply], False
                continue
            assert isinstance(result, CallsStep)
            first_step = False
            if not result.function_calls:
                # A reply that is no answer (thoughts only, a code result to read): the model
                # is called again, as in ADK-Go's Flow.Run; the step limit above bounds it.
                continue
            by_id = {c.id: c for c in result.function_calls}
            response = await self._run_calls(frame, result.function_calls, Answers())
            pending, ended, actions = await self._settle(
                frame, response, by_id, [response.event], response.actions.end_invocation
            )
            self._open_long_running(frame, result.function_calls)
            if ended:
                await self._append(frame, pending)
                return _Outcome(ended=True)
            moved = await self._move(frame, entry, actions, pending)
            if isinstance(moved, _Outcome):
                return moved
            if moved is not None:
                frame, first_step = moved, True

    async def _model_outcome(self, frame: _Frame, result: RanStep) -> _Outcome | None:
        """How the agent's run ends after a model step, or ``None`` when its calls run next."""
        if result.tree is not None:
            self._remember(result.tree)
        over = self._over_budget()
        if over is not None:
            # The step's event is stored: the answer that went over is kept.
            await self._record_error(frame, InvocationErrorCode.TOKEN_BUDGET_EXCEEDED, over)
            return _Outcome(error=over)
        match result:
            case DelegateStep():
                # Not an LLM agent after all; the step only described it and stored the
                # pending events.
                spec = self._known(frame.agent)
                assert spec is not None
                return await self._run_agent(spec, frame, [])
            case FinalStep() | EndedStep():
                frame.actions.append(result.actions)
                escalated = any(a.escalate for a in frame.actions) and self._adk_escalation()
                return _Outcome(
                    text=result.text, ended=isinstance(result, EndedStep), escalated=escalated
                )
            case ErrorStep():
                frame.actions.append(result.actions)
                return _Outcome(error=result.describe())
            case CallsStep():
                frame.actions.append(result.actions)
                return None
            case _:
                assert_never(result)

    async def _move(
        self, frame: _Frame, entry: str, actions: EventActions, pending: list[PendingEvent]
    ) -> _Frame | _Outcome | None:
        """Where a transfer or an escalation takes the loop: the frame of the agent that
        steps next, the outcome of a workflow agent transferred to or of an escalation that
        leaves the loop, or ``None`` to stay."""
        if actions.transfer_to_agent:
            target = self._known(actions.transfer_to_agent)
            if target is not None and target.kind != "llm":
                child = frame.moved(agent=target.name)
                outcome = await self._run_agent(target, child, pending)
                frame.actions += child.actions
                return outcome
            return dataclasses.replace(frame, agent=actions.transfer_to_agent)
        if actions.escalate and self._adk_escalation():
            # ADK: the agent summarises what its tool did unless told not to; the loops
            # around it stop once it is done (its outcome says it escalated).
            if not actions.skip_summarization:
                return None
            await self._append(frame, pending)
            return _Outcome(escalated=True)
        if actions.escalate:
            spec = self._known(frame.agent)
            if frame.agent == entry or spec is None or spec.parent is None:
                await self._append(frame, pending)
                return _Outcome(escalated=True)
            return dataclasses.replace(frame, agent=spec.parent)
        return None

    def _adk_escalation(self) -> bool:
        """Whether escalations follow ADK (see :data:`gates.ADK_ESCALATION`); asked only when one
        happens, so runs without escalations record nothing."""
        return self._config.escalation == "adk" and self._exec.patched(gates.ADK_ESCALATION)

    async def _settle(
        self,
        frame: _Frame,
        response: _Responses | None,
        by_id: dict[str, PlannedCall],
        pending: list[PendingEvent],
        ended: bool,
    ) -> tuple[list[PendingEvent], bool, EventActions]:
        """Pause for the requests ``response`` raised, re-dispatch the answered calls, repeat.

        ``response`` is ``None`` when a new run resumes a pause carried over from an
        earlier run: the requests are already open and recorded.

        Returns:
            The events still to persist, whether a tool ended the invocation, and the
            step's merged actions.
        """
        step_actions = [response.actions] if response is not None else []
        waiting = self.book.open_ids() if response is None else []
        reopens: dict[str, str] = {}
        while response is None or self._asks(response, by_id):
            if response is not None:
                events, waiting = self._open_requests(frame, response.actions, by_id, reopens)
                await self._append(frame, [*pending, *events])
                self.book.stored(waiting)
                pending = []
                if self._may_hand_over(frame):
                    await self._hand_over(frame, frame.agent, by_id, ended=ended)
            await self._compact(frame)
            answers = await self._wait_for_answers(frame, waiting)
            assert answers.reply is not None
            pending.append(answers.reply)
            redo = [by_id[cid] for cid in by_id if answers.concern(cid)]  # the model's order
            reopens = answers.requests
            response = await self._run_calls(frame, redo, answers, unstored=pending)
            step_actions.append(response.actions)
            pending.append(response.event)
            ended = ended or response.actions.end_invocation
        return pending, ended, merge_actions(step_actions)

    # ----------------------------------------------------------- handing over

    def _may_hand_over(self, frame: _Frame) -> bool:
        """True when the run should hand over now and ``frame``'s position can be carried."""
        if frame.outer is None or not self._exec.should_hand_over():
            return False
        # Runs recorded before positions were carried never handed over inside a sequence.
        return not frame.outer or self._exec.patched(gates.CARRY_POSITIONS)

    async def _hand_over(
        self,
        frame: _Frame,
        entry: str,
        paused: dict[str, PlannedCall],
        *,
        ended: bool,
        graph: GraphCarry | None = None,
    ) -> None:
        """Hand ids, counters and open requests to a fresh run; events are already stored."""

        def carry() -> InvocationCarry:
            # Built only when the executor is ready: answers that arrive while it waits
            # for running handlers must be in the book it carries.
            carried, answered, early, refusals = self.book.carry()
            return InvocationCarry(
                invocation_id=self.invocation_id,
                step=self.step,
                agent=frame.agent,
                entry_agent=entry,
                tree=self._trees.get(frame.agent),
                temp_state=self._temp_state,
                answered=answered,
                early=early,
                refusals=refusals,
                expired=self.book.expired_ids(),
                paused_calls=list(paused.values()),
                open_requests=carried,
                ended=ended,
                positions=list(frame.outer or ()),
                usage=self.usage,
                continued_by=self._continued_by,
                grants=self._grants,
                graph=graph,
            )

        await self._exec.hand_over(carry)

    def _restore(self, carry: InvocationCarry) -> None:
        self._choose_agent = False
        self._continued_by = carry.continued_by
        self.step = carry.step
        self.usage = carry.usage
        self._grants = list(carry.grants)
        self._temp_state = dict(carry.temp_state)
        if carry.tree is not None:
            self._remember(carry.tree)

    # ------------------------------------------------------------------ steps

    def _ref(self, frame: _Frame) -> InvocationRef:
        return self._base.model_copy(
            update={
                "agent_name": frame.agent,
                "branch": frame.branch,
                "isolation_scope": frame.isolation_scope,
                "node_path": frame.node.path if frame.node is not None else "",
            }
        )

    def _remember(self, tree: AgentSpec) -> None:
        stack = [tree]
        while stack:
            spec = stack.pop()
            self._trees[spec.name] = tree
            stack += spec.sub_agents

    def _known(self, agent: str) -> AgentSpec | None:
        """The spec of ``agent`` if its tree has been described in this invocation."""
        tree = self._trees.get(agent)
        return tree.find(agent) if tree is not None else None

    async def _model_step(
        self, frame: _Frame, pending: list[PendingEvent], *, run_before_agent: bool, describe: bool
    ) -> RanStep:
        # The number is taken before the step runs: concurrent branches must not share one
        # (it keys the step's idempotent saves).
        self.step += 1
        step = self.step
        choose, self._choose_agent = self._choose_agent, False
        unstored = list(pending)
        try:
            result = await self._model_step_of(
                frame, unstored, step, run_before_agent, describe, choose
            )
            while isinstance(result, OverBudgetStep):
                # No model was called and nothing stored: ask, then the same step again.
                reply = await self._ask_for_tokens(frame, result, unstored)
                if isinstance(reply, ErrorStep):
                    return reply
                unstored.append(reply)
                result = await self._model_step_of(
                    frame, unstored, step, run_before_agent, describe, choose
                )
        except asyncio.CancelledError:
            # The events it was to store first (the user's message, the previous step's
            # tool responses) happened: a cancellation stores them.
            if self._exec.patched(gates.KEEP_CANCELLED_OUTCOMES):
                self._kept += unstored
            raise
        if isinstance(result, DelegateStep):
            # No model was called: the number goes back, the step limit counts model calls.
            self.step -= 1
        elif result.usage is not None:
            self.usage += result.usage
        return result

    async def _model_step_of(
        self,
        frame: _Frame,
        pending: list[PendingEvent],
        step: int,
        run_before_agent: bool,
        describe: bool,
        choose_agent: bool,
    ) -> ModelStepResult:
        grants = list(self._grants)
        event_id = self._exec.new_id()
        if frame.node is not None:
            frame.node.answer = event_id
        result = await self._exec.model_step(
            ModelStepInput(
                ref=self._ref(frame),
                step=step,
                describe=describe,
                model_event_id=event_id,
                pending_events=pending,
                temp_state=self._temp_state,
                run_before_agent=run_before_agent,
                timestamp=self._exec.now(),
                stream=self._config.stream,
                run_config=self._config,
                budgets=self._budgets,
                choose_agent=choose_agent,
                grants=grants,
                node_input=frame.node.input if frame.node is not None else None,
            ),
            summary=f"{frame.agent} · model step {step}",
        )
        # Branches step concurrently: a grant answered meanwhile goes with the next step.
        self._grants = [g for g in self._grants if g not in grants]
        return result

    async def _ask(
        self,
        frame: _Frame,
        listed: PendingInput,
        request: InputRequest,
        pending: list[PendingEvent],
    ) -> Answers:
        """Open the flow's own input request ``listed`` — its event stored after ``pending``,
        which it empties — and wait for its answer."""
        self.book.open(listed, request, stored=False)
        event = build_input_request_event(
            [request],
            event_id=self._exec.new_id(),
            invocation_id=self.invocation_id,
            author=frame.agent,
            branch=frame.branch,
            isolation_scope=frame.isolation_scope,
            timestamp=self._exec.now(),
        )
        await self._append(frame, [*pending, event])
        self.book.stored([listed.id])
        pending.clear()
        return await self._wait_for_answers(frame, [listed.id])

    async def _ask_for_tokens(
        self, frame: _Frame, over: OverBudgetStep, pending: list[PendingEvent]
    ) -> Event | ErrorStep:
        """Store ``pending`` (emptying it) with a request asking to allow more than
        ``over``'s budget and wait for its answer: the answer's event, to step again with,
        or the error the invocation ends on when refused (stored as its error event)."""
        request_id = f"{BUDGET_REQUEST_PREFIX}{self._exec.new_id()}"
        listed, request = budget_request(
            over, request_id, agent=frame.agent, branch=frame.branch, now=self._exec.now()
        )
        answers = await self._ask(frame, listed, request, pending)
        assert answers.reply is not None
        tokens = allowed(answers.inputs.get(request_id, {}).get(request_id))
        if tokens > 0:
            self._grants.append(TokenGrant(id=request_id, scope=over.scope, tokens=tokens))
            return answers.reply
        message = (
            f"the token budget of the {over.scope} ({over.limit} tokens, {over.used} used) "
            "was not raised: the invocation ends"
        )
        code = InvocationErrorCode.TOKEN_BUDGET_REFUSED
        await self._record_error(frame, code, message, [answers.reply])
        return ErrorStep(kind="error", error_code=code.value, error_message=message)

    def _over_budget(self) -> str | None:
        """Why the invocation must end on its token budget, or ``None``."""
        budget, used = self._config.token_budget, self.usage
        if budget is None or used.total_tokens <= budget:
            return None
        return (
            f"token budget of {budget} exceeded: {used.total_tokens} tokens used "
            f"({used.prompt_tokens} prompt, {used.candidates_tokens} candidates)"
        )

    async def _run_calls(
        self,
        frame: _Frame,
        calls: list[PlannedCall],
        answers: Answers,
        unstored: list[PendingEvent] | None = None,
    ) -> _Responses:
        """Run the calls concurrently and merge their results in call order.

        On cancellation the calls are asked to stop and waited for; what the finished ones
        returned, with ``unstored`` (events of the step not stored yet) before it, is kept
        for the cancellation to store.
        """
        tasks = [
            asyncio.ensure_future(
                self._agent_tool_call(frame, c)
                if c.agent_tool
                else self._tool_call(
                    frame,
                    ToolCallInput(
                        ref=self._ref(frame),
                        call=answers.call(c),
                        tool_confirmation=answers.confirmations.get(c.id),
                        resume_inputs=answers.inputs.get(c.id, {}),
                        expired_inputs=answers.expired.get(c.id, []),
                        temp_state=self._temp_state,
                        budgets=self._budgets,
                        run_config=self._config,
                        decided_at=answers.decided_at.get(c.id),
                        grant=answers.grants.get(c.id),
                    ),
                )
            )
            for c in calls
        ]
        try:
            results = await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            if self._exec.patched(gates.KEEP_CANCELLED_OUTCOMES):
                if tasks:
                    await asyncio.wait(tasks)
                self._kept += unstored or []
                kept = self._cancelled_responses(frame, calls, tasks)
                if kept is not None:
                    self._kept.append(kept)
            raise
        # One id per call, as the flow has always drawn them (replays of recorded runs
        # depend on the sequence); the stored event is the merge and keeps the first.
        events = [
            self._response_event(frame, call, result)
            for call, result in zip(calls, results, strict=True)
        ]
        responses: list[Event | StagedResponse] = [
            StagedResponse(staged=result.staged) if isinstance(result, StagedResult) else event
            for event, result in zip(events, results, strict=True)
        ]
        actions = merge_actions([result.actions for result in results])
        frame.actions.append(actions)
        for key, value in actions.state_delta.items():
            if key.startswith(TEMP_PREFIX):
                self._temp_state[key] = value
        merged = MergedResponses(
            kind="merged", id=events[0].id, timestamp=events[0].timestamp, responses=responses
        )
        return _Responses(merged, actions)

    def _response_event(self, frame: _Frame, call: PlannedCall, result: ToolCallResult) -> Event:
        """The function-response event of one call's result (a new id; a staged result's
        response is not in it)."""
        inline = result.response if isinstance(result, InlineResult) else None
        response = types.FunctionResponse(id=call.id, name=call.name, response=inline)
        return self._event(
            frame,
            frame.agent,
            types.Content(role="user", parts=[types.Part(function_response=response)]),
            actions=result.actions,
        )

    def _cancelled_responses(
        self,
        frame: _Frame,
        calls: list[PlannedCall],
        tasks: Sequence[asyncio.Future[ToolCallResult]],
    ) -> MergedResponses | None:
        """What the calls of a cancelled step produced: the results of the calls that
        finished, and the staged response of each other tool call, in case it finished
        after all; ``None`` when no call can have produced anything."""
        responses: list[Event | StagedResponse] = []
        for call, task in zip(calls, tasks, strict=True):
            finished = task.done() and not task.cancelled() and task.exception() is None
            result = task.result() if finished else None
            if isinstance(result, StagedResult):
                responses.append(StagedResponse(staged=result.staged))
            elif result is not None:
                responses.append(self._response_event(frame, call, result))
            elif not call.agent_tool:
                staged = stage_id(self.invocation_id, call.id)
                responses.append(StagedResponse(staged=staged, optional=True))
        if not responses:
            return None
        return MergedResponses(
            kind="merged", id=self._exec.new_id(), timestamp=self._exec.now(), responses=responses
        )

    async def _tool_call(self, frame: _Frame, inp: ToolCallInput) -> ToolCallResult:
        """Run one tool step; a call in doubt waits for an operator's resolution."""
        result = await self._tool_step(inp)
        while isinstance(result, InDoubtResult):
            result = await self._resolve(frame, inp, result)
        return result

    async def _resolve(
        self, frame: _Frame, inp: ToolCallInput, doubt: InDoubtResult
    ) -> ToolCallResult:
        """Pause on the resolution of a call in doubt (:mod:`.doubt_requests`); the result
        it gives: the operator's, an error, or the retried or compensating step's."""
        call = inp.call
        request_id = f"{DOUBT_REQUEST_PREFIX}{self._exec.new_id()}"
        listed, request = doubt_request(
            doubt, call, request_id, agent=frame.agent, branch=frame.branch, now=self._exec.now()
        )
        answers = await self._ask(frame, listed, request, [])
        assert answers.reply is not None
        await self._append(frame, [answers.reply])
        resolution, result, reason = resolution_of(answers.inputs.get(call.id, {}).get(request_id))
        match resolution:
            case "done":
                return InlineResult(response=result)
            case "fail":
                return InlineResult(response={"error": failed_in_doubt(call.name, reason)})
            case "retry":
                return await self._tool_step(inp.model_copy(update={"in_doubt_retry": request_id}))
            case "compensate":
                return await self._tool_step(compensating(inp))
            case _:
                assert_never(resolution)

    async def _tool_step(self, inp: ToolCallInput) -> ToolCallResult:
        """Run one tool step; once it failed on every attempt, the model is told (by default)."""
        call = inp.call
        try:
            return await self._exec.tool_call(inp, summary=call.summary())
        except StepFailedError as err:
            # Runs recorded before tool failures reached the model failed here; they must
            # replay that way.
            if call.options.on_failure == "fail_invocation" or not self._exec.patched(
                gates.TOOL_FAILURES_REACH_THE_MODEL
            ):
                raise
            return InlineResult(response={"error": err.message})

    async def _agent_tool_call(self, frame: _Frame, call: PlannedCall) -> ToolCallResult:
        """Run the agent behind an ``AgentTool`` in isolation scope = the call id."""
        assert call.agent_tool is not None
        child = frame.nested(agent=call.agent_tool, isolation_scope=call.id)
        request = call.args.get("request")
        text = request if isinstance(request, str) else str(call.args)
        first = self._event(
            child, "user", types.Content(role="user", parts=[types.Part(text=text)])
        )
        outcome = await self._run_named(child, [first])
        merged = merge_actions(child.actions)
        # Only the data deltas travel up: the child's control flags (transfer, escalate,
        # skip_summarization) were about the child's own run.
        actions = EventActions(state_delta=merged.state_delta, artifact_delta=merged.artifact_delta)
        response = {"error": outcome.error} if outcome.error else {"result": outcome.text}
        return InlineResult(response=response, actions=actions)

    async def _append(self, frame: _Frame, events: list[PendingEvent]) -> None:
        if not events:
            return
        try:
            await self._exec.append_events(
                AppendEventsInput(ref=self._ref(frame), events=events),
                summary=f"{frame.agent} · append {len(events)} event(s)",
            )
        except asyncio.CancelledError:
            # Cancelled before it was known stored: stored again (appends are idempotent).
            if self._exec.patched(gates.KEEP_CANCELLED_OUTCOMES):
                self._kept += events
            raise

    async def _record_error(
        self, frame: _Frame, code: str, message: str, pending: list[PendingEvent] | None = None
    ) -> None:
        """Persist an error event (after any pending events); never masks the error."""
        event = self._event(frame, frame.agent, None)
        event.error_code = str(code)  # the code's text: stores hold plain strings
        event.error_message = message
        # The error being recorded may be the store's own: the invocation fails either way.
        with contextlib.suppress(StepFailedError):
            await self._append(frame, [*(pending or []), event])
        self.error = message
        self._ended_as = "failed"
        self._exec.status_changed()

    async def _record_cancellation(self, frame: _Frame) -> None:
        """Close the open requests and store one cancellation event; the session is free."""
        self.book.close_all()
        event = self._event(frame, frame.agent, None)
        event.error_code = InvocationErrorCode.CANCELLED.value
        event.error_message = self.stop_reason or "the invocation was cancelled"
        with contextlib.suppress(StepFailedError):
            await self._append(frame, [*self._kept, event])
        self.error = event.error_message
        self._ended_as = "cancelled"
        self._exec.status_changed()

    # --------------------------------------------------------------- pausing

    def _asks(self, response: _Responses, by_id: Mapping[str, PlannedCall]) -> bool:
        """True when the step pauses for answers to what its calls asked."""
        if response.has_requests(by_id):
            return True
        # Confirmations only for calls the step did not make build no request event in ADK,
        # and the step goes on; runs recorded before this waited on an empty request.
        foreign = bool(response.actions.requested_tool_confirmations)
        return foreign and not self._exec.patched(gates.FOREIGN_CONFIRMATIONS)

    def _open_requests(
        self,
        frame: _Frame,
        actions: EventActions,
        by_id: dict[str, PlannedCall],
        reopens: Mapping[str, str],
    ) -> tuple[list[Event], list[str]]:
        """Open the requests a step's calls made; return the events recording them and ids
        (``reopens`` as for :meth:`_requests`)."""
        requesting = [c for c in by_id.values() if c.id in actions.requested_tool_confirmations]
        confirmation_ids = [f"adk-{self._exec.new_id()}" for _ in requesting]
        now = self._exec.now()
        asked = dict(zip(confirmation_ids, requesting, strict=True))
        opened = self._requests(frame, actions, by_id, asked, now, reopens)
        common: dict[str, Any] = {
            "invocation_id": self.invocation_id,
            "author": frame.agent,
            "branch": frame.branch,
            "isolation_scope": frame.isolation_scope,
            "timestamp": now,
        }
        events: list[Event] = []
        if requesting:
            request_event = build_confirmation_request_event(
                [c.to_function_call() for c in by_id.values()],
                actions.requested_tool_confirmations,
                confirmation_ids,
                event_id=self._exec.new_id(),
                **common,
            )
            if request_event is not None:
                events.append(request_event)
        if actions.requested_inputs:
            events.append(
                build_input_request_event(
                    list(actions.requested_inputs.values()),
                    event_id=self._exec.new_id(),
                    **common,
                )
            )
        for pending, input_request in opened:
            self.book.open(pending, input_request, stored=False)
        return events, [p.id for p, _ in opened]

    @staticmethod
    def _requests(
        frame: _Frame,
        actions: EventActions,
        by_id: dict[str, PlannedCall],
        confirmations: dict[str, PlannedCall],
        now: float,
        reopens: Mapping[str, str],
    ) -> list[tuple[PendingRequest, InputRequest | None]]:
        """The requests to open: a confirmation per call in ``confirmations`` (by request
        id), then the inputs ``actions`` asks for, each with the input request it answers.
        ``reopens`` names the request a call's last answer came to, by call id: a call that
        asks again re-opens it."""

        def expiry(timeout: float | None) -> float | None:
            return now + timeout if timeout is not None else None

        opened: list[tuple[PendingRequest, InputRequest | None]] = []
        for request_id, call in confirmations.items():
            confirmation = actions.requested_tool_confirmations[call.id]
            policy = call.options.approval
            due = policy.due_after if policy is not None else None
            pending = PendingConfirmation(
                kind="confirmation",
                id=request_id,
                function_call_id=call.id,
                tool=call.name,
                args=call.args,
                hint=confirmation.hint,
                payload=confirmation.payload,
                call_digest=call_digest(call.name, call.args),
                agent=frame.agent,
                branch=frame.branch,
                expires_at=expiry(confirmation.timeout_seconds),
                opened_at=now,
                edit_schema=call.options.edit_schema,
                policy=policy,
                assignee=policy.inbox if policy is not None else None,
                due_at=expiry(due.total_seconds() if due is not None else None),
                reopened_from=reopens.get(call.id) if confirmation.stale else None,
            )
            opened.append((pending, None))
        for interrupt_id, request in actions.requested_inputs.items():
            call = by_id[request.function_call_id]
            asked = PendingInput(
                kind="input",
                id=interrupt_id,
                function_call_id=request.function_call_id,
                tool=call.name,
                args=call.args,
                message=request.message,
                input_schema=request.input_schema,
                agent=frame.agent,
                branch=frame.branch,
                expires_at=expiry(request.timeout_seconds),
                opened_at=now,
            )
            opened.append((asked, request))
        return opened

    async def _wait_for_answers(self, frame: _Frame, ids: list[str]) -> Answers:
        """Wait until requests ``ids`` are answered or expired; return the reply event and
        what the re-dispatched calls receive."""
        if frame.node is not None:
            self.graph_nodes[frame.node.key] = "waiting"
        self._exec.status_changed()
        while True:
            deadline = self.book.earliest_expiry(ids)
            step_at = self.book.next_escalation(ids)
            # Asked only of requests with reminders: other runs record no marker.
            if step_at is not None and self._exec.patched(gates.APPROVAL_ESCALATION):
                if await self._wait_or_escalate(ids, step_at, deadline):
                    break
                continue
            if deadline is None:
                await self._exec.wait_until(lambda: self.book.answered(ids))
                break
            remaining = deadline - self._exec.now()
            if remaining > 0 and await self._exec.wait_until(
                lambda: self.book.answered(ids), timeout=remaining
            ):
                break
            self.book.expire(ids, self._exec.now())
            if self.book.answered(ids):
                break
        answers = Answers()
        now = self._exec.now()
        parts = [reply_part(taken, answers, now) for taken in self.book.take(ids)]
        if frame.node is not None:
            self.graph_nodes[frame.node.key] = "running"
        self._exec.status_changed()
        answers.reply = self._event(frame, "user", types.Content(role="user", parts=parts))
        return answers

    async def _wait_or_escalate(
        self, ids: list[str], step_at: float, deadline: float | None
    ) -> bool:
        """Wait for the answers until the next reminder or reassignment (or expiry) is due,
        then take what is due; whether the requests ``ids`` are all answered (or expired)."""
        wake = step_at if deadline is None else min(step_at, deadline)
        remaining = wake - self._exec.now()
        if remaining > 0 and await self._exec.wait_until(
            lambda: self.book.answered(ids), timeout=remaining
        ):
            return True
        now = self._exec.now()
        for pending, step in self.book.escalate(ids, now):
            await self._exec.escalated(pending, step)
        self.book.expire(ids, now)
        self._exec.status_changed()
        return self.book.answered(ids)

    # ------------------------------------------------------------ compaction

    async def _compact(self, frame: _Frame) -> None:
        """Compact the session when the app asks, as the invocation ends or pauses (ADK
        compacts after an invocation); the step leaves open requests' events alone."""
        root = self._trees.get(self.agent)
        config = root.compaction if root is not None else None
        if config is None or not self._exec.patched(gates.COMPACTION):
            return
        inp = CompactionInput(
            ref=self._ref(frame),
            config=config,
            event_id=self._exec.new_id(),
            timestamp=self._exec.now(),
            budgets=self._budgets,
            timeout_seconds=self._config.model_timeout_seconds,
        )
        result = await self._exec.compact(inp, summary=f"{frame.agent} · compaction")
        self.usage += result.usage

    # ------------------------------------------------------ long-running tools

    def _open_long_running(self, frame: _Frame, calls: Sequence[PlannedCall]) -> None:
        """Open an input request for each long-running call: its answer is the call's
        function response, addressed by the call id."""
        now = self._exec.now()
        for call in calls:
            if not call.options.long_running:
                continue
            message = (
                f"the long-running tool {call.name!r} waits for its result: answer with the "
                "function response, a JSON object"
            )
            request = InputRequest(
                interrupt_id=call.id,
                function_call_id=call.id,
                message=message,
                input_schema=_FUNCTION_RESPONSE_SCHEMA,
            )
            pending = PendingInput(
                kind="input",
                id=call.id,
                function_call_id=call.id,
                tool=call.name,
                args=call.args,
                message=message,
                input_schema=_FUNCTION_RESPONSE_SCHEMA,
                agent=frame.agent,
                branch=frame.branch,
                long_running=True,
                opened_at=now,
            )
            self.book.open(pending, request)
        self._exec.status_changed()

    async def _after_turn(self, frame: _Frame, outcome: _Outcome) -> Event | None:
        """Where ADK's run would end, an agent whose long-running calls have had no
        response yet waits for one; the user's function responses then go to the model.
        ``None``: nothing to wait for, the outcome stands."""
        if outcome.error is not None or outcome.ended:
            return None
        held = [
            p.id
            for p in self.book.opened()
            if isinstance(p, PendingInput)
            and p.long_running
            and p.agent == frame.agent
            and p.branch == frame.branch
        ]
        if not held:
            return None
        self._exec.status_changed()
        await self._exec.wait_until(lambda: any(self.book.answered([i]) for i in held))
        parts: list[types.Part] = []
        taken = self.book.take([i for i in held if self.book.answered([i])])
        for pending, answer, _ in taken:
            assert isinstance(answer, ResumeInput)  # the request is an input request
            response = types.FunctionResponse(
                id=pending.function_call_id, name=pending.tool, response=answer.input
            )
            parts.append(types.Part(function_response=response))
        self._exec.status_changed()
        event = self._event(frame, "user", types.Content(role="user", parts=parts))
        # Who answered, beside the response the model reads (never inside it).
        event.custom_metadata = answered_metadata(taken)
        return event

    # --------------------------------------------------------------- helpers

    def _event(
        self,
        frame: _Frame,
        author: str,
        content: types.Content | None,
        actions: EventActions | None = None,
    ) -> Event:
        return Event(
            id=self._exec.new_id(),
            invocation_id=self.invocation_id,
            author=author,
            branch=frame.branch,
            isolation_scope=frame.isolation_scope,
            content=content,
            actions=actions or EventActions(),
            timestamp=self._exec.now(),
        )

    def result_of(self, status: AdkStatus, error: str | None) -> InvocationResult:
        """The invocation's result as it stands, ended ``status`` for ``error``: for an
        engine that ended it for a reason of its own (a failed step, a stop)."""
        return InvocationResult(
            invocation_id=self.invocation_id,
            status=status,
            final_text=self.final_text,
            steps=self.step,
            error=error,
            usage=self.usage,
        )

    def _finish(
        self, status: AdkStatus, *, text: str = "", error: str | None = None
    ) -> InvocationResult:
        self.final_text = text
        self.error = error
        self._ended_as = status
        self._exec.status_changed()
        return self.result_of(status, error)
