"""``InvocationWorkflow``: one ADK invocation as a durable Temporal workflow.

The workflow decides; activities touch the world. For an LLM agent it runs the step loop
(``adk_model_step``, then one ``adk_tool_call`` per function call, concurrently), merges the
tools' deltas, persists pauses through ``adk_append_events`` and waits for confirmations
and inputs that arrive as signals or checked updates. Sequential and parallel agents, agent
transfers and agents used as tools are orchestrated here too, in the same workflow. It holds
only ids, the current step's new events and the open requests, never the conversation, so
its history grows linearly with the steps.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

# Pure data and logic modules: passed through so the sandbox does not re-import
# google.genai/pydantic for every workflow run (and because google.genai's httpx import
# trips the sandbox's urllib restriction).
with workflow.unsafe.imports_passed_through():
    from google.genai import types

    from adk_temporal.activities.messages import (
        AgentSpec,
        AppendEventsInput,
        InvocationRef,
        ModelStepInput,
        ModelStepResult,
        PlannedCall,
        ToolCallInput,
        ToolCallResult,
    )
    from adk_temporal.confirmation import build_confirmation_request_event, call_digest
    from adk_temporal.events import (
        REQUEST_CONFIRMATION_FUNCTION_NAME,
        REQUEST_INPUT_FUNCTION_NAME,
        Event,
        EventActions,
        ToolConfirmation,
    )
    from adk_temporal.merge import merge_actions, merge_function_response_events
    from adk_temporal.resume import build_input_request_event
    from adk_temporal.state import TEMP_PREFIX
    from adk_temporal.workflows.details import render_details
    from adk_temporal.workflows.messages import (
        CONFIRM_CHECKED_UPDATE,
        CONFIRM_SIGNAL,
        PENDING_QUERY,
        RESUME_CHECKED_UPDATE,
        RESUME_SIGNAL,
        STATUS_QUERY,
        AdkStatus,
        ConfirmInput,
        InvocationCarry,
        InvocationInput,
        InvocationResult,
        InvocationStatus,
        PendingRequest,
        ResumeInput,
    )
    from adk_temporal.workflows.requests import Answer, RequestBook

__all__ = [
    "ADK_AGENT",
    "ADK_APP",
    "ADK_SESSION",
    "ADK_STATUS",
    "ADK_USER",
    "InvocationWorkflow",
]

ADK_APP = SearchAttributeKey.for_keyword("AdkApp")
"""Search attribute: the app name."""
ADK_USER = SearchAttributeKey.for_keyword("AdkUser")
"""Search attribute: the user id."""
ADK_SESSION = SearchAttributeKey.for_keyword("AdkSession")
"""Search attribute: the session id."""
ADK_AGENT = SearchAttributeKey.for_keyword("AdkAgent")
"""Search attribute: the agent the invocation was started with."""
ADK_STATUS = SearchAttributeKey.for_keyword("AdkStatus")
"""Search attribute: running / awaiting_confirmation / awaiting_input / completed / failed."""

_APPEND_TIMEOUT = timedelta(seconds=60)


@dataclass
class _Frame:
    """Where an agent runs: which agent, on which branch, in which isolation scope."""

    agent: str
    branch: str = ""
    isolation_scope: str = ""
    actions: list[EventActions] = field(default_factory=list)

    def moved(self, **changes: str) -> _Frame:
        """A frame for another agent or branch, collecting its own actions."""
        return dataclasses.replace(self, actions=[], **changes)


@dataclass
class _Outcome:
    """How an agent's run ended."""

    text: str = ""
    ended: bool = False
    escalated: bool = False
    error: str | None = None


def _child_branch(branch: str, parent: str, sub: str) -> str:
    """A parallel sub-agent's branch: ``<parent>.<sub>``, prefixed by the current branch."""
    own = f"{parent}.{sub}"
    return f"{branch}.{own}" if branch else own


@workflow.defn(name="InvocationWorkflow")
class InvocationWorkflow:
    """Runs one ADK invocation of one agent (and its sub-agents) in one session."""

    def __init__(self) -> None:
        self._status: AdkStatus = "running"
        self._published: AdkStatus | None = None
        self._step = 0
        self._steps_this_run = 0
        self._depth = 0
        self._invocation_id = ""
        self._agent = ""
        self._final_text = ""
        self._error: str | None = None
        self._book = RequestBook()
        self._temp_state: dict[str, Any] = {}
        self._trees: dict[str, AgentSpec] = {}

    # ------------------------------------------------------------------ run

    @workflow.run
    async def run(self, inp: InvocationInput) -> InvocationResult:
        """Run the agent until a final answer, an end, an error or the step limit."""
        info = workflow.info()
        carry = inp.carry
        self._input = inp
        self._agent = inp.agent_name
        self._invocation_id = (
            carry.invocation_id if carry else inp.invocation_id or f"e-{workflow.uuid4()}"
        )
        self._base = InvocationRef(
            app_name=inp.app_name,
            user_id=inp.user_id,
            session_id=inp.session_id,
            agent_name=inp.agent_name,
            invocation_id=self._invocation_id,
        ).without_session_ids(info.workflow_id)
        # The client sets these at start; a run started some other way (the temporal CLI, a
        # continue-as-new) gets them here. Only missing values are written: each upsert is
        # a history event.
        present = info.typed_search_attributes
        wanted = [
            (ADK_APP, inp.app_name),
            (ADK_USER, inp.user_id),
            (ADK_SESSION, inp.session_id),
            (ADK_AGENT, inp.agent_name),
        ]
        updates = [key.value_set(value) for key, value in wanted if present.get(key) != value]
        if updates:
            workflow.upsert_search_attributes(updates)
        status = present.get(ADK_STATUS)
        if status in ("running", "awaiting_confirmation", "awaiting_input"):
            self._published = cast(AdkStatus, status)
        frame = _Frame(inp.agent_name)
        pending: list[Event] = []
        if carry is not None:
            self._restore(carry)
        elif inp.message is not None:
            pending.append(self._event(frame, "user", inp.message))
        self._update_status()
        try:
            if carry is not None:
                outcome = await self._llm(
                    frame.moved(agent=carry.agent), pending, entry=carry.entry_agent, carry=carry
                )
            else:
                outcome = await self._run_named(frame, pending)
        except (ActivityError, ApplicationError) as err:
            # A failed activity arrives as ActivityError with the ApplicationError as its
            # cause; one failed by the activity's own error mapping may arrive bare.
            cause = err.cause if isinstance(err, ActivityError) else err
            kind = cause.type if isinstance(cause, ApplicationError) and cause.type else None
            message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
            await self._record_error(frame, kind or "ActivityError", message)
            raise ApplicationError(message, type=kind, non_retryable=True) from err
        if outcome.error is not None:
            return self._finish("failed", error=outcome.error)
        return self._finish("completed", text=outcome.text)

    async def _run_named(self, frame: _Frame, pending: list[Event]) -> _Outcome:
        """Run ``frame.agent``, whose kind may not be known yet.

        An unknown agent is run as an LLM agent: its first model step describes the agent's
        tree, and answers ``delegate`` instead of calling a model when it is a workflow
        agent. The common case (an LLM agent) thus costs no extra round trip.
        """
        spec = self._known(frame.agent)
        if spec is not None and spec.kind != "llm":
            return await self._run_agent(spec, frame, pending)
        return await self._llm(frame, pending, entry=frame.agent)

    async def _run_agent(self, spec: AgentSpec, frame: _Frame, pending: list[Event]) -> _Outcome:
        """Run ``spec`` (any kind) in ``frame`` (whose agent is ``spec``), from ``pending``."""
        if spec.kind == "llm":
            return await self._llm(frame, pending, entry=spec.name)
        self._depth += 1
        try:
            if spec.kind == "sequential":
                return await self._sequential(spec, frame, pending)
            return await self._parallel(spec, frame, pending)
        finally:
            self._depth -= 1

    async def _sequential(self, spec: AgentSpec, frame: _Frame, pending: list[Event]) -> _Outcome:
        outcome = _Outcome()
        for sub in spec.sub_agents:
            child = frame.moved(agent=sub.name)
            outcome = await self._run_agent(sub, child, pending)
            frame.actions += child.actions
            pending = []
            if outcome.ended or outcome.escalated or outcome.error is not None:
                break
        return outcome

    async def _parallel(self, spec: AgentSpec, frame: _Frame, pending: list[Event]) -> _Outcome:
        # The message is stored once, before the branches start, so every branch sees it.
        await self._append(frame, pending)
        children = [
            frame.moved(agent=sub.name, branch=_child_branch(frame.branch, spec.name, sub.name))
            for sub in spec.sub_agents
        ]
        outcomes = await asyncio.gather(
            *(
                self._run_agent(sub, child, [])
                for sub, child in zip(spec.sub_agents, children, strict=True)
            )
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

    async def _llm(
        self,
        frame: _Frame,
        pending: list[Event],
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
            if self._step >= self._input.max_steps:
                message = f"step limit of {self._input.max_steps} model steps reached"
                await self._record_error(frame, "StepLimitExceeded", message, pending)
                return _Outcome(error=message)
            if self._depth == 0 and self._should_continue_as_new():
                await self._append(frame, pending)
                await self._continue_as_new(frame, entry, {}, ended=False)
            describe = self._known(frame.agent) is None
            result = await self._model_step(
                frame, pending, run_before_agent=first_step, describe=describe
            )
            pending = []
            if result.tree is not None:
                self._remember(result.tree)
            if result.kind == "delegate":
                # Not an LLM agent after all; the step only described it (and stored
                # ``pending``), so it does not count as a model step.
                spec = self._known(frame.agent)
                assert spec is not None
                return await self._run_agent(spec, frame, [])
            first_step = False
            frame.actions.append(result.actions)
            if result.kind in ("final", "ended"):
                return _Outcome(text=result.text, ended=result.kind == "ended")
            if result.kind == "error":
                return _Outcome(error=result.error_message or result.error_code or "model error")
            by_id = {c.id: c for c in result.function_calls}
            response = await self._run_calls(frame, result.function_calls, {}, {})
            pending, ended, actions = await self._settle(
                frame, response, by_id, [response], response.actions.end_invocation
            )
            if ended:
                await self._append(frame, pending)
                return _Outcome(ended=True)
            if actions.transfer_to_agent:
                target = self._known(actions.transfer_to_agent)
                if target is not None and target.kind != "llm":
                    child = frame.moved(agent=target.name)
                    outcome = await self._run_agent(target, child, pending)
                    frame.actions += child.actions
                    return outcome
                frame = dataclasses.replace(frame, agent=actions.transfer_to_agent)
                first_step = True
            elif actions.escalate:
                spec = self._known(frame.agent)
                if frame.agent == entry or spec is None or spec.parent is None:
                    await self._append(frame, pending)
                    return _Outcome(escalated=True)
                frame = dataclasses.replace(frame, agent=spec.parent)
                first_step = True

    async def _settle(
        self,
        frame: _Frame,
        response: Event | None,
        by_id: dict[str, PlannedCall],
        pending: list[Event],
        ended: bool,
    ) -> tuple[list[Event], bool, EventActions]:
        """Pause for the requests ``response`` raised, re-dispatch the answered calls, repeat.

        ``response`` is ``None`` when a new run resumes a pause carried across
        continue-as-new: the requests are already open and recorded.

        Returns:
            The events still to persist, whether a tool ended the invocation, and the
            step's merged actions.
        """
        step_actions = [response.actions] if response is not None else []
        waiting = self._book.open_ids() if response is None else []
        while response is None or _has_requests(response):
            if response is not None:
                events, waiting = self._open_requests(frame, response, by_id)
                await self._append(frame, [*pending, *events])
                pending = []
                if self._depth == 0 and self._should_continue_as_new():
                    await self._continue_as_new(frame, frame.agent, by_id, ended=ended)
            reply, confirmations, inputs = await self._wait_for_answers(frame, waiting)
            pending.append(reply)
            redo = [
                by_id[cid]
                for cid in by_id
                if cid in confirmations or cid in inputs  # the model's call order
            ]
            response = await self._run_calls(frame, redo, confirmations, inputs)
            step_actions.append(response.actions)
            pending.append(response)
            ended = ended or response.actions.end_invocation
        return pending, ended, merge_actions(step_actions)

    # ------------------------------------------------------- continue-as-new

    def _should_continue_as_new(self) -> bool:
        # A run that has not made progress yet never hands over: with a tiny limit the
        # new run would otherwise continue as new again at once, forever.
        if self._steps_this_run == 0:
            return False
        info = workflow.info()
        limit = self._input.continue_as_new_after_events
        return info.is_continue_as_new_suggested() or (
            limit is not None and info.get_current_history_length() >= limit
        )

    async def _continue_as_new(
        self, frame: _Frame, entry: str, paused: dict[str, PlannedCall], *, ended: bool
    ) -> None:
        """Hand ids, counters and open requests to a new run; events are already stored."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        carried, answered, early = self._book.carry()
        carry = InvocationCarry(
            invocation_id=self._invocation_id,
            step=self._step,
            agent=frame.agent,
            entry_agent=entry,
            tree=self._trees.get(frame.agent),
            temp_state=self._temp_state,
            answered=answered,
            early=early,
            ignored=self._book.ignored,
            paused_calls=list(paused.values()),
            open_requests=carried,
            ended=ended,
        )
        workflow.continue_as_new(self._input.model_copy(update={"message": None, "carry": carry}))

    def _restore(self, carry: InvocationCarry) -> None:
        self._step = carry.step
        self._temp_state = dict(carry.temp_state)
        self._book.restore(carry.open_requests, carry.answered, carry.early, carry.ignored)
        if carry.tree is not None:
            self._remember(carry.tree)

    # ------------------------------------------------------------ activities

    def _ref(self, frame: _Frame) -> InvocationRef:
        return self._base.model_copy(
            update={
                "agent_name": frame.agent,
                "branch": frame.branch,
                "isolation_scope": frame.isolation_scope,
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
        self, frame: _Frame, pending: list[Event], *, run_before_agent: bool, describe: bool
    ) -> ModelStepResult:
        self._step += 1
        self._steps_this_run += 1
        result: ModelStepResult = await workflow.execute_activity(
            "adk_model_step",
            ModelStepInput(
                ref=self._ref(frame),
                step=self._step,
                describe=describe,
                model_event_id=str(workflow.uuid4()),
                pending_events=pending,
                temp_state=self._temp_state,
                run_before_agent=run_before_agent,
                timestamp=workflow.now().timestamp(),
            ),
            result_type=ModelStepResult,
            start_to_close_timeout=timedelta(seconds=self._input.model_timeout_seconds),
            retry_policy=RetryPolicy(maximum_attempts=self._input.model_maximum_attempts),
            summary=f"{frame.agent} · model step {self._step}",
        )
        if result.kind == "delegate":
            self._step -= 1
            self._steps_this_run -= 1
        return result

    async def _run_calls(
        self,
        frame: _Frame,
        calls: list[PlannedCall],
        confirmations: dict[str, ToolConfirmation],
        inputs: dict[str, dict[str, Any]],
    ) -> Event:
        """Run the calls concurrently and merge their results in call order."""
        results = await asyncio.gather(
            *(
                self._agent_tool_call(frame, c)
                if c.agent_tool
                else self._tool_call(frame, c, confirmations.get(c.id), inputs.get(c.id, {}))
                for c in calls
            )
        )
        events = [
            self._event(
                frame,
                frame.agent,
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=call.id, name=call.name, response=result.response
                            )
                        )
                    ],
                ),
                actions=result.actions,
            )
            for call, result in zip(calls, results, strict=True)
        ]
        merged = merge_function_response_events(events)
        frame.actions.append(merged.actions)
        for key, value in merged.actions.state_delta.items():
            if key.startswith(TEMP_PREFIX):
                self._temp_state[key] = value
        return merged

    async def _tool_call(
        self,
        frame: _Frame,
        call: PlannedCall,
        confirmation: ToolConfirmation | None,
        resume_inputs: dict[str, Any],
    ) -> ToolCallResult:
        opts = call.options
        retry = RetryPolicy(
            maximum_attempts=opts.maximum_attempts or 0,
            initial_interval=timedelta(seconds=opts.initial_interval_seconds or 1),
            backoff_coefficient=opts.backoff_coefficient or 2.0,
            maximum_interval=(
                timedelta(seconds=opts.maximum_interval_seconds)
                if opts.maximum_interval_seconds
                else None
            ),
            non_retryable_error_types=opts.non_retryable_error_types,
        )
        return await workflow.execute_activity(
            "adk_tool_call",
            ToolCallInput(
                ref=self._ref(frame),
                call=call,
                tool_confirmation=confirmation,
                resume_inputs=resume_inputs,
                temp_state=self._temp_state,
            ),
            result_type=ToolCallResult,
            start_to_close_timeout=timedelta(
                seconds=opts.start_to_close_seconds or self._input.tool_timeout_seconds
            ),
            heartbeat_timeout=(
                timedelta(seconds=opts.heartbeat_seconds) if opts.heartbeat_seconds else None
            ),
            retry_policy=retry,
            summary=call.summary(),
        )

    async def _agent_tool_call(self, frame: _Frame, call: PlannedCall) -> ToolCallResult:
        """Run the agent behind an ``AgentTool`` in isolation scope = the call id."""
        assert call.agent_tool is not None
        child = frame.moved(agent=call.agent_tool, isolation_scope=call.id)
        request = call.args.get("request")
        text = request if isinstance(request, str) else str(call.args)
        first = self._event(
            child, "user", types.Content(role="user", parts=[types.Part(text=text)])
        )
        self._depth += 1
        try:
            outcome = await self._run_named(child, [first])
        finally:
            self._depth -= 1
        merged = merge_actions(child.actions)
        # Only the data deltas travel up: the child's control flags (transfer, escalate,
        # skip_summarization) were about the child's own run.
        actions = EventActions(state_delta=merged.state_delta, artifact_delta=merged.artifact_delta)
        response = {"error": outcome.error} if outcome.error else {"result": outcome.text}
        return ToolCallResult(response=response, actions=actions)

    async def _append(self, frame: _Frame, events: list[Event]) -> None:
        if not events:
            return
        await workflow.execute_activity(
            "adk_append_events",
            AppendEventsInput(ref=self._ref(frame), events=events),
            start_to_close_timeout=_APPEND_TIMEOUT,
            summary=f"{frame.agent} · append {len(events)} event(s)",
        )

    async def _record_error(
        self, frame: _Frame, code: str, message: str, pending: list[Event] | None = None
    ) -> None:
        """Persist an error event (after any pending events); never masks the error."""
        event = self._event(frame, frame.agent, None)
        event.error_code = code
        event.error_message = message
        try:
            await self._append(frame, [*(pending or []), event])
        except ActivityError:
            workflow.logger.warning("could not record error event for %s", self._invocation_id)
        self._error = message
        self._status = "failed"
        self._update_status()

    # -------------------------------------------------------------- pausing

    def _open_requests(
        self, frame: _Frame, response: Event, by_id: dict[str, PlannedCall]
    ) -> tuple[list[Event], list[str]]:
        """Open the response's requests; return the events recording them and their ids."""
        actions = response.actions
        requesting = [c for c in by_id.values() if c.id in actions.requested_tool_confirmations]
        confirmation_ids = [f"adk-{workflow.uuid4()}" for _ in requesting]
        opened: list[tuple[PendingRequest, Any]] = []
        for request_id, call in zip(confirmation_ids, requesting, strict=True):
            confirmation = actions.requested_tool_confirmations[call.id]
            pending = PendingRequest(
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
            )
            opened.append((pending, None))
        for interrupt_id, request in actions.requested_inputs.items():
            call = by_id[request.function_call_id]
            pending = PendingRequest(
                kind="input",
                id=interrupt_id,
                function_call_id=request.function_call_id,
                tool=call.name,
                args=call.args,
                message=request.message,
                input_schema=request.input_schema,
                agent=frame.agent,
                branch=frame.branch,
            )
            opened.append((pending, request))
        common: dict[str, Any] = {
            "invocation_id": self._invocation_id,
            "author": frame.agent,
            "branch": frame.branch,
            "isolation_scope": frame.isolation_scope,
            "timestamp": workflow.now().timestamp(),
        }
        events: list[Event] = []
        if requesting:
            events.append(
                build_confirmation_request_event(
                    [c.to_function_call() for c in by_id.values()],
                    actions.requested_tool_confirmations,
                    confirmation_ids,
                    event_id=str(workflow.uuid4()),
                    **common,
                )
            )
        if actions.requested_inputs:
            events.append(
                build_input_request_event(
                    list(actions.requested_inputs.values()),
                    event_id=str(workflow.uuid4()),
                    **common,
                )
            )
        for pending, input_request in opened:
            self._book.open(pending, input_request)
        return events, [p.id for p, _ in opened]

    async def _wait_for_answers(
        self, frame: _Frame, ids: list[str]
    ) -> tuple[Event, dict[str, ToolConfirmation], dict[str, dict[str, Any]]]:
        """Wait until requests ``ids`` are answered; return the reply event and answers."""
        self._update_status()
        await workflow.wait_condition(lambda: self._book.answered(ids))
        parts: list[types.Part] = []
        confirmations: dict[str, ToolConfirmation] = {}
        inputs: dict[str, dict[str, Any]] = {}
        for pending, answer in self._book.take(ids):
            if isinstance(answer, ConfirmInput):
                response: dict[str, Any] = {
                    "confirmed": answer.confirmed,
                    "payload": answer.payload,
                }
                confirmations[pending.function_call_id] = ToolConfirmation(
                    hint=pending.hint, confirmed=answer.confirmed, payload=answer.payload
                )
                name = REQUEST_CONFIRMATION_FUNCTION_NAME
            else:
                response = {"input": answer.input}
                inputs.setdefault(pending.function_call_id, {})[pending.id] = answer.input
                name = REQUEST_INPUT_FUNCTION_NAME
            parts.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=pending.id, name=name, response=response
                    )
                )
            )
        self._update_status()
        reply = self._event(frame, "user", types.Content(role="user", parts=parts))
        return reply, confirmations, inputs

    # ------------------------------------------------------ signals/updates

    @workflow.signal(name=CONFIRM_SIGNAL)
    def confirm(self, answer: ConfirmInput) -> None:
        """Answer a confirmation request; unknown ids are buffered, duplicates ignored."""
        self._accept(answer)

    @workflow.signal(name=RESUME_SIGNAL)
    def resume(self, answer: ResumeInput) -> None:
        """Answer an input request; unknown ids are buffered, duplicates ignored."""
        self._accept(answer)

    @workflow.update(name=CONFIRM_CHECKED_UPDATE)
    def confirm_checked(self, answer: ConfirmInput) -> None:
        """Answer a confirmation request, rejecting unknown or already-answered ids."""
        self._accept(answer)

    @confirm_checked.validator
    def _validate_confirm(self, answer: ConfirmInput) -> None:
        self._check(answer)

    @workflow.update(name=RESUME_CHECKED_UPDATE)
    def resume_checked(self, answer: ResumeInput) -> None:
        """Answer an input request, rejecting unknown ids and schema violations."""
        self._accept(answer)

    @resume_checked.validator
    def _validate_resume(self, answer: ResumeInput) -> None:
        self._check(answer)

    def _check(self, answer: Answer) -> None:
        """Raise the error a checked update reports; never changes state."""
        problem = self._book.problem(answer)
        if problem is not None:
            raise ApplicationError(problem[1], type=problem[0], non_retryable=True)

    def _accept(self, answer: Answer) -> None:
        outcome = self._book.accept(answer)
        if outcome != "accepted":
            workflow.logger.warning("answer %s: %s", outcome, answer)
        self._update_status()

    # --------------------------------------------------------------- queries

    @workflow.query(name=PENDING_QUERY)
    def pending(self) -> list[PendingRequest]:
        """The open, unanswered requests."""
        return self._book.unanswered()

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> InvocationStatus:
        """The invocation's status."""
        return InvocationStatus(
            status=self._status,
            invocation_id=self._invocation_id,
            agent=self._agent,
            step=self._step,
            pending=len(self._book.unanswered()),
            final_text=self._final_text,
            error=self._error,
            ignored_signals=self._book.report(),
        )

    # --------------------------------------------------------------- helpers

    def _event(
        self,
        frame: _Frame,
        author: str,
        content: types.Content | None,
        actions: EventActions | None = None,
    ) -> Event:
        return Event(
            id=str(workflow.uuid4()),
            invocation_id=self._invocation_id,
            author=author,
            branch=frame.branch,
            isolation_scope=frame.isolation_scope,
            content=content,
            actions=actions or EventActions(),
            timestamp=workflow.now().timestamp(),
        )

    def _finish(
        self, status: AdkStatus, *, text: str = "", error: str | None = None
    ) -> InvocationResult:
        self._final_text = text
        self._error = error
        self._status = status
        self._update_status()
        return InvocationResult(
            invocation_id=self._invocation_id,
            status=status,
            final_text=text,
            steps=self._step,
            error=error,
        )

    def _update_status(self) -> None:
        """Derive the status from the open requests, then publish it to the UI."""
        if self._status not in ("completed", "failed"):
            waiting = self._book.waiting_for()
            if waiting == "confirmation":
                self._status = "awaiting_confirmation"
            elif waiting == "input":
                self._status = "awaiting_input"
            else:
                self._status = "running"
        if self._status != self._published:
            # Each upsert is a history event: publish changes only.
            workflow.upsert_search_attributes([ADK_STATUS.value_set(self._status)])
            self._published = self._status
        workflow.set_current_details(
            render_details(
                workflow_id=workflow.info().workflow_id,
                status=self._status,
                agent=self._agent,
                step=self._step,
                pending=self._book.unanswered(),
                final_text=self._final_text,
                error=self._error,
            )
        )


def _has_requests(response: Event) -> bool:
    actions = response.actions
    return bool(actions.requested_tool_confirmations or actions.requested_inputs)
