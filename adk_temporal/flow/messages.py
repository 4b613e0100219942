"""What crosses a boundary of the invocation flow: step inputs and results, answers, carry.

One module for the wire types the flow, its executors (the Temporal workflow, the
in-process runner) and the step implementations (Temporal's activities) share. Inputs carry
ids and the new content of one step, never the conversation so far (the steps read that
from the session service), so workflow history grows linearly with the number of steps.
Models only grow by adding defaulted fields; a step result is a tagged union on ``kind``,
matched exhaustively where it is used.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, TypeAlias

from google.genai import types
from pydantic import BaseModel, Discriminator, Field, StrictBool, Tag

from adk_temporal.approvals import (
    ApprovalPolicy,
    Claim,
    GrantGiven,
    GrantTerms,
    InboxFilter,
    TrailEntry,
    Vote,
    inbox_matches,
)
from adk_temporal.budgets import Budgets, check_budget, json_size
from adk_temporal.compaction import EventsCompactionConfig
from adk_temporal.double_texting.policy import DoubleTexting
from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation
from adk_temporal.ids import session_key_of
from adk_temporal.run_config import RunConfig
from adk_temporal.tools import EffectReceipt
from adk_temporal.usage import BudgetScope, TokenGrant, TokenUsage

from .graph_spec import GraphSpec
from .graph_state import GraphCarry, NodeStatus
from .node_values import NodeValue

__all__ = [
    "DEFAULT_TOOL_ATTEMPTS",
    "PREVIEW_BYTES",
    "AdkStatus",
    "AgentSpec",
    "AppendEventsInput",
    "CallsStep",
    "CarriedRequest",
    "ConfirmInput",
    "DelegateStep",
    "EndedStep",
    "ErrorStep",
    "FinalStep",
    "InDoubtResult",
    "InlineResult",
    "InvocationCarry",
    "InvocationRef",
    "InvocationResult",
    "InvocationStatus",
    "MergedResponses",
    "ModelStepInput",
    "ModelStepReply",
    "ModelStepResult",
    "NotifyEvent",
    "NotifyPlan",
    "OverBudgetStep",
    "PendingConfirmation",
    "PendingEvent",
    "PendingInput",
    "PendingRequest",
    "PlannedCall",
    "RanStep",
    "Refusal",
    "RequestSummary",
    "ResumeInput",
    "RetrySettings",
    "RouteStep",
    "StagedResponse",
    "StagedResult",
    "ToolCallInput",
    "ToolCallResult",
    "ToolOptions",
    "VoteSummary",
    "WorkflowPosition",
    "as_content",
    "call_summary",
    "stage_id",
]

AdkStatus = Literal[
    "running", "awaiting_confirmation", "awaiting_input", "completed", "failed", "cancelled"
]
"""An invocation's status (also the ``AdkStatus`` search attribute on Temporal)."""


class InvocationRef(BaseModel):
    """Where a step finds its work, as it crosses history.

    The app, user and session ids are ``None`` when the workflow id already spells them
    (``adk/{app}/{user}/{session}``): nothing a step can read from its own context is
    repeated in every input. Steps read them back (``steps.SessionRef.resolve``).
    """

    app_name: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    agent_name: str
    invocation_id: str = ""
    """``""`` only in what a baseline run's workflow sends: the invocation its run started
    (:mod:`adk_temporal.workflows.short_ids`)."""
    branch: str = ""
    isolation_scope: str = ""
    node_path: str = ""
    """The graph node run an LLM agent node's step belongs to (``wf@1/agent@1``): its
    events carry it as their node path; ``""`` outside graphs."""

    def without_session_ids(self, workflow_id: str) -> InvocationRef:
        """This ref minus the ids ``workflow_id`` spells (unchanged when it spells others)."""
        if session_key_of(workflow_id) != (self.app_name, self.user_id, self.session_id):
            return self
        return self.model_copy(update={"app_name": None, "user_id": None, "session_id": None})


DEFAULT_TOOL_ATTEMPTS = 3
"""How often a failing tool runs, in all, unless its retry policy says otherwise."""


class RetrySettings(BaseModel):
    """A retry policy with every value decided, in seconds; ``maximum_attempts=0`` is no limit."""

    maximum_attempts: int
    initial_interval: float
    backoff_coefficient: float
    maximum_interval: float
    non_retryable_error_types: list[str]


class ToolOptions(BaseModel):
    """Activity options a tool asked for (``tool(...)`` decorator), in seconds.

    ``on_failure`` says what happens once a failing call has used its attempts: the model
    sees ``{"error": ...}`` and the invocation goes on (``tell_model``, as ADK does), or the
    invocation fails (``fail_invocation``).
    """

    start_to_close_seconds: float | None = None
    heartbeat_seconds: float | None = None
    maximum_attempts: int | None = None
    initial_interval_seconds: float | None = None
    backoff_coefficient: float | None = None
    maximum_interval_seconds: float | None = None
    non_retryable_error_types: list[str] | None = None
    on_failure: Literal["tell_model", "fail_invocation"] = "tell_model"
    long_running: bool = False
    """ADK's long-running tool: the call's real result comes later, as a function response."""
    edit_schema: dict[str, Any] | None = None
    """Set for a tool declared ``editable``: the JSON schema of its parameters, which an
    approver's edited arguments must satisfy; ``None``: edits are refused."""
    approval: ApprovalPolicy | None = None
    """The approval policy the call's confirmation is judged by (the tool's, or the App's
    for it); ``None``: one answer by anyone decides it."""
    compensator: str | None = None
    """For a tool with external effects: the name of its compensating tool, if it has one
    (an operator may resolve a call in doubt by running it)."""
    local: bool = False
    """The call may run as a local activity (the serving app's ``LocalSteps``: the tool is
    declared for it and was short)."""

    def retry(self) -> RetrySettings:
        """The retry policy the tool runs under: its own values, the defaults for the rest.

        The defaults: :data:`DEFAULT_TOOL_ATTEMPTS` attempts, 1 s after the first failure,
        doubling, at most 30 s apart.
        """
        initial = self.initial_interval_seconds or 1.0
        return RetrySettings(
            maximum_attempts=(
                DEFAULT_TOOL_ATTEMPTS if self.maximum_attempts is None else self.maximum_attempts
            ),
            initial_interval=initial,
            backoff_coefficient=self.backoff_coefficient or 2.0,
            maximum_interval=self.maximum_interval_seconds or max(30.0, initial),
            non_retryable_error_types=list(self.non_retryable_error_types or ()),
        )


class PlannedCall(BaseModel):
    """A function call the model asked for, with what the flow needs to run it.

    ``agent_tool`` names the agent to run when the called tool is an ``AgentTool``: the
    flow runs that agent itself instead of a tool step.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    options: ToolOptions = Field(default_factory=ToolOptions)
    agent_tool: str | None = None

    def summary(self) -> str:
        """The call as a user reads it in the Temporal UI: ``get_weather(city='Hangzhou')``."""
        return call_summary(self.name, self.args)

    def to_function_call(self) -> types.FunctionCall:
        """The call as a ``types.FunctionCall``."""
        return types.FunctionCall(id=self.id, name=self.name, args=dict(self.args))


def call_summary(name: str, args: dict[str, Any]) -> str:
    """A call as people read it, ``get_weather(city='Hangzhou')``, at most 200 characters."""
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    text = f"{name}({shown})"
    return text if len(text) <= 200 else text[:197] + "..."


NotifyEvent: TypeAlias = Literal["paused", "completed", "failed"]
"""An invocation event the app's notifications may be sent for."""


class NotifyPlan(BaseModel):
    """Which events a worker's app notifies, to which endpoints, retried for how long.

    Endpoints are named by digests of their URLs: a webhook URL may hold a token, and
    history never holds it.
    """

    events: list[NotifyEvent]
    endpoints: list[str]
    initial_interval_seconds: float = 1.0
    maximum_interval_seconds: float = 60.0
    give_up_after_seconds: float = 86_400.0


class AgentSpec(BaseModel):
    """An agent's kind and sub-agents: all the flow needs to orchestrate it."""

    name: str
    kind: Literal["llm", "sequential", "parallel", "loop", "graph", "remote"]
    sub_agents: list[AgentSpec] = Field(default_factory=list)
    parent: str | None = None
    max_iterations: int | None = None
    """A loop agent's limit on iterations; ``None`` loops until a sub-agent escalates."""
    notify: NotifyPlan | None = None
    """On a tree's root: the notifications the serving app sends (``None``: none)."""
    own_queue: bool = False
    """On a tree's root: the serving app is named, and its workers also poll its own task
    queue (``ids.app_task_queue``), where the run's steps then go."""
    any_app_queue: bool = False
    """On a tree's root: the serving app is unnamed, workers of named apps share its task
    queue, and its workers also poll the queue of unnamed apps' workers
    (``ids.any_app_task_queue``), where the run's steps then go."""
    compaction: EventsCompactionConfig | None = None
    """On a tree's root: when the serving app compacts sessions (``None``: never)."""
    graph: GraphSpec | None = None
    """A graph workflow's graph (:mod:`adk_temporal.workflow`)."""
    double_texting: DoubleTexting = "reject"
    """On a tree's root: what a message sent to a busy session of the serving app does when
    its sender named no policy (``App.double_texting``)."""
    local: bool = False
    """An LLM agent whose model steps may run as local activities (the serving app's
    ``LocalSteps``: its steps were short on the worker that described the tree)."""

    def local_agents(self) -> set[str]:
        """The names of the agents of this tree marked :attr:`local`."""
        found = {self.name} if self.local else set()
        for sub in self.sub_agents:
            found |= sub.local_agents()
        return found

    def find(self, name: str) -> AgentSpec | None:
        """The agent called ``name`` in this tree, or ``None``."""
        if self.name == name:
            return self
        for sub in self.sub_agents:
            found = sub.find(name)
            if found is not None:
                return found
        return None


class StagedResponse(BaseModel):
    """A tool step's response event, staged in the session store under ``staged``.

    ``optional`` marks the response of a call that was cancelled: it is there if the tool
    finished anyway, and left out of the merge (not an error) when it is not.
    """

    staged: str
    optional: bool = False


def _response_tag(value: Any) -> str:
    staged = value.get("staged") if isinstance(value, dict) else getattr(value, "staged", None)
    return "staged" if staged is not None else "event"


class MergedResponses(BaseModel):
    """A step's function-response event, made from its calls' responses when it is stored.

    ``responses`` are in call order: the events the flow made itself (an agent tool's
    answer, a failed call's error) and references to those the tool steps staged. The
    stored event is their merge (:func:`~adk_temporal.merge.merge_function_response_events`)
    with this ``id`` and ``timestamp``. No response travels through history.
    """

    kind: Literal["merged"]
    id: str
    timestamp: float = 0.0
    """``0.0`` in a step's input: the step's own ``timestamp``."""
    responses: list[
        Annotated[
            Annotated[Event, Tag("event")] | Annotated[StagedResponse, Tag("staged")],
            Discriminator(_response_tag),
        ]
    ]


def _pending_tag(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "merged" if kind == "merged" else "event"


PendingEvent: TypeAlias = Annotated[
    Annotated[Event, Tag("event")] | Annotated[MergedResponses, Tag("merged")],
    Discriminator(_pending_tag),
]
"""An event the next step stores: as it is, or merged from staged responses."""


class ModelStepInput(BaseModel):
    """Input of the model step: append ``pending_events``, then call the model once."""

    ref: InvocationRef
    step: int
    model_event_id: str
    pending_events: list[PendingEvent] = Field(default_factory=list)
    temp_state: dict[str, Any] = Field(default_factory=dict)
    run_before_agent: bool = False
    describe: bool = False
    timestamp: float = 0.0
    stream: bool = False
    """Forward the model's text to the session's followers as it is produced."""
    budgets: Budgets = Field(default_factory=Budgets)
    """Bounds the reply (``model_reply_bytes``); only values off their default travel."""
    model_group: str | None = None
    """The model limit whose task queue the step was sent to (``None``: the invocation's)."""
    run_config: RunConfig | None = None
    """The invocation's options, as callbacks see them (``ctx.run_config``); ``None`` in
    steps recorded before they travelled (the defaults)."""
    choose_agent: bool = False
    """The invocation's first step at the root of its tree: run the agent the conversation
    is with (ADK's runner rule, read from the session), which may be another than the
    ref's; the result names it."""
    grants: list[TokenGrant] = Field(default_factory=list)
    """Budget grants answered since the last step, recorded in the session store's ledger
    before the budgets are checked (once each: a retried step records nothing twice)."""
    node_input: NodeValue | None = None
    """In a graph's LLM agent node (``ref.node_path``): the node's input, the user turn the
    agent answers. It is shown to the model, never stored (ADK keeps it in memory only)."""


class _StepOutcome(BaseModel):
    """What every model step that ran the agent reports besides its kind."""

    actions: EventActions = Field(default_factory=EventActions)
    tree: AgentSpec | None = None
    """The agent's tree, when the input asked to ``describe`` it."""
    usage: TokenUsage | None = None
    """The tokens the model reported for the step; ``None`` when no model was called."""
    agent: str | None = None
    """The agent that ran, when the step chose another than its input named (the agent a
    follow-up message continues the conversation with; ``ModelStepInput.choose_agent``)."""


# ``kind`` has no default on purpose: payloads leave out fields at their default value, and
# the tag must always be written for the union to decode.


class CallsStep(_StepOutcome):
    """The model asked for function calls: run them, then step again. No calls: the reply
    was no answer (thoughts only, a code result the model has yet to read) and the model is
    called again at once, as ADK-Go's ``Flow.Run`` does."""

    kind: Literal["calls"]
    function_calls: list[PlannedCall]


class FinalStep(_StepOutcome):
    """The agent answered ``text``; its turn is over."""

    kind: Literal["final"]
    text: str = ""


class EndedStep(_StepOutcome):
    """A before-agent callback ended the invocation with ``text``."""

    kind: Literal["ended"]
    text: str = ""


class ErrorStep(_StepOutcome):
    """The model answered with an error, recorded as the step's event."""

    kind: Literal["error"]
    error_code: str | None = None
    error_message: str | None = None

    def describe(self) -> str:
        """The error as one line."""
        return self.error_message or self.error_code or "model error"


class DelegateStep(BaseModel):
    """The agent is a workflow agent: no model was called, ``tree`` says what to run."""

    kind: Literal["delegate"]
    tree: AgentSpec


class OverBudgetStep(BaseModel):
    """The model step ran nowhere: a cumulative token budget is reached (``limit``, grants
    included, with ``used`` spent, and ``reserved`` by steps running now when they held the
    rest for longer than the step waits). Nothing was stored; the flow asks whether to
    allow more and steps again with the same pending events, or ends."""

    kind: Literal["over_budget"]
    scope: BudgetScope
    limit: int
    used: int
    reserved: int = 0


RanStep: TypeAlias = CallsStep | FinalStep | EndedStep | ErrorStep | DelegateStep
"""A model step that ran: the agent's outcome, or the workflow agent it described."""

ModelStepResult: TypeAlias = Annotated[RanStep | OverBudgetStep, Field(discriminator="kind")]
"""Result of the model step, tagged by ``kind``."""


class RouteStep(BaseModel):
    """The model step ran nowhere: its model is limited, and its steps run on the limit's
    task queue (``model_limits``), or it reached a worker of another app. The engine sends
    it where it runs; the flow never sees this."""

    kind: Literal["route"]
    group: str | None
    app: str | None = None
    """Set when the step reached a worker of another app: the run's app."""
    to: Literal["app", "any_app"] = "app"
    """Where a step of another app goes: the app's own task queue
    (``ids.app_task_queue``), or the queue of unnamed apps' workers
    (``ids.any_app_task_queue``) when no worker of the app polls its own but one of those
    does."""
    unpolled: bool = False
    """No worker of the app polled its own queue when the step was routed there: the run
    says so while its step waits."""


ModelStepReply: TypeAlias = Annotated[
    RanStep | OverBudgetStep | RouteStep,
    Field(discriminator="kind"),
]
"""What the model step answers its engine: a result, or where to run it instead."""


class ToolCallInput(BaseModel):
    """Input of the tool step: one function call, and the answers it may re-enter with."""

    ref: InvocationRef
    call: PlannedCall
    tool_confirmation: ToolConfirmation | None = None
    resume_inputs: dict[str, Any] = Field(default_factory=dict)
    expired_inputs: list[str] = Field(default_factory=list)
    temp_state: dict[str, Any] = Field(default_factory=dict)
    budgets: Budgets = Field(default_factory=Budgets)
    run_config: RunConfig | None = None
    """The invocation's options, as the tool sees them (``ctx.run_config``)."""
    decided_at: float | None = None
    """When the approval the call re-enters with was decided (the run's clock): a policy's
    ``max_age`` is counted from it."""
    grant: GrantGiven | None = None
    """A standing grant given with the approval: the step records it before the call runs."""
    in_doubt_retry: str | None = None
    """The resolution (its request id) that lets a call in doubt run once more; ``None``
    for every other call."""
    compensates: PlannedCall | None = None
    """For the call of a compensating tool: the call in doubt it undoes, which its
    response answers."""


class StagedResult(BaseModel):
    """A tool step's result: the id its response event is staged under in the session store
    (the response itself stays out of history), and the deltas the tool recorded."""

    staged: str
    actions: EventActions = Field(default_factory=EventActions)


class InlineResult(BaseModel):
    """A result carrying its response inline: the flow's own results (an agent tool's
    answer, a failed call's error).

    Also the legacy wire shape of a tool step: steps of releases before responses were
    staged (2026-11) returned this; their results still decode from recorded histories.
    """

    response: dict[str, Any] | None = None
    actions: EventActions = Field(default_factory=EventActions)


class InDoubtResult(BaseModel):
    """A call of a tool with external effects that an earlier attempt began and never
    finished (its worker was lost, or its code raised): the tool was not run again, and
    the call waits for an operator's resolution (:mod:`.doubt_requests`)."""

    in_doubt: EffectReceipt
    actions: EventActions = Field(default_factory=EventActions)


def _result_tag(value: Any) -> str:
    def field(name: str) -> Any:
        return value.get(name) if isinstance(value, dict) else getattr(value, name, None)

    if field("in_doubt") is not None:
        return "in_doubt"
    return "staged" if field("staged") is not None else "inline"


ToolCallResult: TypeAlias = Annotated[
    Annotated[StagedResult, Tag("staged")]
    | Annotated[InlineResult, Tag("inline")]
    | Annotated[InDoubtResult, Tag("in_doubt")],
    Discriminator(_result_tag),
]
"""Result of the tool step: staged (what tool steps return), inline, or in doubt. Told
apart by whether ``in_doubt`` or ``staged`` is set, as results were recorded before the arms
had names."""


class AppendEventsInput(BaseModel):
    """Input of the append step: events decided by the flow, appended idempotently."""

    ref: InvocationRef
    events: list[PendingEvent]


class ConfirmInput(BaseModel):
    """An approval or rejection of one confirmation request (signal ``adk_confirm``).

    ``confirmed`` must be a JSON boolean: ``"yes"`` or ``1`` is malformed, not an approval.
    ``call_digest``, when given, must equal the digest of the call the request is about; a
    reply crafted for other arguments is refused.
    """

    confirmation_id: str
    confirmed: StrictBool
    payload: Any = None
    call_digest: str | None = None
    answered_by: str | None = None
    """Who answered, as the channel authenticated them (``None``: not said)."""
    channel: str | None = None
    """How the answer came (``gateway``, ``link``, ``cli``, ``console``…); the run records
    ``signal`` or ``update`` for an answer that names none."""
    answered_at: float | None = None
    """When the run took the answer (POSIX seconds, the workflow's clock): set by the run,
    whatever the sender put here."""
    edited_args: dict[str, Any] | None = None
    """An approval's edited arguments: the call runs with them instead of the model's
    (only for a tool declared ``editable``, checked against its parameter schema)."""
    groups: list[str] | None = None
    """The groups the channel authenticated ``answered_by`` in (approvers may be groups)."""
    grant: GrantTerms | None = None
    """With an approval: a standing grant for later calls of the same tool."""


class ResumeInput(BaseModel):
    """The value answering one input request (signal ``adk_resume``); ``None`` is allowed."""

    interrupt_id: str
    input: Any = None
    answered_by: str | None = None
    """Who answered (see :attr:`ConfirmInput.answered_by`)."""
    groups: list[str] | None = None
    """The groups the channel authenticated ``answered_by`` in."""
    channel: str | None = None
    """How the answer came (see :attr:`ConfirmInput.channel`)."""
    answered_at: float | None = None
    """When the run took the answer (see :attr:`ConfirmInput.answered_at`)."""


class _OpenRequest(BaseModel):
    """What every open request has, as ``adk_pending`` lists it."""

    id: str
    function_call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    agent: str = ""
    branch: str = ""
    expires_at: float | None = None
    """When the request expires (POSIX seconds), if it has a deadline."""
    opened_at: float | None = None
    """When the request was opened (POSIX seconds; ``None`` in runs recorded before)."""
    assignee: str | None = None
    """Whose inbox the request is in (a group or principal), if anyone's."""
    claim: Claim | None = None
    """The claim an approver holds on it (look at ``until``: it may have lapsed)."""
    due_at: float | None = None
    """When it is due (POSIX seconds), for overdue listings."""
    trail: list[TrailEntry] = Field(default_factory=list)
    """Claims, releases, assignments, reminders and reassignments, oldest first."""

    def _summary(self, **asked: Any) -> RequestSummary:
        """The published summary, with what this kind of request asks (``asked``)."""
        payload = asked.pop("digested")
        encoded = json.dumps(payload, sort_keys=True, default=str).encode()
        return RequestSummary(
            id=self.id,
            tool=self.tool,
            call=call_summary(self.tool, self.args),
            agent=self.agent,
            branch=self.branch,
            payload_digest=hashlib.sha256(encoded).hexdigest()[:16],
            payload_size=len(encoded),
            expires_at=self.expires_at,
            args=self.args if json_size(self.args, "the arguments") <= PREVIEW_BYTES else None,
            opened_at=self.opened_at,
            assignee=self.assignee,
            claimed_by=self.claim.by if self.claim is not None else None,
            claimed_until=self.claim.until if self.claim is not None else None,
            due_at=self.due_at,
            **asked,
        )


class PendingConfirmation(_OpenRequest):
    """An open confirmation request: approve or reject the call ``function_call_id``."""

    kind: Literal["confirmation"]
    hint: str = ""
    payload: Any = None
    call_digest: str = ""
    edit_schema: dict[str, Any] | None = None
    """A confirmation of an ``editable`` tool's call: the schema edited arguments must
    satisfy; ``None``: the approver may not edit them."""
    policy: ApprovalPolicy | None = None
    """The approval policy its answers are judged by; ``None``: one answer by anyone."""
    votes: list[Vote] = Field(default_factory=list)
    """The votes taken so far, while the policy is not met yet."""
    reopened_from: str | None = None
    """The request this one re-opens: the call asked again because its approval was older
    than the policy's ``max_age`` when the call was to run."""
    requesters: list[str] = Field(default_factory=list)
    """Under a policy that keeps requesters from approving: who they are (who started the
    invocation, the session's user), published so a client refuses their approval early."""

    def _approvers(self) -> list[str]:
        """Who may answer now: the policy's approvers, and its ``reassign_to`` once its
        escalation reassigned the request."""
        if self.policy is None:
            return []
        moved = any(e.action == "reassigned" and e.by is None for e in self.trail)
        extra = [self.policy.reassign_to] if moved and self.policy.reassign_to else []
        return [*self.policy.approvers, *extra]

    def summary(self) -> RequestSummary:
        """What is published about this request where Temporal serves it without a worker."""
        return self._summary(
            kind="confirmation",
            hint=_clip(self.hint),
            digested=self.payload,
            payload_preview=_preview(self.payload),
            votes=[VoteSummary.of(v) for v in self.votes],
            approvals=self.policy.approvals if self.policy is not None else 1,
            approvers=self._approvers(),
            requesters=self.requesters,
            reopened_from=self.reopened_from,
        )


class PendingInput(_OpenRequest):
    """An open input request: a value (satisfying ``input_schema``) answers it."""

    kind: Literal["input"]
    message: str = ""
    input_schema: dict[str, Any] | None = None
    long_running: bool = False
    """An input request whose answer is the function response of a long-running tool's
    call ``function_call_id`` (its id is that call id); stored as the user's response."""

    def summary(self) -> RequestSummary:
        """What is published about this request where Temporal serves it without a worker."""
        return self._summary(
            kind="input",
            message=_clip(self.message),
            digested=self.input_schema,
            long_running=self.long_running,
        )


PendingRequest: TypeAlias = Annotated[
    PendingConfirmation | PendingInput, Field(discriminator="kind")
]
"""An open request, as ``adk_pending`` lists it and a run carries it across continue-as-new:
a confirmation or an input request, told apart by ``kind``. Requests stored by earlier
releases had every field of both kinds; each arm ignores the other's."""


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


PREVIEW_BYTES = 2048
"""How much of a request's payload (and how large its arguments) a listing publishes."""


def _preview(payload: Any) -> str:
    """The payload's indented JSON, cut after :data:`PREVIEW_BYTES` bytes (whole characters),
    with ``…`` at the cut: an approver reads what they approve before opening it whole."""
    text = json.dumps(payload, indent=2, default=str, ensure_ascii=False)
    raw = text.encode()
    if len(raw) <= PREVIEW_BYTES:
        return text
    return raw[:PREVIEW_BYTES].decode(errors="ignore") + "…"


class VoteSummary(BaseModel):
    """One vote as a listing publishes it."""

    by: str
    decision: Literal["approved", "rejected"]
    at: float | None = None
    channel: str | None = None

    @classmethod
    def of(cls, vote: Vote) -> VoteSummary:
        """The published form of ``vote``."""
        decision: Literal["approved", "rejected"] = "approved" if vote.approve else "rejected"
        return cls(by=vote.by, decision=decision, at=vote.at, channel=vote.channel)


class RequestSummary(BaseModel):
    """An open request as the run publishes it in its memo: readable with no worker running.

    The payload (or an input request's schema) is summarised by its digest and size and,
    for a confirmation, a bounded preview: never published whole.
    """

    kind: Literal["confirmation", "input"]
    id: str
    tool: str
    call: str
    agent: str = ""
    branch: str = ""
    hint: str = ""
    message: str = ""
    payload_digest: str = ""
    payload_size: int = 0
    expires_at: float | None = None
    long_running: bool = False
    """The answer is a long-running tool call's function response (see PendingRequest)."""
    args: dict[str, Any] | None = None
    """The call's arguments whole, when their JSON is at most :data:`PREVIEW_BYTES` (``call``
    always shows them, clipped)."""
    payload_preview: str = ""
    """A confirmation's payload as indented JSON, its first :data:`PREVIEW_BYTES` bytes
    (``…`` marks a cut: the session's ``pending`` has it whole)."""
    opened_at: float | None = None
    """When the request was opened (POSIX seconds), for "waiting 3 h"."""
    assignee: str | None = None
    """Whose inbox it is in."""
    claimed_by: str | None = None
    """Who claimed it (until ``claimed_until``; a lapsed claim holds nothing)."""
    claimed_until: float | None = None
    due_at: float | None = None
    """When it is due (POSIX seconds)."""
    votes: list[VoteSummary] = Field(default_factory=list)
    """A confirmation's votes so far."""
    approvals: int = 1
    """How many distinct approvals a confirmation needs."""
    approvers: list[str] = Field(default_factory=list)
    """Who may answer it (principals or groups); empty: anyone."""
    requesters: list[str] = Field(default_factory=list)
    """Who may not approve it (the invocation's requesters, under such a policy)."""
    reopened_from: str | None = None
    """The request this one re-opens."""

    def in_view(self, view: InboxFilter, now: float) -> bool:
        """Whether an inbox listing ``view`` shows this request at ``now``."""
        return inbox_matches(
            view,
            assignee=self.assignee,
            claimed_by=self.claimed_by,
            claimed_until=self.claimed_until,
            due_at=self.due_at,
            now=now,
        )


class Refusal(BaseModel):
    """An answer that changed nothing, as it is remembered: never its payload (``inbox``:
    a claim, release or assignment that was refused)."""

    id: str
    kind: Literal["confirmation", "input", "inbox"]
    size: int
    reason: str


class CarriedRequest(BaseModel):
    """An open request carried across continue-as-new, with its answer if one arrived."""

    pending: PendingRequest
    input_request: InputRequest | None = None
    answer: ConfirmInput | ResumeInput | None = None


class WorkflowPosition(BaseModel):
    """Where a sequential or loop agent stood: its iteration and the sub-agent running."""

    agent: str
    iteration: int = 0
    index: int = 0


class InvocationCarry(BaseModel):
    """What a run hands to the next across continue-as-new: ids, counters, open requests.

    Never the conversation: events are already in the session service. ``agent`` is the LLM
    agent that was running (a transfer may have moved away from ``entry_agent``).
    """

    invocation_id: str
    step: int
    agent: str = ""
    entry_agent: str = ""
    tree: AgentSpec | None = None
    temp_state: dict[str, Any] = Field(default_factory=dict)
    answered: list[str] = Field(default_factory=list)
    early: list[ConfirmInput | ResumeInput] = Field(default_factory=list)
    ignored: list[str] = Field(default_factory=list)
    """Refusal lines carried by runs recorded before :attr:`refusals` existed."""
    refusals: list[Refusal] = Field(default_factory=list)
    expired: dict[str, float] = Field(default_factory=dict)
    paused_calls: list[PlannedCall] = Field(default_factory=list)
    open_requests: list[CarriedRequest] = Field(default_factory=list)
    ended: bool = False
    positions: list[WorkflowPosition] = Field(default_factory=list)
    """The sequential and loop agents around ``entry_agent``, outermost first."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """The tokens the invocation's earlier runs used."""
    continued_by: str | None = None
    """The agent a follow-up message continued the conversation with, when not the one the
    invocation was started with."""
    app_queue: str | None = None
    """The task queue of the app's own steps, once a step reached a worker of another app
    on a shared queue (``ids.app_task_queue``); ``None``: the invocation's own queue."""
    grants: list[TokenGrant] = Field(default_factory=list)
    """Budget grants answered but not yet recorded by a model step."""
    graph: GraphCarry | None = None
    """Set when the run handed over inside a graph workflow (``agent``): where the graph
    stood."""


class InvocationStatus(BaseModel):
    """Where an invocation stands (query ``adk_status``)."""

    status: AdkStatus
    invocation_id: str
    agent: str
    step: int
    pending: int = 0
    final_text: str = ""
    error: str | None = None
    ignored_signals: list[str] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """The tokens the invocation's model steps used so far."""
    nodes: dict[str, NodeStatus] = Field(default_factory=dict)
    """In a graph workflow run: where each node that ran stands, by its name below the root
    graph (a node not listed is pending)."""


class InvocationResult(BaseModel):
    """Result of an invocation: its final status and answer."""

    invocation_id: str
    status: AdkStatus
    final_text: str = ""
    steps: int = 0
    error: str | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """The tokens the invocation's model steps used."""


def as_content(message: str | types.Content | None, budgets: Budgets) -> types.Content | None:
    """The user message as content, refused before anything starts when over its budget.

    Raises:
        BudgetExceededError: It is larger than ``budgets.message_bytes``.
        UnencodableValueError: It cannot be encoded.
    """
    if message is None:
        return None
    content = (
        message
        if isinstance(message, types.Content)
        else types.Content(role="user", parts=[types.Part(text=message)])
    )
    check_budget(
        content.model_dump(mode="json", exclude_none=True),
        "the message",
        budgets.message_bytes,
        "message_bytes",
    )
    return content


def stage_id(invocation_id: str, function_call_id: str) -> str:
    """The id a tool step stages its response under.

    A call answers once per dispatch, and a call is dispatched again (after an approval)
    only once its earlier response is stored: the id never holds two responses at once.
    """
    return f"{invocation_id}/{function_call_id}"
