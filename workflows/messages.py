"""What crosses the workflow boundary: start input, result, signals, updates and queries."""

from __future__ import annotations

from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel, Field

from adk_temporal.activities.messages import AgentSpec, PlannedCall
from adk_temporal.events import InputRequest

__all__ = [
    "CONFIRM_CHECKED_UPDATE",
    "CONFIRM_SIGNAL",
    "PENDING_QUERY",
    "RESUME_CHECKED_UPDATE",
    "RESUME_SIGNAL",
    "STATUS_QUERY",
    "AdkStatus",
    "CarriedRequest",
    "ConfirmInput",
    "InvocationCarry",
    "InvocationInput",
    "InvocationResult",
    "InvocationStatus",
    "PendingRequest",
    "ResumeInput",
    "workflow_id_for",
]

CONFIRM_SIGNAL = "adk_confirm"
"""Signal answering a confirmation request."""
CONFIRM_CHECKED_UPDATE = "adk_confirm_checked"
"""Update answering a confirmation request, rejecting unknown or answered ids."""
RESUME_SIGNAL = "adk_resume"
"""Signal answering an input request."""
RESUME_CHECKED_UPDATE = "adk_resume_checked"
"""Update answering an input request, rejecting unknown ids and schema violations."""
PENDING_QUERY = "adk_pending"
"""Query returning the open requests."""
STATUS_QUERY = "adk_status"
"""Query returning the invocation's status."""

AdkStatus = Literal["running", "awaiting_confirmation", "awaiting_input", "completed", "failed"]
"""Values of the ``AdkStatus`` search attribute."""


def workflow_id_for(app_name: str, user_id: str, session_id: str) -> str:
    """The workflow id of a session's invocations: ``adk/{app}/{user_id}/{session_id}``."""
    return f"adk/{app_name}/{user_id}/{session_id}"


class CarriedRequest(BaseModel):
    """An open request carried across continue-as-new, with its answer if one arrived."""

    pending: PendingRequest
    input_request: InputRequest | None = None
    answer: ConfirmInput | ResumeInput | None = None


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
    paused_calls: list[PlannedCall] = Field(default_factory=list)
    open_requests: list[CarriedRequest] = Field(default_factory=list)
    ended: bool = False


class InvocationInput(BaseModel):
    """Start input of ``InvocationWorkflow``.

    ``continue_as_new_after_events`` bounds a run's history length: at the next step
    boundary or pause past it, the invocation continues as a new run (Temporal's own
    suggestion is always honoured too). ``carry`` is set only by the workflow itself.
    """

    app_name: str
    user_id: str
    session_id: str
    agent_name: str
    message: types.Content | None = None
    invocation_id: str | None = None
    max_steps: int = 25
    model_timeout_seconds: float = 120.0
    model_maximum_attempts: int = 10
    tool_timeout_seconds: float = 300.0
    continue_as_new_after_events: int | None = None
    carry: InvocationCarry | None = None


class ConfirmInput(BaseModel):
    """Payload of ``adk_confirm``: approve or reject one confirmation request.

    ``call_digest``, when given, must equal the digest of the call the request is about; a
    reply crafted for other arguments is refused.
    """

    confirmation_id: str
    confirmed: bool
    payload: Any = None
    call_digest: str | None = None


class ResumeInput(BaseModel):
    """Payload of ``adk_resume``: the value answering one input request (``None`` allowed)."""

    interrupt_id: str
    input: Any = None


class PendingRequest(BaseModel):
    """An open confirmation or input request, as ``adk_pending`` lists it."""

    kind: Literal["confirmation", "input"]
    id: str
    function_call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    hint: str = ""
    payload: Any = None
    message: str = ""
    input_schema: dict[str, Any] | None = None
    call_digest: str = ""
    agent: str = ""
    branch: str = ""


class InvocationStatus(BaseModel):
    """What ``adk_status`` returns."""

    status: AdkStatus
    invocation_id: str
    agent: str
    step: int
    pending: int = 0
    final_text: str = ""
    error: str | None = None
    ignored_signals: list[str] = Field(default_factory=list)


class InvocationResult(BaseModel):
    """Result of an invocation: its final status and answer."""

    invocation_id: str
    status: AdkStatus
    final_text: str = ""
    steps: int = 0
    error: str | None = None
