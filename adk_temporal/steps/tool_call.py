"""The tool call: run one tool handler with a real ``ToolContext``, stage what it returned.

The handler reads the session state as of the step (plus its own writes), saves artifacts
through the artifact service, may request confirmation or input, and everything it
recorded comes back as ``EventActions``. The step runs in phases: resolve the tool and its
context, run it, then check what it returned and stage the response.

Failures: a :class:`~adk_temporal.errors.ToolError`, invalid arguments and a rejected call
become ``{"error": ...}`` responses at once. Any other exception fails the step, which the
engine retries under the tool's retry policy (the flow tells the model after the last
attempt). What the tool returned or recorded is checked before it leaves the step: a value
JSON cannot represent, or one over its budget, becomes an error response for the model —
the step never fails on it, so its side effects are never run again for it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic_core
from google.genai import types

from ..agents import Agent
from ..approvals import GRANT_KEY, ApprovalPolicy, Grant, effective_policy
from ..asyncutil import maybe_await
from ..budgets import Budgets, check_budget
from ..confirmation import (
    confirmation_hint,
    confirmation_required_response,
    rejected_response,
    stale_hint,
)
from ..context import ToolContext
from ..errors import (
    BudgetExceededError,
    InvalidToolArgumentsError,
    ToolError,
    UnencodableValueError,
)
from ..events import Event, EventActions, ToolConfirmation
from ..faults import fault_point
from ..flow.messages import InDoubtResult, StagedResult, ToolCallInput, ToolOptions, stage_id
from ..sessions import SessionService
from ..state import TEMP_PREFIX
from ..tools import FunctionTool
from ..tracing import record_tool_call, span
from .effects import EffectGuard, InDoubt, begin_effect, call_key
from .event_callbacks import run_event_callbacks
from .heartbeat import Heartbeat, heartbeating
from .ref import SessionRef
from .services import StepServices

__all__ = ["tool_call", "tool_options"]


async def tool_call(
    services: StepServices,
    inp: ToolCallInput,
    ref: SessionRef,
    *,
    attempt: int = 1,
    heartbeat: Heartbeat | None = None,
) -> StagedResult | InDoubtResult:
    """Run the call's handler (or its confirmation gate); stage the response, return deltas;
    a call with external effects that an earlier attempt began is in doubt instead.

    Args:
        services: What the step runs against.
        inp: The call.
        ref: The step's session, agent and invocation.
        attempt: Which attempt of the step this is (1 for the first), for its span.
        heartbeat: Called while the tool works, when the engine watches the step.
    """
    services.check_app(ref)
    agent = services.agents.llm_agent(ref.agent_name)
    tools = await services.agents.resolve_tools(agent.name)
    ctx = await _context(services, inp, ref, agent)
    tool = _tool(tools, inp)
    if inp.compensates is not None:
        ctx.effect = await _compensated(services.sessions, ref, inp.compensates.id)
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": inp.call.name,
        "gen_ai.tool.call.id": inp.call.id,
        "adk.agent": agent.name,
        "adk.attempt": attempt,
    }
    with span(f"execute_tool {inp.call.name}", attributes) as current:
        started = time.perf_counter()
        outcome = "raised"
        try:
            call = None
            if tool is None:
                known = ", ".join(t.name for t in tools) or "none"
                response: dict[str, Any] = {
                    "error": f"tool {inp.call.name!r} is not defined; available tools: {known}"
                }
            else:
                policy = effective_policy(tool.name, tool.approval, services.app.approval_policies)
                call = _Call(services, inp, ref, tool, ctx, policy, attempt)
                response = await _invoke(agent, call, dict(inp.call.args), heartbeat)
            actions = ctx.actions
            waiting = actions.requested_tool_confirmations or actions.requested_inputs
            outcome = "waiting" if waiting else "error" if "error" in response else "ok"
        except InDoubt as doubt:
            outcome = "in_doubt"
            return doubt.result
        finally:
            took = time.perf_counter() - started
            record_tool_call(current, tool=inp.call.name, outcome=outcome, seconds=took)
    granted = call.grant if call is not None else None
    staged = await _stage(services, inp, ref, agent, response, ctx.actions, granted)
    if call is not None and call.effect is not None:
        # After the response is staged: a retry finding the receipt open finds it there.
        await call.effect.returned(waiting=outcome == "waiting")
    return staged


def _tool(tools: list[FunctionTool], inp: ToolCallInput) -> FunctionTool | None:
    """The tool the call names; for a compensating call, the compensating tool of the one
    it undoes (never offered to the model, so found only then)."""
    found = next((t for t in tools if t.name == inp.call.name), None)
    if found is not None or inp.compensates is None:
        return found
    compensators = (t.compensator for t in tools if t.compensator is not None)
    return next((c for c in compensators if c.name == inp.call.name), None)


async def _compensated(sessions: SessionService, ref: SessionRef, call_id: str) -> EffectGuard:
    """The receipt of the call a compensating call undoes, for its ``ctx.effect_receipt``
    (and its notes)."""
    receipt = await sessions.effect(ref.key, call_key(ref, call_id))
    if receipt is None:
        raise ToolError(f"no receipt of call {call_id!r}: nothing to compensate")
    return EffectGuard(sessions, ref.key, receipt)


async def _context(
    services: StepServices, inp: ToolCallInput, ref: SessionRef, agent: Agent
) -> ToolContext:
    """The tool's context: the state as of the step, in a copy the tool may write to."""
    loaded = await services.load_session(ref)
    session = loaded.session.model_copy(
        update={"state": {**loaded.session.state, **inp.temp_state}}
    )
    ictx = services.invocation_context(
        ref,
        loaded,
        agent,
        session=session,
        resume_inputs=inp.resume_inputs,
        expired_inputs=inp.expired_inputs,
        run_config=inp.run_config,
    )
    return ToolContext(
        ictx,
        function_call_id=inp.call.id,
        actions=EventActions(),
        tool_confirmation=_as_sent(inp.tool_confirmation),
    )


def _as_sent(confirmation: ToolConfirmation | None) -> ToolConfirmation | None:
    """The user's answer as they sent it: an answer carries no hint, so the re-run tool
    reads none (ADK-Python ``tests/unittests/flows/llm_flows/test_request_confirmation.py``:
    the tool gets the function response's ``ToolConfirmation`` whole). Done here, on the
    worker, so the inputs the workflow records stay as they were."""
    if confirmation is None or not confirmation.hint:
        return confirmation
    return confirmation.model_copy(update={"hint": ""})


@dataclass
class _Call:
    """One call on its way through the gate: what it needs, and what it ran under."""

    services: StepServices
    inp: ToolCallInput
    ref: SessionRef
    tool: FunctionTool
    ctx: ToolContext
    policy: ApprovalPolicy | None
    attempt: int = 1
    grant: str | None = None
    """The standing grant the call ran under, unasked."""
    effect: EffectGuard | None = None
    """The receipt of a tool with external effects, begun right before its code ran."""

    def needs_confirmation(self, args: dict[str, Any]) -> bool:
        """The static gate: the tool's ``require_confirmation``, or any approval policy."""
        rule = self.tool.require_confirmation
        if isinstance(rule, bool):
            return rule or self.policy is not None
        return self.tool.requires_confirmation(args)


async def _gate(call: _Call, args: dict[str, Any]) -> dict[str, Any] | None:
    """The confirmation gate: the response that stops the call (a request, a rejection, an
    approval too old to act on), or ``None`` to run it — approved, or covered by a
    standing grant (noted in ``call.grant``)."""
    ctx, name = call.ctx, call.tool.name
    confirmation = ctx.tool_confirmation
    if confirmation is None:
        granted = await call.services.sessions.use_grant(
            call.ref.key, name, _as_declared(call.tool, args), ctx.idempotency_key, time.time()
        )
        if granted is not None:
            call.grant = granted.id
            return None
        ctx.request_confirmation(hint=confirmation_hint(name))
        return confirmation_required_response(name)
    if not confirmation.confirmed:
        return rejected_response(name)
    max_age = call.policy.max_age if call.policy is not None else None
    decided = call.inp.decided_at
    if max_age is not None and decided is not None:
        age = time.time() - decided
        if age > max_age.total_seconds():
            # Acting on an old decision is what max_age forbids: the request opens again.
            ctx.request_confirmation(hint=stale_hint(name, age, max_age.total_seconds()))
            ctx.actions.requested_tool_confirmations[ctx.function_call_id].stale = True
            return confirmation_required_response(name)
    if call.inp.grant is not None:
        grant = Grant.of(
            call.inp.grant, key=call.ref.key, tool=name, invocation_id=call.ref.invocation_id
        )
        await call.services.sessions.record_grant(grant)
        fault_point("grant.after_record")
    return None


def _as_declared(tool: FunctionTool, args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as its parameters read them (``"30"`` for an ``int`` is 30), so
    a grant's predicate compares what the tool would receive; as sent when they do not fit
    (the tool then refuses them itself)."""
    try:
        declared = tool.validate_args(args)
    except InvalidToolArgumentsError:
        return args
    plain = pydantic_core.to_jsonable_python(declared, fallback=str)
    return plain if isinstance(plain, dict) else args


async def _precheck(call: _Call, args: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's precheck, run just before its side effect with the arguments as the tool
    reads them: a refusal's response, or ``None``."""
    check = call.tool.precheck
    if check is None:
        return None
    reason = await maybe_await(check(_as_declared(call.tool, args), call.ctx))
    if reason is None:
        return None
    return {"error": f"tool {call.tool.name} refused the call before running it: {reason}"}


async def _invoke(
    agent: Agent, call: _Call, args: dict[str, Any], heartbeat: Heartbeat | None
) -> dict[str, Any]:
    """The tool's response, through its confirmation gate, the agent's tool callbacks and
    its precheck."""
    tool, ctx = call.tool, call.ctx
    if call.needs_confirmation(args):
        stopped = await _gate(call, args)
        if stopped is not None:
            return stopped
    try:
        if agent.before_tool_callback is not None:
            early = await maybe_await(agent.before_tool_callback(ctx, tool, args))
            if isinstance(early, dict):
                return early
        refused = await _precheck(call, args)
        if refused is not None:
            return refused
        async with heartbeating(heartbeat):
            response = await _run(call, args)
        if agent.after_tool_callback is not None:
            replaced = await maybe_await(agent.after_tool_callback(ctx, tool, args, response))
            if isinstance(replaced, dict):
                return replaced
        return response
    except (ToolError, InvalidToolArgumentsError) as err:
        return {"error": str(err) or type(err).__name__}


async def _run(call: _Call, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's code; for a tool with external effects, under its call's receipt.

    Raises:
        InDoubt: The call was begun by an earlier attempt, or its code raised (its effect
            may have happened): it is not run, or not again.
    """
    if call.tool.effects != "external":
        return await call.tool.run(args, call.ctx)
    guard = await begin_effect(call.services.sessions, call.inp, call.ref, call.tool, call.attempt)
    call.effect = call.ctx.effect = guard
    try:
        return await call.tool.run(args, call.ctx)
    except (ToolError, InvalidToolArgumentsError):
        raise  # the tool's own report of a failure, for the model: it ended
    except Exception as err:
        raise InDoubt(await guard.raised(err)) from err


async def _stage(
    services: StepServices,
    inp: ToolCallInput,
    ref: SessionRef,
    agent: Agent,
    response: dict[str, Any],
    actions: EventActions,
    granted: str | None = None,
) -> StagedResult:
    """Stage the response in the session store; only its id and the deltas travel back.
    ``granted`` names the standing grant the call ran under, cited in the event."""
    timeout = services.app.request_timeout
    default = timeout.total_seconds() if timeout is not None else None
    expire = inp.call.options.approval.expire_after if inp.call.options.approval else None
    for confirmation in actions.requested_tool_confirmations.values():
        if confirmation.timeout_seconds is None:
            # The policy's default action beats the app's wait, the tool's own beats both.
            confirmation.timeout_seconds = expire.total_seconds() if expire else default
    for request in actions.requested_inputs.values():
        if request.timeout_seconds is None:
            request.timeout_seconds = default
    problem = _problem(response, actions, inp.temp_state, inp.budgets)
    if problem is not None:
        # The side effects happened; what cannot be kept is what the tool reported.
        response = {"error": f"tool {inp.call.name} {problem}"}
        actions = EventActions(
            artifact_delta=actions.artifact_delta,
            skip_summarization=actions.skip_summarization,
            transfer_to_agent=actions.transfer_to_agent,
            escalate=actions.escalate,
            end_invocation=actions.end_invocation,
        )
    # A compensating call answers the call in doubt it undoes, under that call's id.
    answered = inp.compensates or inp.call
    if inp.compensates is not None:
        response = {"compensated": response}
    staged = Event(
        id=stage_id(ref.invocation_id, answered.id),
        invocation_id=ref.invocation_id,
        author=agent.name,
        branch=ref.branch,
        isolation_scope=ref.isolation_scope,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=answered.id, name=answered.name, response=response
                    )
                )
            ],
        ),
        actions=actions,
        timestamp=time.time(),
        custom_metadata={GRANT_KEY: {inp.call.id: granted}} if granted else None,
    )
    # Through the app's callbacks too: a redacted result is never stored, even staged.
    staged = await run_event_callbacks(services.app.on_event, staged)
    await services.sessions.stage_events(ref.key, [staged])
    return StagedResult(staged=staged.id, actions=actions)


def _problem(
    response: dict[str, Any],
    actions: EventActions,
    temp_state: dict[str, Any],
    budgets: Budgets,
) -> str | None:
    """Why the call's outcome cannot leave the step, or ``None``.

    The response goes to the session store; the state delta and the requests travel through
    workflow history, as do the invocation's ``temp:`` values, so each has its budget.
    """
    requests = {
        "confirmations": {
            k: v.model_dump() for k, v in actions.requested_tool_confirmations.items()
        },
        "inputs": {k: v.model_dump() for k, v in actions.requested_inputs.items()},
    }
    written = actions.state_delta.items()
    temp = {**temp_state, **{k: v for k, v in written if k.startswith(TEMP_PREFIX)}}
    try:
        check_budget(response, "the response", budgets.tool_response_bytes, "tool_response_bytes")
        for key, value in actions.state_delta.items():
            check_budget(value, f"state[{key!r}]", budgets.state_delta_bytes, "state_delta_bytes")
        check_budget(
            actions.state_delta, "the state delta", budgets.state_delta_bytes, "state_delta_bytes"
        )
        check_budget(temp, "the temp: state", budgets.state_delta_bytes, "state_delta_bytes")
        check_budget(requests, "the request", budgets.request_bytes, "request_bytes")
    except (BudgetExceededError, UnencodableValueError) as err:
        return f"returned what cannot be kept: {err}"
    return None


_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
"""The schema of a tool without parameters: only ``{}`` edits it."""


def tool_options(
    tool: FunctionTool | None, policies: Mapping[str, ApprovalPolicy] | None = None
) -> ToolOptions:
    """The activity options a tool declared, as plain numbers the workflow can use, with
    its approval policy (``policies``: the App's by tool name, which replace the tool's)."""
    if tool is None:
        return ToolOptions()
    policy = tool.retry_policy
    return ToolOptions(
        start_to_close_seconds=(
            tool.start_to_close_timeout.total_seconds() if tool.start_to_close_timeout else None
        ),
        heartbeat_seconds=(
            tool.heartbeat_timeout.total_seconds() if tool.heartbeat_timeout else None
        ),
        maximum_attempts=policy.maximum_attempts if policy else None,
        initial_interval_seconds=policy.initial_interval.total_seconds() if policy else None,
        backoff_coefficient=policy.backoff_coefficient if policy else None,
        maximum_interval_seconds=(
            policy.maximum_interval.total_seconds() if policy and policy.maximum_interval else None
        ),
        non_retryable_error_types=(
            list(policy.non_retryable_error_types)
            if policy and policy.non_retryable_error_types
            else None
        ),
        on_failure=tool.on_failure,
        long_running=tool.is_long_running,
        edit_schema=(tool.parameters_schema() or _NO_PARAMETERS) if tool.editable else None,
        approval=effective_policy(tool.name, tool.approval, policies or {}),
        compensator=tool.compensator.name if tool.compensator is not None else None,
    )
