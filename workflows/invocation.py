"""``InvocationWorkflow``: one ADK invocation as a durable Temporal workflow.

The workflow decides; activities touch the world. It runs the step loop (``adk_model_step``
then one ``adk_tool_call`` per function call, concurrently), merges the tools' deltas,
persists pauses through ``adk_append_events``, and waits for confirmations and inputs that
arrive as signals or checked updates. It holds only ids, the current step's new events and
the open requests, never the conversation, so its history grows linearly with the steps.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey, SearchAttributePair
from temporalio.exceptions import ActivityError, ApplicationError

# Pure data and logic modules: passed through so the sandbox does not re-import
# google.genai/pydantic for every workflow run (and because google.genai's httpx import
# trips the sandbox's urllib restriction).
with workflow.unsafe.imports_passed_through():
    from google.genai import types

    from adk_temporal.activities.messages import (
        AppendEventsInput,
        InvocationRef,
        ModelStepInput,
        ModelStepResult,
        PlannedCall,
        ToolCallInput,
        ToolCallResult,
    )
    from adk_temporal.confirmation import build_confirmation_request_event, call_digest
    from adk_temporal.errors import InvalidResumeInputError
    from adk_temporal.events import (
        REQUEST_CONFIRMATION_FUNCTION_NAME,
        REQUEST_INPUT_FUNCTION_NAME,
        Event,
        EventActions,
        InputRequest,
        ToolConfirmation,
    )
    from adk_temporal.merge import merge_function_response_events
    from adk_temporal.resume import build_input_request_event, check_resume_input
    from adk_temporal.state import TEMP_PREFIX
    from adk_temporal.workflows.messages import (
        CONFIRM_CHECKED_UPDATE,
        CONFIRM_SIGNAL,
        PENDING_QUERY,
        RESUME_CHECKED_UPDATE,
        RESUME_SIGNAL,
        STATUS_QUERY,
        AdkStatus,
        CarriedRequest,
        ConfirmInput,
        InvocationCarry,
        InvocationInput,
        InvocationResult,
        InvocationStatus,
        PendingRequest,
        ResumeInput,
    )

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
"""Search attribute: the agent name."""
ADK_STATUS = SearchAttributeKey.for_keyword("AdkStatus")
"""Search attribute: running / awaiting_confirmation / awaiting_input / completed / failed."""

_APPEND_TIMEOUT = timedelta(seconds=60)


class _OpenRequest:
    """A confirmation or input request the invocation waits on, and its answer."""

    def __init__(self, pending: PendingRequest, input_request: InputRequest | None) -> None:
        self.pending = pending
        self.input_request = input_request
        self.answer: ConfirmInput | ResumeInput | None = None


@workflow.defn(name="InvocationWorkflow")
class InvocationWorkflow:
    """Runs one ADK invocation of one agent in one session."""

    def __init__(self) -> None:
        self._status: AdkStatus = "running"
        self._step = 0
        self._invocation_id = ""
        self._agent = ""
        self._final_text = ""
        self._error: str | None = None
        self._open: dict[str, _OpenRequest] = {}
        self._answered: set[str] = set()
        self._early: dict[str, ConfirmInput | ResumeInput] = {}
        self._ignored: list[str] = []
        self._temp_state: dict[str, Any] = {}
        self._steps_this_run = 0

    # ------------------------------------------------------------------ run

    @workflow.run
    async def run(self, inp: InvocationInput) -> InvocationResult:
        """Run the step loop until a final answer, an end, an error or the step limit."""
        info = workflow.info()
        carry = inp.carry
        self._input = inp
        self._agent = inp.agent_name
        self._invocation_id = (
            carry.invocation_id if carry else inp.invocation_id or f"e-{workflow.uuid4()}"
        )
        self._ref = InvocationRef(
            app_name=inp.app_name,
            user_id=inp.user_id,
            session_id=inp.session_id,
            agent_name=inp.agent_name,
            invocation_id=self._invocation_id,
            workflow_id=info.workflow_id,
        )
        workflow.upsert_search_attributes(
            [
                SearchAttributePair(ADK_APP, inp.app_name),
                SearchAttributePair(ADK_USER, inp.user_id),
                SearchAttributePair(ADK_SESSION, inp.session_id),
                SearchAttributePair(ADK_AGENT, inp.agent_name),
            ]
        )
        pending: list[Event] = []
        if carry is not None:
            self._restore(carry)
        elif inp.message is not None:
            pending.append(self._event("user", inp.message))
        self._set_status("running")
        try:
            return await self._loop(inp, pending)
        except ActivityError as err:
            cause = err.cause
            kind = cause.type if isinstance(cause, ApplicationError) and cause.type else None
            message = str(cause) if cause is not None else str(err)
            await self._record_error(kind or "ActivityError", message)
            raise ApplicationError(message, type=kind, non_retryable=True) from err

    async def _loop(self, inp: InvocationInput, pending: list[Event]) -> InvocationResult:
        carry = inp.carry
        if carry is not None and carry.paused_calls:
            # This run continued a paused step: finish it before the next model step.
            by_id = {c.id: c for c in carry.paused_calls}
            pending, ended = await self._settle(None, by_id, pending, carry.ended)
            if ended:
                await self._append(pending)
                return self._finish("completed")
        while True:
            if self._step >= inp.max_steps:
                message = f"step limit of {inp.max_steps} model steps reached"
                await self._record_error("StepLimitExceeded", message, pending)
                return self._finish("failed", error=message)
            if self._should_continue_as_new():
                await self._append(pending)
                await self._continue_as_new({}, ended=False)
            self._step += 1
            self._steps_this_run += 1
            result = await self._model_step(pending)
            pending = []
            if result.kind == "final" or result.kind == "ended":
                return self._finish("completed", text=result.text)
            if result.kind == "error":
                message = result.error_message or result.error_code or "model error"
                return self._finish("failed", error=message)
            calls = result.function_calls
            by_id = {c.id: c for c in calls}
            response = await self._run_calls(calls, {}, {})
            pending, ended = await self._settle(
                response, by_id, [response], response.actions.end_invocation
            )
            if ended:
                await self._append(pending)
                return self._finish("completed")

    async def _settle(
        self,
        response: Event | None,
        by_id: dict[str, PlannedCall],
        pending: list[Event],
        ended: bool,
    ) -> tuple[list[Event], bool]:
        """Pause for the requests ``response`` raised, re-dispatch the answered calls, repeat.

        ``response`` is ``None`` when a new run resumes a pause carried across
        continue-as-new: the requests are already open and recorded.

        Returns:
            The events still to persist, and whether a tool ended the invocation.
        """
        while response is None or self._requests_of(response):
            if response is not None:
                pending = [*pending, *self._open_requests(response, by_id)]
                await self._append(pending)
                pending = []
                if self._should_continue_as_new():
                    await self._continue_as_new(by_id, ended=ended)
            reply, confirmations, inputs = await self._wait_for_answers()
            pending.append(reply)
            redo = [
                by_id[cid]
                for cid in by_id
                if cid in confirmations or cid in inputs  # the model's call order
            ]
            response = await self._run_calls(redo, confirmations, inputs)
            pending.append(response)
            ended = ended or response.actions.end_invocation
        return pending, ended

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

    async def _continue_as_new(self, paused: dict[str, PlannedCall], *, ended: bool) -> None:
        """Hand ids, counters and open requests to a new run; events are already stored."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        carry = InvocationCarry(
            invocation_id=self._invocation_id,
            step=self._step,
            temp_state=self._temp_state,
            answered=sorted(self._answered),
            early=list(self._early.values()),
            ignored=self._ignored,
            paused_calls=list(paused.values()),
            open_requests=[
                CarriedRequest(pending=r.pending, input_request=r.input_request, answer=r.answer)
                for r in self._open.values()
            ],
            ended=ended,
        )
        workflow.continue_as_new(self._input.model_copy(update={"message": None, "carry": carry}))

    def _restore(self, carry: InvocationCarry) -> None:
        self._step = carry.step
        self._temp_state = dict(carry.temp_state)
        self._answered = set(carry.answered)
        self._early = {_answer_id(a): a for a in carry.early}
        self._ignored = list(carry.ignored)
        for carried in carry.open_requests:
            request = _OpenRequest(carried.pending, carried.input_request)
            request.answer = carried.answer
            self._open[carried.pending.id] = request

    # ------------------------------------------------------------ activities

    async def _model_step(self, pending: list[Event]) -> ModelStepResult:
        return await workflow.execute_activity(
            "adk_model_step",
            ModelStepInput(
                ref=self._ref,
                step=self._step,
                model_event_id=str(workflow.uuid4()),
                pending_events=pending,
                temp_state=self._temp_state,
                run_before_agent=self._step == 1,
                timestamp=workflow.now().timestamp(),
            ),
            result_type=ModelStepResult,
            start_to_close_timeout=timedelta(seconds=self._input.model_timeout_seconds),
            retry_policy=RetryPolicy(maximum_attempts=self._input.model_maximum_attempts),
            summary=f"{self._agent} · model step {self._step}",
        )

    async def _run_calls(
        self,
        calls: list[PlannedCall],
        confirmations: dict[str, ToolConfirmation],
        inputs: dict[str, dict[str, Any]],
    ) -> Event:
        """Run the calls concurrently and merge their results in call order."""
        results = await asyncio.gather(
            *(self._tool_call(c, confirmations.get(c.id), inputs.get(c.id, {})) for c in calls)
        )
        events = [
            self._event(
                self._agent,
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
        for key, value in merged.actions.state_delta.items():
            if key.startswith(TEMP_PREFIX):
                self._temp_state[key] = value
        return merged

    async def _tool_call(
        self,
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
                ref=self._ref,
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

    async def _append(self, events: list[Event]) -> None:
        if not events:
            return
        await workflow.execute_activity(
            "adk_append_events",
            AppendEventsInput(ref=self._ref, events=events),
            start_to_close_timeout=_APPEND_TIMEOUT,
            summary=f"{self._agent} · append {len(events)} event(s)",
        )

    async def _record_error(
        self, code: str, message: str, pending: list[Event] | None = None
    ) -> None:
        """Persist an error event (after any pending events); never masks the error."""
        event = self._event(self._agent, None)
        event.error_code = code
        event.error_message = message
        try:
            await self._append([*(pending or []), event])
        except ActivityError:
            workflow.logger.warning("could not record error event for %s", self._invocation_id)
        self._error = message
        self._set_status("failed")

    # -------------------------------------------------------------- pausing

    @staticmethod
    def _requests_of(response: Event) -> bool:
        actions = response.actions
        return bool(actions.requested_tool_confirmations or actions.requested_inputs)

    def _open_requests(self, response: Event, by_id: dict[str, PlannedCall]) -> list[Event]:
        """Register the response's requests as open and build the events that record them."""
        actions = response.actions
        calls = [c.to_function_call() for c in by_id.values()]
        requesting = [c for c in by_id.values() if c.id in actions.requested_tool_confirmations]
        confirmation_ids = [f"adk-{workflow.uuid4()}" for _ in requesting]
        for request_id, call in zip(confirmation_ids, requesting, strict=True):
            confirmation = actions.requested_tool_confirmations[call.id]
            self._open[request_id] = _OpenRequest(
                PendingRequest(
                    kind="confirmation",
                    id=request_id,
                    function_call_id=call.id,
                    tool=call.name,
                    args=call.args,
                    hint=confirmation.hint,
                    payload=confirmation.payload,
                    call_digest=call_digest(call.name, call.args),
                    agent=self._agent,
                    branch=self._ref.branch,
                ),
                None,
            )
        for interrupt_id, request in actions.requested_inputs.items():
            call = by_id[request.function_call_id]
            self._open[interrupt_id] = _OpenRequest(
                PendingRequest(
                    kind="input",
                    id=interrupt_id,
                    function_call_id=request.function_call_id,
                    tool=call.name,
                    args=call.args,
                    message=request.message,
                    input_schema=request.input_schema,
                    agent=self._agent,
                    branch=self._ref.branch,
                ),
                request,
            )
        common: dict[str, Any] = {
            "invocation_id": self._invocation_id,
            "author": self._agent,
            "branch": self._ref.branch,
            "timestamp": workflow.now().timestamp(),
        }
        events: list[Event] = []
        if requesting:
            events.append(
                build_confirmation_request_event(
                    calls,
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
        for request_id in list(self._open):
            early = self._early.pop(request_id, None)
            if early is not None:
                self._accept(early, strict=False)
        return events

    async def _wait_for_answers(
        self,
    ) -> tuple[Event, dict[str, ToolConfirmation], dict[str, dict[str, Any]]]:
        """Wait until every open request is answered; return the reply event and answers."""
        self._set_status(self._waiting_status())
        await workflow.wait_condition(
            lambda: all(r.answer is not None for r in self._open.values())
        )
        parts: list[types.Part] = []
        confirmations: dict[str, ToolConfirmation] = {}
        inputs: dict[str, dict[str, Any]] = {}
        for request_id, open_request in self._open.items():
            pending, answer = open_request.pending, open_request.answer
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
                assert isinstance(answer, ResumeInput)
                response = {"input": answer.input}
                inputs.setdefault(pending.function_call_id, {})[request_id] = answer.input
                name = REQUEST_INPUT_FUNCTION_NAME
            parts.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=request_id, name=name, response=response
                    )
                )
            )
            self._answered.add(request_id)
        self._open.clear()
        self._set_status("running")
        return self._event("user", types.Content(role="user", parts=parts)), confirmations, inputs

    def _waiting_status(self) -> AdkStatus:
        kinds = {r.pending.kind for r in self._open.values()}
        return "awaiting_confirmation" if "confirmation" in kinds else "awaiting_input"

    # ------------------------------------------------------ signals/updates

    @workflow.signal(name=CONFIRM_SIGNAL)
    def confirm(self, answer: ConfirmInput) -> None:
        """Answer a confirmation request; unknown ids are buffered, duplicates ignored."""
        self._accept(answer, strict=False)

    @workflow.signal(name=RESUME_SIGNAL)
    def resume(self, answer: ResumeInput) -> None:
        """Answer an input request; unknown ids are buffered, duplicates ignored."""
        self._accept(answer, strict=False)

    @workflow.update(name=CONFIRM_CHECKED_UPDATE)
    def confirm_checked(self, answer: ConfirmInput) -> None:
        """Answer a confirmation request, rejecting unknown or already-answered ids."""
        self._accept(answer, strict=True)

    @confirm_checked.validator
    def _validate_confirm(self, answer: ConfirmInput) -> None:
        self._check(answer)

    @workflow.update(name=RESUME_CHECKED_UPDATE)
    def resume_checked(self, answer: ResumeInput) -> None:
        """Answer an input request, rejecting unknown ids and schema violations."""
        self._accept(answer, strict=True)

    @resume_checked.validator
    def _validate_resume(self, answer: ResumeInput) -> None:
        self._check(answer)

    def _check(self, answer: ConfirmInput | ResumeInput) -> None:
        """Raise the error a checked update reports; never changes state."""
        problem = self._problem(answer)
        if problem is not None:
            kind, message = problem
            raise ApplicationError(message, type=kind, non_retryable=True)

    def _problem(self, answer: ConfirmInput | ResumeInput) -> tuple[str, str] | None:
        """Why ``answer`` cannot be applied to an open request now, or ``None``."""
        request_id = _answer_id(answer)
        noun = "confirmation" if isinstance(answer, ConfirmInput) else "interrupt"
        open_request = self._open.get(request_id)
        if request_id in self._answered or (
            open_request is not None and open_request.answer is not None
        ):
            return "UnknownRequestIdError", f"{noun} id {request_id!r} was already answered"
        if open_request is None:
            open_ids = ", ".join(sorted(self._open)) or "none"
            return (
                "UnknownRequestIdError",
                f"unknown {noun} id {request_id!r}; open requests: {open_ids}",
            )
        pending = open_request.pending
        if isinstance(answer, ConfirmInput):
            if pending.kind != "confirmation":
                return (
                    "UnknownRequestIdError",
                    f"{request_id!r} is an input request; answer it with adk_resume",
                )
            if answer.call_digest is not None and answer.call_digest != pending.call_digest:
                return (
                    "ConfirmationMismatchError",
                    f"confirmation {request_id!r} is for {pending.tool} with digest "
                    f"{pending.call_digest}, not {answer.call_digest}",
                )
            return None
        if pending.kind != "input":
            return (
                "UnknownRequestIdError",
                f"{request_id!r} is a confirmation request; answer it with adk_confirm",
            )
        assert open_request.input_request is not None
        try:
            check_resume_input(open_request.input_request, answer.input)
        except InvalidResumeInputError as err:
            return "InvalidResumeInputError", str(err)
        return None

    def _accept(self, answer: ConfirmInput | ResumeInput, *, strict: bool) -> None:
        request_id = _answer_id(answer)
        if request_id in self._answered or (
            request_id in self._open and self._open[request_id].answer is not None
        ):
            workflow.logger.info("duplicate answer for %s ignored", request_id)
            return
        if request_id not in self._open:
            # Possibly early: an interrupt id chosen by the tool can be known in advance.
            workflow.logger.warning("answer for unknown id %s buffered", request_id)
            if request_id not in self._early:
                self._early[request_id] = answer
            return
        problem = self._problem(answer)
        if problem is not None:
            if strict:
                raise ApplicationError(problem[1], type=problem[0], non_retryable=True)
            workflow.logger.warning("answer refused: %s", problem[1])
            self._ignored.append(f"{request_id}: {problem[1]}")
            return
        self._open[request_id].answer = answer
        if any(r.answer is None for r in self._open.values()):
            self._set_status(self._waiting_status())

    # --------------------------------------------------------------- queries

    @workflow.query(name=PENDING_QUERY)
    def pending(self) -> list[PendingRequest]:
        """The open, unanswered requests."""
        return [r.pending for r in self._open.values() if r.answer is None]

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> InvocationStatus:
        """The invocation's status."""
        return InvocationStatus(
            status=self._status,
            invocation_id=self._invocation_id,
            agent=self._agent,
            step=self._step,
            pending=len(self.pending()),
            final_text=self._final_text,
            error=self._error,
            ignored_signals=[*self._ignored, *(f"{k}: unknown id" for k in self._early)],
        )

    # --------------------------------------------------------------- helpers

    def _event(
        self,
        author: str,
        content: types.Content | None,
        actions: EventActions | None = None,
    ) -> Event:
        return Event(
            id=str(workflow.uuid4()),
            invocation_id=self._invocation_id,
            author=author,
            branch=self._ref.branch,
            content=content,
            actions=actions or EventActions(),
            timestamp=workflow.now().timestamp(),
        )

    def _finish(
        self, status: AdkStatus, *, text: str = "", error: str | None = None
    ) -> InvocationResult:
        self._final_text = text
        self._error = error
        self._set_status(status)
        return InvocationResult(
            invocation_id=self._invocation_id,
            status=status,
            final_text=text,
            steps=self._step,
            error=error,
        )

    def _set_status(self, status: AdkStatus) -> None:
        self._status = status
        workflow.upsert_search_attributes([ADK_STATUS.value_set(status)])
        workflow.set_current_details(self._details())

    def _details(self) -> str:
        """Markdown for the UI: what the run waits for and the command that answers it."""
        wid = workflow.info().workflow_id
        if self._status == "running":
            return f"**Running** `{self._agent}` · step {self._step}"
        if self._status in ("completed", "failed"):
            tail = self._final_text if self._status == "completed" else self._error or ""
            return f"**{self._status.capitalize()}** after {self._step} step(s). {tail}".strip()
        lines = []
        for request in self.pending():
            call = f"{request.tool}({', '.join(f'{k}={v!r}' for k, v in request.args.items())})"
            if request.kind == "confirmation":
                body = json.dumps({"confirmation_id": request.id, "confirmed": True})
                lines += [
                    f"**Waiting for approval** of `{call}`: {request.hint}",
                    f"- payload: `{json.dumps(request.payload, default=str)}`",
                    f"- approve: `adk-temporal confirm '{wid}' {request.id} --approve`",
                    f"- or: `temporal workflow signal --workflow-id '{wid}' "
                    f"--name {CONFIRM_SIGNAL} --input '{body}'`",
                ]
            else:
                body = json.dumps({"interrupt_id": request.id, "input": "<value>"})
                lines += [
                    f"**Waiting for input** to `{call}`: {request.message}",
                    f"- schema: `{json.dumps(request.input_schema)}`",
                    f"- answer: `adk-temporal resume '{wid}' {request.id} --input '<json>'`",
                    f"- or: `temporal workflow signal --workflow-id '{wid}' "
                    f"--name {RESUME_SIGNAL} --input '{body}'`",
                ]
        return "\n".join(lines)


def _answer_id(answer: ConfirmInput | ResumeInput) -> str:
    return answer.confirmation_id if isinstance(answer, ConfirmInput) else answer.interrupt_id
