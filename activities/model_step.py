"""``adk_model_step``: append the step's new events, call the model once, record its reply.

Everything the model sees is read worker-side from the session service, so the activity's
input is only ids plus the events that are new since the previous step. :meth:`execute`
is the step itself, free of Temporal's activity context, so the in-process runner calls
it directly; :meth:`run` is the activity.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Container, Sequence
from contextlib import aclosing
from typing import Any

from google.genai import types
from temporalio import activity

from adk_temporal.agents import Agent, AgentTool
from adk_temporal.asyncutil import maybe_await
from adk_temporal.context import CallbackContext, ReadonlyContext
from adk_temporal.errors import ModelUnavailableError, OutputSchemaError
from adk_temporal.events import ADK_ID_PREFIX, Event, EventActions
from adk_temporal.faults import fault_point
from adk_temporal.flow.messages import (
    AgentSpec,
    CallsStep,
    DelegateStep,
    EndedStep,
    ErrorStep,
    FinalStep,
    ModelStepInput,
    ModelStepResult,
    PlannedCall,
    SessionRef,
    ToolOptions,
)
from adk_temporal.history import build_contents, copy_contents, current_turn
from adk_temporal.models import GeminiModel, LlmRequest, LlmResponse, Model, stream_model
from adk_temporal.output import record_output
from adk_temporal.tools import FunctionTool
from adk_temporal.tracing import record_model_step, span
from adk_temporal.usage import TokenUsage

from .agent_spec import describe_tree
from .forwarding import PartialForwarder
from .services import (
    WorkerServices,
    append_to_session,
    current_workflow_id,
    heartbeating,
    stored_form,
    translate_errors,
)
from .session_cache import StoredEvents

__all__ = ["ModelStepActivity", "tool_options"]


def _derived_id(base: str, suffix: str) -> str:
    """An id derived from a workflow-decided one, identical on every retry."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{base}/{suffix}"))


def tool_options(tool: FunctionTool | None) -> ToolOptions:
    """The activity options a tool declared, as plain numbers the workflow can use."""
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
    )


def _result(
    event: Event, tools: list[FunctionTool], tree: AgentSpec | None
) -> CallsStep | FinalStep | ErrorStep:
    """What the flow needs from a recorded model event."""
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
        return FinalStep(kind="final", text=event.text(), **common)
    return CallsStep(
        kind="calls",
        function_calls=[
            _planned(c, next((t for t in tools if t.name == c.name), None)) for c in calls
        ],
        **common,
    )


def _system(model: Model) -> str:
    """A model's ``gen_ai.system``: the conventions' name for Gemini, else its class."""
    return "gcp.gemini" if isinstance(model, GeminiModel) else type(model).__name__


def _contents(
    agent: Agent, ref: SessionRef, events: Sequence[Event], stored: StoredEvents
) -> list[types.Content]:
    """What the model sees of the session: the history, or only the current turn."""
    view = {"agent_name": agent.name, "branch": ref.branch, "isolation_scope": ref.isolation_scope}
    if agent.include_contents == "none":
        return build_contents(current_turn(events, **view), **view)
    contents = stored.contents(events, **view)
    # The worker keeps the contents for the next step; a callback may change them.
    return copy_contents(contents) if agent.before_model_callback else contents


def _planned(call: types.FunctionCall, tool: FunctionTool | None) -> PlannedCall:
    return PlannedCall(
        id=call.id or "",
        name=call.name or "",
        args=dict(call.args or {}),
        options=tool_options(tool),
        agent_tool=tool.agent.name if isinstance(tool, AgentTool) else None,
    )


class ModelStepActivity:
    """Runs one model step of an agent against the worker's services."""

    def __init__(self, services: WorkerServices) -> None:
        self._services = services

    @activity.defn(name="adk_model_step")
    @translate_errors
    async def run(self, inp: ModelStepInput) -> ModelStepResult:
        """The model step as a Temporal activity (see :meth:`execute`)."""
        return await self.execute(
            inp, workflow_id=current_workflow_id(), attempt=activity.info().attempt
        )

    async def execute(
        self, inp: ModelStepInput, *, workflow_id: str, attempt: int = 1
    ) -> ModelStepResult:
        """Call the model on the session plus ``pending_events``; store both with the reply.

        The pending events and the model event are appended in one transaction, after the
        model answered (a streamed step stores the pending events first, so that followers
        see them ahead of the reply). A retry after that append returns the stored reply
        instead of calling the model again, so each step produces exactly one model event; a
        retry before it finds the pending events still to store and stores them with the
        reply.

        Args:
            inp: The step.
            workflow_id: The id of the invocation's workflow (``adk/{app}/{user}/{session}``
                in-process too): it spells the session ids ``inp.ref`` leaves out and keys
                idempotent saves.
            attempt: Which attempt of the step this is; marks the pieces it streams.
        """
        services = self._services
        ref = inp.ref.resolved(workflow_id)
        services.check_app(ref)
        registry = services.agents
        workflow_agent = not isinstance(registry[ref.agent_name], Agent)
        loaded = await services.load_session(ref)
        session, stored = loaded.session, loaded.stored
        if workflow_agent:
            new, unstage = await stored_form(services.sessions, ref, inp.pending_events, stored.ids)
            await append_to_session(services.sessions, ref, new, unstage)
            return DelegateStep(
                kind="delegate", tree=describe_tree(registry, ref.agent_name, services.notify)
            )
        tree = describe_tree(registry, ref.agent_name, services.notify) if inp.describe else None
        agent = registry.llm_agent(ref.agent_name)
        # Toolsets list here, worker side: the listing reaches history only as the reply's
        # planned calls and their options, so the workflow never depends on a live server.
        tools = await registry.resolve_tools(agent.name)
        recorded = stored.ids.get(inp.model_event_id)
        if recorded is not None:
            return _result(recorded, tools, tree)
        resolved, unstage = await stored_form(
            services.sessions, ref, inp.pending_events, stored.ids
        )
        new = [e for e in resolved if e.id not in stored.ids]
        # The model and the callbacks see the pending events as if already stored.
        session.events.extend(new)
        for event in new:
            session.state.update(event.actions.state_delta)
        session.state.update(inp.temp_state)
        ictx = services.invocation_context(ref, loaded, agent, workflow_id=workflow_id)
        actions = EventActions()
        # One key per step and callback site: a fixed key would make a save in step 2 look
        # like a retry of step 1's save of the same name.
        key_base = f"{workflow_id}/{ref.invocation_id}/step-{inp.step}"
        cctx = CallbackContext(ictx, actions=actions, idempotency_key=f"{key_base}/model")

        if inp.run_before_agent and agent.before_agent_callback is not None:
            content = await maybe_await(agent.before_agent_callback(cctx))
            if isinstance(content, types.Content):
                event = self._event(inp, ref, agent, content, actions)
                await self._append(ref, [*new, event], unstage)
                return EndedStep(kind="ended", text=event.text(), actions=actions, tree=tree)

        request = LlmRequest(
            contents=_contents(agent, ref, session.events, stored),
            model=agent.model,
            system_instruction=agent.system_instruction(ReadonlyContext(ictx)) or None,
            tools=[t.declaration() for t in tools],
            generation_config=agent.request_config,
        )
        # Ids the reply's calls must not reuse: stored calls and the calls of the events
        # this step stores (taken before a streamed step stores them ahead of the reply).
        taken = (stored.call_ids, {c.id for e in new for c in e.function_calls() if c.id})
        forwarder = None
        if inp.stream:
            # Pieces carry the reply's identity, not its actions: those are still changing.
            template = self._event(inp, ref, agent, None, EventActions())
            forwarder = PartialForwarder(services.sessions, ref, template, attempt)
            # Stored before the model is called, as ADK stores the user's message before the
            # agent runs: followers then see the message, and the tool responses the model
            # answers, ahead of the reply being written. Idempotent, so a retry is harmless.
            # Not through _append: its fault point stands for the append of the reply.
            if new or unstage:
                await append_to_session(services.sessions, ref, new, unstage)
            new, unstage = [], []
        async with heartbeating():
            response = await self._generate(agent, cctx, request, forwarder)
        # In a branch or a scope, steps of other branches or scopes may run concurrently and
        # choose the same ids: whether one is stored first is timing, so ids there are
        # always generated. At the top level steps never overlap.
        nested = bool(ref.branch or ref.isolation_scope)
        content = _with_call_ids(response.content, inp.model_event_id, taken, always=nested)
        event = self._event(inp, ref, agent, content, actions)
        event.error_code = response.error_code
        event.error_message = response.error_message
        event.usage_metadata = response.usage
        events = [event]
        result = _result(event, tools, tree)
        if isinstance(result, FinalStep):
            try:
                record_output(agent, event)
            except OutputSchemaError as err:
                # The answer stays stored with the step; the invocation ends on the error.
                event.error_code, event.error_message = type(err).__name__, str(err)
                result = _result(event, tools, tree)
        if isinstance(result, FinalStep) and agent.after_agent_callback is not None:
            after_actions = EventActions()
            after = await maybe_await(
                agent.after_agent_callback(
                    CallbackContext(
                        ictx, actions=after_actions, idempotency_key=f"{key_base}/after_agent"
                    )
                )
            )
            if isinstance(after, types.Content) or not after_actions.is_empty():
                extra = self._event(
                    inp,
                    ref,
                    agent,
                    after if isinstance(after, types.Content) else None,
                    after_actions,
                )
                extra.id = _derived_id(inp.model_event_id, "after_agent")
                events.append(extra)
                if isinstance(after, types.Content):
                    result.text = extra.text()
        await self._append(ref, [*new, *events], unstage)
        return result

    async def _generate(
        self,
        agent: Agent,
        cctx: CallbackContext,
        request: LlmRequest,
        forwarder: PartialForwarder | None,
    ) -> LlmResponse:
        if agent.before_model_callback is not None:
            early = await maybe_await(agent.before_model_callback(cctx, request))
            if isinstance(early, LlmResponse):
                return early
        model = self._services.models.resolve(agent.model)
        with span(f"chat {agent.model}", {"adk.agent": agent.name}) as current:
            started = time.perf_counter()
            if forwarder is None:
                response = await model.generate(request)
            else:
                async with forwarder:
                    response = await _streamed(model, request, forwarder)
            usage = response.usage
            record_model_step(
                current,
                system=_system(model),
                model=agent.model,
                seconds=time.perf_counter() - started,
                input_tokens=usage.prompt_token_count if usage else None,
                output_tokens=usage.candidates_token_count if usage else None,
                finish_reason=response.finish_reason,
            )
        fault_point("model.during_call")
        if agent.after_model_callback is not None:
            replaced = await maybe_await(agent.after_model_callback(cctx, response))
            if isinstance(replaced, LlmResponse):
                return replaced
        return response

    async def _append(self, ref: SessionRef, events: list[Event], unstage: list[str]) -> None:
        await append_to_session(self._services.sessions, ref, events, unstage)
        fault_point("session.after_append")

    @staticmethod
    def _event(
        inp: ModelStepInput,
        ref: SessionRef,
        agent: Agent,
        content: types.Content | None,
        actions: EventActions,
    ) -> Event:
        return Event(
            id=inp.model_event_id,
            invocation_id=ref.invocation_id,
            author=agent.name,
            branch=ref.branch,
            isolation_scope=ref.isolation_scope,
            content=content,
            actions=actions,
            timestamp=inp.timestamp,
        )


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
