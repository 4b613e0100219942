"""The model step: append the step's new events, call the model once, record its reply.

Everything the model sees is read from the session store, so the step's input is only ids
plus the events that are new since the previous step. The step runs in phases — open it
(load the session, answer a retry from what is stored), build the request, call the model,
record the reply — each a function of its own below.

The pending events and the model event are appended in one transaction, after the model
answered (a streamed step stores the pending events first, so that followers see them ahead
of the reply). A retry after that append returns the stored reply instead of calling the
model again, so each step produces at most one model event (none for a reply with neither
content nor error, as ADK-Go skips it); a retry before it finds the pending events still to
store and stores them with the reply.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Container, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any

from google.genai import types

from ..agents import Agent, AgentTool
from ..approvals import ApprovalPolicy
from ..asyncutil import maybe_await
from ..budgets import Budgets, json_size
from ..context import CallbackContext, InvocationContext, ReadonlyContext
from ..continuation import agent_to_continue
from ..errors import (
    BudgetExceededError,
    ModelUnavailableError,
    OutputSchemaError,
    UnencodableValueError,
)
from ..events import ADK_ID_PREFIX, Event, EventActions
from ..faults import fault_point
from ..flow.messages import (
    AgentSpec,
    CallsStep,
    DelegateStep,
    EndedStep,
    ErrorStep,
    FinalStep,
    ModelStepInput,
    ModelStepReply,
    ModelStepResult,
    OverBudgetStep,
    PlannedCall,
    RouteStep,
)
from ..history import build_contents, copy_contents, current_turn
from ..instructions import join_instructions
from ..models import GeminiModel, LlmRequest, LlmResponse, Model, stream_model
from ..output import record_output
from ..tools import FunctionTool
from ..tracing import record_model_step, span
from ..usage import TokenUsage
from .agent_node import mark_answer, sees_current_turn_only, show_node_input
from .agent_spec import describe_tree, with_local_agents
from .forwarding import PartialForwarder
from .heartbeat import Heartbeat, heartbeating
from .pacing import pace
from .ref import SessionRef
from .reservation import reserve_step, reserved
from .services import StepServices
from .session_cache import LoadedSession
from .tool_call import tool_options
from .writes import append_to_session, stored_form

__all__ = ["model_step"]


@dataclass
class _Step:
    """One model step under way: what it read, what it will store."""

    services: StepServices
    inp: ModelStepInput
    ref: SessionRef
    agent: Agent
    loaded: LoadedSession
    tools: list[FunctionTool]
    tree: AgentSpec | None
    new: list[Event]
    """The pending events in their stored form, not stored yet."""
    unstage: list[str]
    """The staged responses ``new`` was made from, removed when it is stored."""
    ictx: InvocationContext
    actions: EventActions = field(default_factory=EventActions)

    @property
    def model(self) -> str:
        """The model the agent calls: its own or the nearest one above it."""
        return self.services.agents.model_of(self.agent.name)

    @property
    def key_base(self) -> str:
        # One key per step and callback site: a fixed key would make a save in step 2 look
        # like a retry of step 1's save of the same name.
        return f"{self.ref.workflow_id}/{self.ref.invocation_id}/step-{self.inp.step}"

    def event(self, content: types.Content | None, actions: EventActions) -> Event:
        """An event of this step's agent with the step's id."""
        return Event(
            id=self.inp.model_event_id,
            invocation_id=self.ref.invocation_id,
            author=self.agent.name,
            branch=self.ref.branch,
            isolation_scope=self.ref.isolation_scope,
            content=content,
            actions=actions,
            timestamp=self.inp.timestamp,
        )

    async def store(self, events: list[Event]) -> None:
        """Append the pending events and ``events`` in one write."""
        await append_to_session(self.services, self.ref, [*self.new, *events], self.unstage)
        fault_point("session.after_append")


async def model_step(
    services: StepServices,
    inp: ModelStepInput,
    ref: SessionRef,
    *,
    attempt: int = 1,
    heartbeat: Heartbeat | None = None,
) -> ModelStepReply:
    """Call the model on the session plus ``inp.pending_events``; store both with the reply.

    A step of a limited model sent to another queue than its limit's, or of an app this
    worker does not serve, touches nothing and answers where it must run (:class:`RouteStep`).

    Args:
        services: What the step runs against.
        inp: The step.
        ref: The step's session, agent and invocation.
        attempt: Which attempt of the step this is; marks the pieces it streams.
        heartbeat: Called while the model works, when the engine watches the step.
    """
    if not services.serves(ref):
        # Nothing touched: the engine moves the run's steps to the app's own queue.
        return RouteStep(kind="route", group=None, app=ref.key.app_name)
    chosen = await _continuing_agent(services, inp, ref) if inp.choose_agent else None
    step_ref = ref if chosen is None else replace(ref, agent_name=chosen)
    reply = await _step(services, inp, step_ref, attempt, heartbeat)
    if isinstance(reply, RouteStep | DelegateStep | OverBudgetStep):
        return reply
    if services.app.token_budgets.bounded():
        # Under the step's event id: a retry that finds the reply stored counts it once.
        # This settles the step's reservation, also for a model that reports no usage.
        tokens = reply.usage.total_tokens if reply.usage is not None else 0
        await services.sessions.record_tokens(ref.key, inp.model_event_id, tokens)
    return reply if chosen is None else reply.model_copy(update={"agent": chosen})


async def _continuing_agent(
    services: StepServices, inp: ModelStepInput, ref: SessionRef
) -> str | None:
    """The agent a follow-up message goes to, when the step's root agent is not it."""
    if services.agents.parent(ref.agent_name) is not None:
        return None  # a sub-agent named explicitly runs as named
    loaded = await services.load_session(ref)
    message = next(
        (e.content for e in inp.pending_events if isinstance(e, Event) and e.author == "user"),
        None,
    )
    chosen = agent_to_continue(services.agents, ref.agent_name, loaded.stored.events, message)
    return chosen if chosen != ref.agent_name else None


async def _step(
    services: StepServices,
    inp: ModelStepInput,
    ref: SessionRef,
    attempt: int,
    heartbeat: Heartbeat | None,
) -> ModelStepReply:
    agent = services.agents[ref.agent_name]
    workflow_agent = not isinstance(agent, Agent)
    if isinstance(agent, Agent):
        group = services.model_group(services.agents.model_of(agent.name))
        if group != inp.model_group:
            return RouteStep(kind="route", group=group)
    loaded = await services.load_session(ref)
    if workflow_agent:
        new, unstage = await stored_form(
            services.sessions, ref, inp.pending_events, loaded.stored.ids
        )
        await append_to_session(services, ref, new, unstage)
        return DelegateStep(kind="delegate", tree=_tree(services, ref))
    over = await _over_budget(services, inp, ref, loaded)
    if over is not None:
        return over
    step_or_result = await _open(services, inp, ref, loaded)
    if not isinstance(step_or_result, _Step):
        return step_or_result
    step = step_or_result
    cctx = CallbackContext(
        step.ictx, actions=step.actions, idempotency_key=f"{step.key_base}/model"
    )
    if inp.run_before_agent and step.agent.before_agent_callback is not None:
        content = await maybe_await(step.agent.before_agent_callback(cctx))
        if isinstance(content, types.Content):
            event = step.event(content, step.actions)
            ended = EndedStep(kind="ended", text=event.text(), actions=step.actions, tree=step.tree)
            _check_reply(ended, inp.budgets)
            await step.store([event])
            return ended
    request = await _request(step)
    held = await reserve_step(services, inp, ref, request, heartbeat)
    if held is not None:
        return held
    async with reserved(services, inp, ref):
        return await _answer(step, cctx, request, attempt, heartbeat)


async def _answer(
    step: _Step,
    cctx: CallbackContext,
    request: LlmRequest,
    attempt: int,
    heartbeat: Heartbeat | None,
) -> ModelStepResult:
    """Call the model and record its reply."""
    taken = _taken_ids(step)
    try:
        response = await _call_model(step, cctx, request, attempt, heartbeat)
    except ModelUnavailableError as err:
        # A provider may ask for hours; the worker's bound keeps the run moving.
        if err.retry_after is not None:
            err.retry_after = min(
                err.retry_after, step.services.app.max_retry_after.total_seconds()
            )
        raise
    return await _record_reply(step, response, taken)


async def _over_budget(
    services: StepServices, inp: ModelStepInput, ref: SessionRef, loaded: LoadedSession
) -> OverBudgetStep | None:
    """The cumulative budget this step would start over, after recording its grants.

    Checked before anything is stored, so the flow can send the same pending events again
    once more is allowed. A retry of a step whose reply is stored goes on whatever was
    spent since: the model was called already.
    """
    budgets = services.app.token_budgets
    for grant in inp.grants:
        await services.sessions.grant_tokens(ref.key, grant.scope, grant.id, grant.tokens)
    if not budgets.bounded() or inp.model_event_id in loaded.stored.ids:
        return None
    totals = await services.sessions.token_totals(ref.key)
    crossed = budgets.crossed(totals.used, totals.granted)
    if crossed is None:
        return None
    return OverBudgetStep(kind="over_budget", **crossed.model_dump())


def _tree(services: StepServices, ref: SessionRef) -> AgentSpec:
    tree = describe_tree(services.agents, ref.agent_name, services.notify)
    if services.app.local_steps is not None:
        tree = with_local_agents(tree, services.local_model_steps)
    compaction = services.app.events_compaction_config
    if compaction is not None:
        tree = tree.model_copy(update={"compaction": compaction})
    if services.app.double_texting != "reject":
        tree = tree.model_copy(update={"double_texting": services.app.double_texting})
    return tree.model_copy(update={"own_queue": True}) if services.app_name else tree


async def _open(
    services: StepServices, inp: ModelStepInput, ref: SessionRef, loaded: LoadedSession
) -> _Step | ModelStepResult:
    """The step with its session as the model will see it, or the reply a retry finds."""
    tree = _tree(services, ref) if inp.describe else None
    agent = services.agents.llm_agent(ref.agent_name)
    # Toolsets list here, worker side: the listing reaches history only as the reply's
    # planned calls and their options, so the workflow never depends on a live server.
    tools = await services.agents.resolve_tools(agent.name)
    recorded = loaded.stored.ids.get(inp.model_event_id)
    if recorded is not None:
        return _result(
            recorded, tools, tree, services.app.approval_policies, _local_tools(services, tools)
        )
    resolved, unstage = await stored_form(
        services.sessions, ref, inp.pending_events, loaded.stored.ids
    )
    new = [e for e in resolved if e.id not in loaded.stored.ids]
    # The model and the callbacks see the pending events as if already stored.
    session = loaded.session
    session.events.extend(new)
    for event in new:
        session.state.update(event.actions.state_delta)
    session.state.update(inp.temp_state)
    if inp.node_input is not None:
        show_node_input(session.events, ref, inp.node_input, loaded)
    ictx = services.invocation_context(ref, loaded, agent, run_config=inp.run_config)
    return _Step(services, inp, ref, agent, loaded, tools, tree, new, unstage, ictx)


CONTINUE = (
    "Continue with the earlier requests as instructed. Stop, or give a summary, if nothing "
    "more is needed."
)
"""The user turn added when the contents end on a model turn (ADK-Go's contents processor,
ADK-Python's ``_maybe_append_user_content``)."""


async def _request(step: _Step) -> LlmRequest:
    """What the agent sends the model: its view of the session, instruction and tools.

    The instruction's templates and providers run here, on the worker, never in the
    workflow; the global instruction is that of the tree's root, when it is an LLM agent.

    Raises:
        InstructionKeyError: An instruction template names a missing state key or artifact.
    """
    agent, ref = step.agent, step.ref
    agents = step.services.agents
    top = agents[agents.root_of(agent.name)]
    root = top if isinstance(top, Agent) and top is not agent else None
    system = await agent.system_instruction(ReadonlyContext(step.ictx), root=root)
    # ADK-Go's order: the instructions, then what the agent may transfer to.
    system = join_instructions(system, agents.transfer_instruction(agent.name))
    view = {"agent_name": agent.name, "branch": ref.branch, "isolation_scope": ref.isolation_scope}
    events = step.loaded.session.events
    if sees_current_turn_only(agent, ref):
        contents = build_contents(current_turn(events, **view), **view)
    elif ref.node_path:
        # The node's input is shown among the stored events, which the worker's cached
        # contents do not have.
        contents = build_contents(events, **view)
    else:
        contents = step.loaded.stored.contents(events, **view)
        # The worker keeps the contents for the next step; a callback may change them.
        if agent.before_model_callback:
            contents = copy_contents(contents)
    if contents and contents[-1].role != "user":
        # Both ADKs: a request ending on the model's own turn (its thoughts, say) would get
        # an empty reply; a user turn asks it to go on.
        contents = [*contents, types.Content(role="user", parts=[types.Part(text=CONTINUE)])]
    return LlmRequest(
        contents=contents,
        model=step.model,
        system_instruction=system or None,
        tools=[t.declaration() for t in step.tools],
        generation_config=agent.request_config,
    )


def _taken_ids(step: _Step) -> tuple[Container[str], ...]:
    """Ids the reply's calls must not reuse: stored calls and those of the pending events.

    Taken before a streamed step stores the pending events ahead of the reply.
    """
    return (
        step.loaded.stored.call_ids,
        {c.id for e in step.new for c in e.function_calls() if c.id},
    )


async def _call_model(
    step: _Step,
    cctx: CallbackContext,
    request: LlmRequest,
    attempt: int,
    heartbeat: Heartbeat | None,
) -> LlmResponse:
    """The model's reply, through the agent's model callbacks, streamed when asked."""
    forwarder = await _forwarder(step, attempt) if step.inp.stream else None
    agent = step.agent
    async with heartbeating(heartbeat):
        if agent.before_model_callback is not None:
            early = await maybe_await(agent.before_model_callback(cctx, request))
            if isinstance(early, LlmResponse):
                return early
        await pace(step.services, agent.model)
        response = await _generate(
            agent, step.model, step.services.models.resolve(step.model), request, forwarder
        )
        fault_point("model.during_call")
        if agent.after_model_callback is not None:
            replaced = await maybe_await(agent.after_model_callback(cctx, response))
            if isinstance(replaced, LlmResponse):
                return replaced
    return response


async def _forwarder(step: _Step, attempt: int) -> PartialForwarder:
    """The forwarder of a streamed step's pieces, the pending events stored first.

    Stored before the model is called, as ADK stores the user's message before the agent
    runs: followers then see the message, and the tool responses the model answers, ahead
    of the reply being written. Idempotent, so a retry is harmless. Not through
    ``step.store``: its fault point stands for the append of the reply.
    """
    if step.new or step.unstage:
        await append_to_session(step.services, step.ref, step.new, step.unstage)
    step.new, step.unstage = [], []
    # Pieces carry the reply's identity, not its actions: those are still changing.
    template = step.event(None, EventActions())
    return PartialForwarder(step.services.sessions, step.ref.key, template, attempt)


async def _generate(
    agent: Agent,
    name: str,
    model: Model,
    request: LlmRequest,
    forwarder: PartialForwarder | None,
) -> LlmResponse:
    """One call of ``model`` (registered as ``name``), traced."""
    with span(f"chat {name}", {"adk.agent": agent.name}) as current:
        started = time.perf_counter()
        if forwarder is None:
            response = await model.generate(request)
        else:
            async with forwarder:
                response = await _streamed(model, request, forwarder)
        usage = response.usage
        record_model_step(
            current,
            system="gcp.gemini" if isinstance(model, GeminiModel) else type(model).__name__,
            model=name,
            seconds=time.perf_counter() - started,
            input_tokens=usage.prompt_token_count if usage else None,
            output_tokens=usage.candidates_token_count if usage else None,
            finish_reason=response.finish_reason,
        )
    return response


async def _streamed(model: Model, request: LlmRequest, forwarder: PartialForwarder) -> LlmResponse:
    """The model's reply, its text forwarded piece by piece as the model streams it."""
    reply: LlmResponse | None = None
    async with aclosing(stream_model(model, request)) as chunks:
        async for chunk in chunks:
            if chunk.partial:
                forwarder.offer(chunk.text())
            else:
                reply = chunk
    if reply is None:
        raise ModelUnavailableError(None, f"model {model.name!r} ended its stream without a reply")
    return reply


async def _record_reply(
    step: _Step, response: LlmResponse, taken: Sequence[Container[str]]
) -> ModelStepResult:
    """Store the reply as the step's event (with an after-agent event) and say what it is.

    A reply with neither content nor error stores no event (ADK-Go's ``runOneStep`` skips
    it) and ends the agent's turn with no answer; a retry of such a step finds nothing
    stored and calls the model again.
    """
    # In a branch or a scope, steps of other branches or scopes may run concurrently and
    # choose the same ids: whether one is stored first is timing, so ids there are
    # always generated. At the top level steps never overlap.
    nested = bool(step.ref.branch or step.ref.isolation_scope)
    content = _with_call_ids(response.content, step.inp.model_event_id, taken, always=nested)
    event = step.event(content, step.actions)
    event.error_code = response.error_code
    event.error_message = response.error_message
    event.usage_metadata = response.usage
    # ADK-Go's finalizeModelResponseEvent: the calls of long-running tools are marked.
    long_running = {t.name for t in step.tools if t.is_long_running}
    event.long_running_tool_ids = [
        c.id for c in event.function_calls() if c.id and c.name in long_running
    ]
    local = _local_tools(step.services, step.tools)
    policies = step.services.app.approval_policies
    result = _result(event, step.tools, step.tree, policies, local)
    if isinstance(result, FinalStep):
        try:
            value = record_output(step.agent, event)
            if step.ref.node_path:
                mark_answer(event, step.ref, value)
        except OutputSchemaError as err:
            # The answer stays stored with the step; the invocation ends on the error.
            event.error_code, event.error_message = type(err).__name__, str(err)
            result = _result(event, step.tools, step.tree, policies, local)
    # Unlike ADK-Go, what the step's model callbacks recorded (state, artifact versions) is
    # not lost with an empty reply: it is stored on an event without content.
    empty = content is None and not (event.error_code or event.error_message)
    events = [] if empty and event.actions.is_empty() else [event]
    if isinstance(result, FinalStep):
        extra = await _after_agent(step)
        if extra is not None:
            events.append(extra)
            if extra.content is not None:
                result.text = extra.text()
    _check_reply(result, step.inp.budgets)
    await step.store(events)
    return result


def _check_reply(result: ModelStepResult, budgets: Budgets) -> None:
    """Refuse a reply that cannot cross history, before it is stored.

    Another attempt would only ask the model again for the same size of answer, and a
    stored reply this large would be sent to the model on every later turn: the step fails
    at once and stores nothing.

    Raises:
        BudgetExceededError: What the step reports is over ``model_reply_bytes`` (or is not
            strict JSON).
    """
    try:
        size = json_size(result.model_dump(mode="python"), "the model's reply")
    except UnencodableValueError as err:
        raise BudgetExceededError(f"the model's reply cannot cross history: {err}") from None
    limit = budgets.model_reply_bytes
    if size > limit:
        raise BudgetExceededError(
            f"the model's reply is {size} bytes, over the model_reply_bytes budget of {limit} "
            "bytes; ask the model for less (generation_config max_output_tokens) or raise "
            "Budgets.model_reply_bytes (history payloads stop at 2 MB)"
        )


async def _after_agent(step: _Step) -> Event | None:
    """The event of the agent's after-agent callback, when it answered or changed state."""
    callback = step.agent.after_agent_callback
    if callback is None:
        return None
    actions = EventActions()
    ctx = CallbackContext(
        step.ictx, actions=actions, idempotency_key=f"{step.key_base}/after_agent"
    )
    after = await maybe_await(callback(ctx))
    if not isinstance(after, types.Content) and actions.is_empty():
        return None
    extra = step.event(after if isinstance(after, types.Content) else None, actions)
    extra.id = _derived_id(step.inp.model_event_id, "after_agent")
    return extra


def _local_tools(services: StepServices, tools: list[FunctionTool]) -> frozenset[str]:
    """The tools whose calls may run as local activities (``App.local_steps``)."""
    if services.app.local_steps is None:
        return frozenset()
    return frozenset(t.name for t in tools if services.local_tool(t))


def _result(
    event: Event,
    tools: list[FunctionTool],
    tree: AgentSpec | None,
    policies: Mapping[str, ApprovalPolicy],
    local_tools: Container[str] = frozenset(),
) -> CallsStep | FinalStep | ErrorStep:
    """What the flow needs from a recorded model event (``policies``: the App's approval
    policies by tool, which replace the tools' own); the calls of ``local_tools`` are marked
    to run as local activities."""
    # A model that reports no usage adds nothing to the payload.
    usage = TokenUsage.of(event.usage_metadata) if event.usage_metadata else None
    common: dict[str, Any] = {"actions": event.actions, "tree": tree, "usage": usage}
    if event.error_code or event.error_message:
        return ErrorStep(
            kind="error",
            error_code=event.error_code,
            error_message=event.error_message,
            **common,
        )
    calls = event.function_calls()
    if not calls:
        if event.is_final_response() and not _thought_only(event):
            return FinalStep(kind="final", text=event.text(), **common)
        # ADK-Go's Flow.Run calls the model again after a reply that is no answer: thoughts
        # only, or one ending in a code-execution result the model has yet to read. There
        # is nothing to run: the flow steps on, within its step limit.
        return CallsStep(kind="calls", function_calls=[], **common)
    by_name: dict[str, FunctionTool] = {}
    for tool in tools:
        by_name.setdefault(tool.name, tool)
    return CallsStep(
        kind="calls",
        function_calls=[
            _planned(c, by_name.get(c.name or ""), policies, local_tools) for c in calls
        ],
        **common,
    )


def _thought_only(event: Event) -> bool:
    """True for a reply whose every part is a thought (ADK-Go's ``isThoughtOnlyTurn``).

    A part with a thought signature only is not a thought: the signature rides on an answer.
    """
    parts = event.parts()
    return bool(parts) and all(p.thought for p in parts)


def _planned(
    call: types.FunctionCall,
    tool: FunctionTool | None,
    policies: Mapping[str, ApprovalPolicy],
    local_tools: Container[str],
) -> PlannedCall:
    options = tool_options(tool, policies)
    if tool is not None and tool.name in local_tools:
        options = options.model_copy(update={"local": True})
    return PlannedCall(
        id=call.id or "",
        name=call.name or "",
        args=dict(call.args or {}),
        options=options,
        agent_tool=tool.agent.name if isinstance(tool, AgentTool) else None,
    )


def _derived_id(base: str, suffix: str) -> str:
    """An id derived from a workflow-decided one, identical on every retry."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{base}/{suffix}"))


def _with_call_ids(
    content: types.Content | None,
    model_event_id: str,
    taken: Sequence[Container[str]],
    *,
    always: bool,
) -> types.Content | None:
    """Give every function call an id unique in the session; stable across retries.

    A call without an id, with one an earlier call of the session already uses (a scripted
    model numbering calls per branch, say), or any call when ``always``, gets a generated
    id: the id keys the call's idempotency and, for agent tools, its isolation scope, so it
    must not repeat. Generated ids start with ``adk-`` so history building blanks them
    before they reach the model, as ADK does for client-side ids.
    """
    if content is None or not content.parts:
        return content
    parts = []
    for index, part in enumerate(content.parts):
        call = part.function_call
        if call is not None and (always or not call.id or any(call.id in t for t in taken)):
            call = call.model_copy(
                update={"id": ADK_ID_PREFIX + _derived_id(model_event_id, f"call/{index}")}
            )
            part = part.model_copy(update={"function_call": call})
        parts.append(part)
    return content.model_copy(update={"parts": parts})
