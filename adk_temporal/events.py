"""Events, the actions they carry, and the wire names of ADK's long-running requests.

An :class:`Event` is one entry of a session's history: a user message, a model reply, a
merged function-response, or a confirmation/input request. Its :class:`EventActions` is the
delta the event applies (state, artifact versions, requested confirmations and inputs,
control flags). These models cross every Temporal boundary, so they are pydantic v2 models
and their JSON keys are part of the wire format.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ADK_ID_PREFIX",
    "REQUEST_CONFIRMATION_FUNCTION_NAME",
    "REQUEST_INPUT_FUNCTION_NAME",
    "WAITED_KEY",
    "CompactionReceipt",
    "Event",
    "EventActions",
    "EventCallback",
    "EventCompaction",
    "InputRequest",
    "KeptRequest",
    "NodeInfo",
    "ToolConfirmation",
]

REQUEST_CONFIRMATION_FUNCTION_NAME = "adk_request_confirmation"
"""Name of the function call that asks a human to approve or reject a tool call."""

REQUEST_INPUT_FUNCTION_NAME = "adk_request_input"
"""Name of the function call that asks a human for an input value."""

WAITED_KEY = "waitedSeconds"
"""In the runtime's reply to a request: how long the request waited for its answer (s)."""

ADK_ID_PREFIX = "adk-"
"""Prefix of ids the runtime generates; such ids are blanked before they reach a model."""


class ToolConfirmation(BaseModel):
    """A confirmation request for one tool call, or the user's answer to it.

    ``timeout_seconds`` (on a request) bounds the wait; ``expired`` (on an answer) says
    nobody answered in time, which counts as a rejection; ``stale`` (on a request) says it
    asks again because the approval the call re-entered with was older than its policy's
    ``max_age``.
    """

    hint: str = ""
    confirmed: bool = False
    payload: Any = None
    timeout_seconds: float | None = None
    expired: bool = False
    stale: bool = False


class InputRequest(BaseModel):
    """An open request for a human-supplied value, raised by ``ctx.request_input``."""

    interrupt_id: str
    function_call_id: str
    message: str = ""
    input_schema: dict[str, Any] | None = None
    timeout_seconds: float | None = None
    """How long the request waits; on expiry the tool re-enters without the input."""


class KeptRequest(BaseModel):
    """A call still open when a compaction was made, so left out of its range."""

    kind: Literal["confirmation", "input", "long_running", "call"]
    call_id: str
    name: str
    """The tool: for a confirmation, the tool whose call waits for it."""
    event_id: str
    """The event holding the call."""


class CompactionReceipt(BaseModel):
    """What a compaction folded into its summary, so the summary's provenance can be checked.

    The folded events are the session's stored events from ``first_event_id`` through
    ``last_event_id`` (the model's view as the compaction saw it: earlier summaries and
    rewound turns left out); ``digest`` is the SHA-256 of their canonical JSON, one line
    each, which ``adk-temporal check-compactions`` recomputes from the store.
    """

    first_event_id: str
    last_event_id: str
    event_count: int
    digest: str
    """``sha256:`` and 64 hex digits."""
    tokens_before: int
    """The summarizer's input: the folded range as it read it."""
    tokens_after: int
    """The summary."""
    tokens_counted_by: Literal["model", "estimate"] = "model"
    """``estimate`` when the summarizer reported no usage (characters / 4)."""
    kept_open: list[KeptRequest] = Field(default_factory=list)
    """The calls still open, left out of the range with everything after them."""


class EventCompaction(BaseModel):
    """A summary standing in for a range of earlier events in the model's view.

    ADK's ``EventCompaction`` (``start_timestamp``, ``end_timestamp``,
    ``compacted_content``); the range is also named by its first and last event ids, as
    events appended in one workflow task share a timestamp. A compaction without ids (one
    ADK wrote) covers the events whose timestamps lie in the range. ``receipt`` (none on
    compactions made before receipts) says what was folded.
    """

    start_timestamp: float
    end_timestamp: float
    compacted_content: types.Content
    start_event_id: str = ""
    end_event_id: str = ""
    receipt: CompactionReceipt | None = None


_MAP_FIELDS = (
    "state_delta",
    "artifact_delta",
    "requested_tool_confirmations",
    "requested_inputs",
)


class NodeInfo(BaseModel):
    """Where in a graph workflow an event was produced (ADK 2's ``NodeInfo``).

    ``path`` names the node run (``wf@1/step@2``: each node with its run number);
    ``output_for`` lists the runs whose output the event's ``output`` is (the node's own,
    then each enclosing workflow it finishes).
    """

    path: str = ""
    output_for: list[str] = Field(default_factory=list)
    message_as_output: bool | None = None
    """The event's content is the node's output (an LLM agent node's answer), as ADK marks
    it; such an event carries no ``output`` of its own."""


class EventActions(BaseModel):
    """The deltas and control flags an event applies.

    Empty maps serialise as ``{}``; ``None`` given for a map is read as empty, so a
    serialised ``EventActions`` never carries ``null`` where a map is expected.
    """

    model_config = ConfigDict(validate_assignment=True)

    state_delta: dict[str, Any] = Field(default_factory=dict)
    artifact_delta: dict[str, int] = Field(default_factory=dict)
    requested_tool_confirmations: dict[str, ToolConfirmation] = Field(default_factory=dict)
    requested_inputs: dict[str, InputRequest] = Field(default_factory=dict)
    skip_summarization: bool = False
    transfer_to_agent: str | None = None
    escalate: bool = False
    end_invocation: bool = False
    rewind_before_invocation_id: str | None = None
    """On a rewind event (:mod:`adk_temporal.rewind`): the invocation the session was rewound
    to before; the model's view skips that invocation's first event up to this event
    (ADK's field of the same name)."""
    compaction: EventCompaction | None = None
    """On a compaction event (:mod:`adk_temporal.compaction`): the summary and the range of
    events it replaces in the model's view (ADK's field of the same name)."""
    route: bool | int | str | list[bool | int | str] | None = None
    """On a graph node's event (:mod:`adk_temporal.workflow`): the route the node chose,
    which decides the edges its output follows (ADK 2's field of the same name)."""

    @field_validator(*_MAP_FIELDS, mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    def is_empty(self) -> bool:
        """True when the actions change nothing."""
        return self == EventActions()


class Event(BaseModel):
    """One entry of a session's history."""

    id: str = ""
    invocation_id: str = ""
    author: str = ""
    branch: str = ""
    isolation_scope: str = ""
    content: types.Content | None = None
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: list[str] = Field(default_factory=list)
    timestamp: float = 0.0
    error_code: str | None = None
    error_message: str | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    """The tokens the model reported for the step that produced this event (model events)."""
    partial: bool | None = None
    """True for a piece of a model reply still being streamed: published to followers only,
    never stored in the session nor shown to a model, and superseded by the final event with
    the same id (ADK's ``partial``)."""
    attempt: int | None = None
    """For a partial event, the step attempt that streamed it: a retried step's pieces carry
    a higher number, so a follower can drop the text of the abandoned attempt."""
    output: Any = None
    """A graph node's output (ADK 2's ``Event.output``); ``None``: the event carries none."""
    node_info: NodeInfo | None = None
    """The graph node run that produced the event (``None`` outside graph workflows)."""
    custom_metadata: dict[str, Any] | None = None
    """What the runtime notes beside an event's content, never shown to a model (ADK's
    field of the same name): who answered the requests a user event answers (a graph's
    pause keeps the response as sent and its answerer here, keyed ``answered`` then by
    request id), the standing grants a response event's calls ran under."""

    @field_validator("actions", mode="before")
    @classmethod
    def _none_is_default(cls, value: Any) -> Any:
        return EventActions() if value is None else value

    def parts(self) -> list[types.Part]:
        """The content's parts, or an empty list."""
        if self.content is None or not self.content.parts:
            return []
        return list(self.content.parts)

    def function_calls(self) -> list[types.FunctionCall]:
        """The function calls in this event, in order."""
        return [p.function_call for p in self.parts() if p.function_call is not None]

    def function_responses(self) -> list[types.FunctionResponse]:
        """The function responses in this event, in order."""
        return [p.function_response for p in self.parts() if p.function_response is not None]

    def text(self) -> str:
        """The concatenated text parts (thoughts excluded)."""
        return "".join(p.text for p in self.parts() if p.text and not p.thought)

    def has_trailing_code_execution_result(self) -> bool:
        """True when the last part is a code-execution result (the model still has to read it)."""
        parts = self.parts()
        return bool(parts) and parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """True for a reply that ends the agent's turn (ADK-Go's ``Event.IsFinalResponse``).

        A pause (``skip_summarization``, long-running calls) is final; otherwise the event
        must hold no calls and no responses, be complete (not ``partial``) and not end in a
        code-execution result, which the model answers next.
        """
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        return not (
            self.function_calls()
            or self.function_responses()
            or self.partial
            or self.has_trailing_code_execution_result()
        )


EventCallback = Callable[[Event], Event | Awaitable[Event | None] | None]
"""A callback of ``App.on_event`` (ADK's ``on_event_callback``): the event a step is about to
store in, a replacement (or ``None``: unchanged) out; it may be a coroutine function
(:mod:`adk_temporal.steps.event_callbacks`)."""
