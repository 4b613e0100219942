"""``adk_tool_call``: run one tool handler with a real ``ToolContext``.

The handler reads the session state as of the step (plus its own writes), saves artifacts
through the worker's artifact service, may request confirmation or input, and everything it
recorded comes back as ``EventActions`` in the result.

Failures: a :class:`~adk_temporal.errors.ToolError`, invalid arguments and a rejected call
become ``{"error": ...}`` responses at once. Any other exception fails the step, which
Temporal retries under the tool's retry policy (the flow tells the model after the last
attempt). What the tool returned or recorded is checked before it leaves the step: a value
JSON cannot represent, or one over its budget, becomes an error response for the model —
the step never fails on it, so its side effects are never run again for it.
:meth:`ToolCallActivity.execute` is the step itself, free of Temporal's activity context,
so the in-process runner calls it directly; :meth:`ToolCallActivity.run` is the activity.
"""

from __future__ import annotations

import time
from typing import Any

from google.genai import types
from temporalio import activity

from adk_temporal.agents import Agent
from adk_temporal.asyncutil import maybe_await
from adk_temporal.budgets import Budgets, check_budget
from adk_temporal.confirmation import (
    confirmation_hint,
    confirmation_required_response,
    rejected_response,
)
from adk_temporal.context import ToolContext
from adk_temporal.errors import (
    BudgetExceededError,
    InvalidToolArgumentsError,
    ToolError,
    UnencodableValueError,
)
from adk_temporal.events import Event, EventActions
from adk_temporal.flow.messages import ToolCallInput, ToolCallResult, stage_id
from adk_temporal.state import TEMP_PREFIX
from adk_temporal.tools import FunctionTool
from adk_temporal.tracing import record_tool_call, span

from .services import WorkerServices, current_workflow_id, heartbeating, translate_errors

__all__ = ["ToolCallActivity"]


def _error_response(err: BaseException) -> dict[str, Any]:
    return {"error": str(err) or type(err).__name__}


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


class ToolCallActivity:
    """Runs one function call of an agent against the worker's services."""

    def __init__(self, services: WorkerServices) -> None:
        self._services = services

    @activity.defn(name="adk_tool_call")
    @translate_errors
    async def run(self, inp: ToolCallInput) -> ToolCallResult:
        """The tool step as a Temporal activity (see :meth:`execute`)."""
        return await self.execute(
            inp, workflow_id=current_workflow_id(), attempt=activity.info().attempt
        )

    async def execute(
        self, inp: ToolCallInput, *, workflow_id: str, attempt: int = 1
    ) -> ToolCallResult:
        """Run the call's handler (or its confirmation gate) and return response + deltas.

        Args:
            inp: The call.
            workflow_id: The id of the invocation's workflow; it spells the session ids
                ``inp.ref`` leaves out and is part of ``ctx.idempotency_key``.
            attempt: Which attempt of the step this is (1 for the first), for its span.
        """
        services = self._services
        ref = inp.ref.resolved(workflow_id)
        agent = services.agents.llm_agent(ref.agent_name)
        tools = await services.agents.resolve_tools(agent.name)
        loaded = await services.load_session(ref)
        # The tool sees the state as of the step, not the events: a copy it may write to.
        session = loaded.session.model_copy(
            update={"state": {**loaded.session.state, **inp.temp_state}}
        )
        ictx = services.invocation_context(
            ref,
            loaded,
            agent,
            session=session,
            workflow_id=workflow_id,
            resume_inputs=inp.resume_inputs,
            expired_inputs=inp.expired_inputs,
        )
        actions = EventActions()
        ctx = ToolContext(
            ictx,
            function_call_id=inp.call.id,
            actions=actions,
            tool_confirmation=inp.tool_confirmation,
        )
        tool = next((t for t in tools if t.name == inp.call.name), None)
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
                if tool is None:
                    known = ", ".join(t.name for t in tools) or "none"
                    response: dict[str, Any] = {
                        "error": f"tool {inp.call.name!r} is not defined; available tools: {known}"
                    }
                else:
                    response = await self._invoke(agent, tool, dict(inp.call.args), ctx)
                waiting = actions.requested_tool_confirmations or actions.requested_inputs
                outcome = "waiting" if waiting else "error" if "error" in response else "ok"
            finally:
                took = time.perf_counter() - started
                record_tool_call(current, tool=inp.call.name, outcome=outcome, seconds=took)
        default = services.request_timeout_seconds
        for confirmation in actions.requested_tool_confirmations.values():
            if confirmation.timeout_seconds is None:
                confirmation.timeout_seconds = default
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
        # The response goes to the store, not into history: only its id and the deltas
        # (bounded by their budgets) travel back.
        staged = Event(
            id=stage_id(ref.invocation_id, inp.call.id),
            invocation_id=ref.invocation_id,
            author=agent.name,
            branch=ref.branch,
            isolation_scope=ref.isolation_scope,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=inp.call.id, name=inp.call.name, response=response
                        )
                    )
                ],
            ),
            actions=actions,
            timestamp=time.time(),
        )
        await services.sessions.stage_events(
            app_name=ref.app_name, user_id=ref.user_id, session_id=ref.session_id, events=[staged]
        )
        return ToolCallResult(staged=staged.id, actions=actions)

    async def _invoke(
        self, agent: Agent, tool: FunctionTool, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any]:
        if tool.requires_confirmation(args):
            if ctx.tool_confirmation is None:
                ctx.request_confirmation(hint=confirmation_hint(tool.name))
                return confirmation_required_response(tool.name)
            if not ctx.tool_confirmation.confirmed:
                return rejected_response(tool.name)
        try:
            if agent.before_tool_callback is not None:
                early = await maybe_await(agent.before_tool_callback(ctx, tool, args))
                if isinstance(early, dict):
                    return early
            async with heartbeating():
                response = await tool.run(args, ctx)
            if agent.after_tool_callback is not None:
                replaced = await maybe_await(agent.after_tool_callback(ctx, tool, args, response))
                if isinstance(replaced, dict):
                    return replaced
            return response
        except (ToolError, InvalidToolArgumentsError) as err:
            return _error_response(err)
