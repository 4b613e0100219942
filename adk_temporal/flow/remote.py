"""Remote agents in the flow: a turn sent to an agent that runs elsewhere, its pauses ours.

A remote agent (an A2A agent, :mod:`adk_temporal.a2a`) answers a turn with a reply, a
failure, or a question its task waits on. The flow runs it as a loop of remote steps: a
question opens one of our own requests — a confirmation when the far side asks to approve a
call (bound to that call's digest), else an input request — carrying the question and the
original call id up to whoever answers this invocation; the answer goes back to the far side
on the same remote task by the next remote step. What crosses history is the question and
the answer, never the conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeAlias

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from adk_temporal.budgets import Budgets
from adk_temporal.confirmation import build_confirmation_request_event, call_digest
from adk_temporal.events import Event, InputRequest, ToolConfirmation
from adk_temporal.resume import build_input_request_event

from .messages import (
    InvocationRef,
    PendingConfirmation,
    PendingEvent,
    PendingInput,
    PendingRequest,
)

__all__ = [
    "CREDENTIAL_KEY",
    "RemoteAnswer",
    "RemoteAsked",
    "RemoteDone",
    "RemoteFailed",
    "RemoteQuestion",
    "RemoteReply",
    "RemoteStepInput",
    "RemoteStepResult",
    "RemoteTurn",
    "RemoteWorking",
    "remote_request",
]

CREDENTIAL_KEY = "x-adk-credential"
"""Marks an input request's schema as a request for credentials (A2A ``auth-required``); a
JSON-schema annotation, ignored by validation."""


class RemoteQuestion(BaseModel):
    """What a remote agent's paused task asks, as its answer must go back."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    context_id: str = ""
    status_message_id: str = ""
    """The remote status message that asked: while the task still shows it, the question is
    open (an answer sent before a retry is not sent twice)."""
    credential: bool = False
    """The task is ``auth-required``: the answer is a credential."""
    kind: Literal["confirmation", "input"] = "input"
    request_id: str = ""
    """The far side's own id of the request, when it names one."""
    function_call_id: str = ""
    """The call the far side paused, when it names one: the original call id."""
    tool: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    text: str = ""
    """The question in words (a confirmation's hint, an input request's message)."""
    payload: Any = None
    call_digest: str = ""
    """The far side's digest of the call to approve, sent back with the decision."""
    input_schema: dict[str, Any] | None = None


class RemoteAnswer(BaseModel):
    """Our answer to a :class:`RemoteQuestion`, as the next remote step sends it."""

    kind: Literal["confirmation", "input"]
    confirmed: bool = False
    payload: Any = None
    value: Any = None
    expired: bool = False
    """Nobody answered before the request's deadline: the far side is told no (a rejection,
    or no value)."""


class RemoteStepInput(BaseModel):
    """Input of the remote step: send a turn (or an answer) and follow the remote task.

    ``message_id`` is the A2A message id, decided by the workflow, so a retried step sends
    the same message and a server that dedupes on it creates one task.
    """

    ref: InvocationRef
    event_id: str
    """The id of the event storing the remote reply (or its failure): a retry finds it."""
    message_id: str
    pending_events: list[PendingEvent] = Field(default_factory=list)
    question: RemoteQuestion | None = None
    """The question ``answer`` answers; ``None`` for a new turn or a task followed on."""
    answer: RemoteAnswer | None = None
    task_id: str | None = None
    """A remote task to follow on, when the previous step handed back while it worked."""
    timestamp: float
    stream: bool = False
    budgets: Budgets = Field(default_factory=Budgets)
    follow_seconds: float = 240.0
    """How long the step follows a working task before it hands back (``working``)."""


class RemoteDone(BaseModel):
    """The remote task completed; its reply is stored as the agent's event."""

    kind: Literal["done"]
    text: str = ""
    task_id: str = ""


class RemoteAsked(BaseModel):
    """The remote task waits for an answer to ``question``."""

    kind: Literal["asked"]
    question: RemoteQuestion


class RemoteWorking(BaseModel):
    """The remote task still works: the flow follows it on with another step."""

    kind: Literal["working"]
    task_id: str


class RemoteFailed(BaseModel):
    """The remote task failed, was cancelled or refused the turn; stored as an error event."""

    kind: Literal["failed"]
    error: str
    task_id: str = ""


RemoteStepResult: TypeAlias = Annotated[
    RemoteDone | RemoteAsked | RemoteWorking | RemoteFailed, Field(discriminator="kind")
]
"""How a remote step ended, matched exhaustively by the flow."""


@dataclass(frozen=True)
class RemoteTurn:
    """One remote step's work as the step hands it to the remote agent (worker side).

    A new turn has a ``message``; an answer has ``question`` and ``answer``; a task followed
    on has ``task_id``.
    """

    context_id: str
    message_id: str
    message: types.Content | None = None
    question: RemoteQuestion | None = None
    answer: RemoteAnswer | None = None
    task_id: str | None = None
    follow_seconds: float = 240.0
    beat: Callable[[], None] = lambda: None
    """Called whenever the remote side was heard from (the step's heartbeat)."""
    on_text: Callable[[str], None] | None = None
    """Takes the reply's text as it streams in, when the turn streams."""


@dataclass(frozen=True)
class RemoteReply:
    """How the remote agent answered a turn, and the content of a completed reply."""

    result: RemoteStepResult
    content: types.Content | None = None


def remote_request(
    question: RemoteQuestion,
    *,
    request_id: str,
    event_id: str,
    invocation_id: str,
    author: str,
    branch: str,
    isolation_scope: str,
    now: float,
) -> tuple[PendingRequest, InputRequest | None, Event]:
    """Our request standing for ``question``, the input request it checks answers against
    (inputs only), and the event recording it.

    A confirmation is bound to the digest of the call as it reached us (its name and
    arguments), so an answer given for another call is refused here as on the far side. A
    question that names no call is an input request of the remote agent's, addressed by
    the isolation scope's call (an agent tool's) or else by the remote task.
    """
    call_id = question.function_call_id or isolation_scope or question.task_id
    tool = question.tool or author
    common: dict[str, Any] = {
        "id": request_id,
        "function_call_id": call_id,
        "tool": tool,
        "args": question.args,
        "agent": author,
        "branch": branch,
        "opened_at": now,
    }
    where: dict[str, Any] = {
        "event_id": event_id,
        "invocation_id": invocation_id,
        "author": author,
        "branch": branch,
        "isolation_scope": isolation_scope,
        "timestamp": now,
    }
    if question.kind == "confirmation":
        confirmation = ToolConfirmation(hint=question.text, payload=question.payload)
        pending = PendingConfirmation(
            kind="confirmation",
            hint=question.text,
            payload=question.payload,
            call_digest=call_digest(tool, question.args),
            **common,
        )
        call = types.FunctionCall(id=call_id, name=tool, args=question.args)
        event = build_confirmation_request_event(
            [call], {call_id: confirmation}, [request_id], **where
        )
        assert event is not None  # one call asked
        return pending, None, event
    schema = question.input_schema
    if question.credential:
        schema = {**(schema or {}), CREDENTIAL_KEY: True}
    request = InputRequest(
        interrupt_id=request_id,
        function_call_id=call_id,
        message=question.text,
        input_schema=schema,
    )
    asked = PendingInput(kind="input", message=question.text, input_schema=schema, **common)
    return asked, request, build_input_request_event([request], **where)
