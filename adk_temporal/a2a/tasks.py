"""A2A tasks over durable invocations: a task is one invocation, its context the session.

A task id names the invocation and its session (``{invocation_id}.{session_id}``), so any
gateway process finds the run from the id alone. A task's state is read each time from what
Temporal serves without a worker (the run's description and memo, the invocation id in its
start event) and from the session store (the invocation's events, the full requests): a
gateway keeps nothing of a task in memory, so a restarted or another gateway answers the
same. The invocation id of a task started by a message is derived from the message id, so a
message sent twice starts one task.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from google.genai import types
from temporalio.client import WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from ..client import AdkClient
from ..errors import InvocationErrorCode
from ..events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from ..flow.messages import RequestSummary
from ..flow.remote import CREDENTIAL_KEY
from ..ids import SessionKey, workflow_id_for
from ..sessions import SessionService
from ..visibility import run_status
from ..workflows.messages import InvocationInput, Published
from .wire import INTERRUPTED, TERMINAL, AskedRequest, a2a_parts, plain

__all__ = [
    "TaskReader",
    "TaskRef",
    "TaskView",
    "invocation_for",
]

_INVOCATION = re.compile(r"(e-[0-9a-f]{32})\.(.+)", re.DOTALL)
_NAMESPACE = uuid.UUID("0d6f1f0e-2a8e-4d67-9a6b-3b7c3f1a2a42")
_RUNS_KEPT = 1024
"""How many runs' invocation ids a reader remembers (facts of a run never change)."""


def invocation_for(key: SessionKey, message_id: str) -> str:
    """The invocation a message starts: the same for the same message in the same session."""
    name = "\n".join([*key, message_id])
    return f"e-{uuid.uuid5(_NAMESPACE, name).hex}"


@dataclass(frozen=True)
class TaskRef:
    """A task: the invocation and the session it names."""

    key: SessionKey
    invocation_id: str

    @property
    def task_id(self) -> str:
        """The A2A task id."""
        return f"{self.invocation_id}.{self.key.session_id}"

    @property
    def context_id(self) -> str:
        """The A2A context id: the session id."""
        return self.key.session_id

    @classmethod
    def parse(cls, task_id: str, app_name: str, user_id: str) -> TaskRef | None:
        """The task ``task_id`` names for this caller; ``None`` when it names none."""
        found = _INVOCATION.fullmatch(task_id)
        if found is None:
            return None
        return cls(SessionKey(app_name, user_id, found.group(2)), found.group(1))


@dataclass
class TaskView:
    """A task as read now: its state, its invocation's events, what it asks."""

    ref: TaskRef
    state: TaskState
    events: list[Event] = field(default_factory=list)
    requests: list[AskedRequest] = field(default_factory=list)
    error: str | None = None
    description: WorkflowExecutionDescription | None = None
    """The run's description, when the run is this task's invocation."""

    def without(self, answered: frozenset[str]) -> TaskView:
        """The task as it stands once the ``answered`` requests are taken: what the run
        publishes may still list them for a moment after a worker took their answers."""
        if not answered or not self.interrupted:
            return self
        left = [r for r in self.requests if r.request_id not in answered]
        if left:
            return dataclasses.replace(self, requests=left)
        return dataclasses.replace(self, state=TaskState.TASK_STATE_WORKING, requests=[])

    @property
    def interrupted(self) -> bool:
        """Waiting for its client's next message (input or credentials)."""
        return self.state in INTERRUPTED

    @property
    def terminal(self) -> bool:
        """Ended: completed, failed, cancelled."""
        return self.state in TERMINAL

    @property
    def last_event_id(self) -> str | None:
        """The invocation's last stored event, where following it goes on from."""
        return self.events[-1].id if self.events else None

    def status_message(self) -> Message | None:
        """What the status says: the open requests (text and data parts), or the error."""
        if self.interrupted and self.requests:
            parts = [Part(text="\n".join(r.question() for r in self.requests if r.question()))]
            parts += [r.part() for r in self.requests]
            return self._message(f"ask-{self.requests[0].request_id}", Role.ROLE_AGENT, parts)
        if self.state == TaskState.TASK_STATE_FAILED and self.error:
            error = [Part(text=self.error)]
            return self._message(f"error-{self.ref.invocation_id}", Role.ROLE_AGENT, error)
        return None

    def status(self) -> TaskStatus:
        """The task's status: state and message."""
        status = TaskStatus(state=self.state)
        message = self.status_message()
        if message is not None:
            status.message.CopyFrom(message)
        return status

    def artifacts(self) -> list[Artifact]:
        """The reply of a completed task: the conversation's last agent text (an agent's
        called as a tool is its caller's business)."""
        if self.state != TaskState.TASK_STATE_COMPLETED:
            return []
        for event in reversed(self.events):
            own = not event.isolation_scope
            if own and event.author != "user" and event.text() and not event.partial:
                parts = [Part(text=event.text())]
                return [Artifact(artifact_id=f"reply-{event.id}", name="reply", parts=parts)]
        return []

    def history(self, length: int | None = None) -> list[Message]:
        """The invocation's messages, oldest first; the last ``length`` when given."""
        messages = [m for m in (self.message_of(e) for e in self.events) if m is not None]
        if length is None:
            return messages
        return messages[len(messages) - length :] if length > 0 else []

    def message_of(self, event: Event) -> Message | None:
        """One stored event as a message of this task; ``None`` when it has no content."""
        parts = a2a_parts(event.content)
        if event.partial or not parts:
            return None
        role = Role.ROLE_USER if event.author == "user" else Role.ROLE_AGENT
        return self._message(event.id, role, parts)

    def task(self, history_length: int | None = None) -> Task:
        """The A2A task."""
        return Task(
            id=self.ref.task_id,
            context_id=self.ref.context_id,
            status=self.status(),
            history=self.history(history_length),
            artifacts=self.artifacts(),
        )

    def _message(self, message_id: str, role: Role, parts: Sequence[Part]) -> Message:
        return Message(
            message_id=message_id,
            role=role,
            parts=list(parts),
            task_id=self.ref.task_id,
            context_id=self.ref.context_id,
        )


def _ended(events: Sequence[Event]) -> tuple[TaskState, str | None]:
    """How an invocation that is not the session's latest run ended, from its events."""
    for event in reversed(events):
        if event.error_code == InvocationErrorCode.CANCELLED.value:
            return TaskState.TASK_STATE_CANCELED, None
        if event.error_code or event.error_message:
            return TaskState.TASK_STATE_FAILED, event.error_message or event.error_code
        if event.author != "user":
            break
    return TaskState.TASK_STATE_COMPLETED, None


def _closed(status: str, events: Sequence[Event]) -> tuple[TaskState, str | None]:
    """How a closed run ended, from its ``AdkStatus`` (or Temporal's own status)."""
    if status == "completed":
        return TaskState.TASK_STATE_COMPLETED, None
    if status in ("cancelled", "canceled"):
        return TaskState.TASK_STATE_CANCELED, None
    _, error = _ended(events)
    return TaskState.TASK_STATE_FAILED, error or f"the invocation is {status}"


def _asked(summary: RequestSummary, calls: dict[str, types.FunctionCall]) -> AskedRequest:
    """An open request whole, from the call that recorded it in the session (the summary
    the run published when the call is not there)."""
    call = calls.get(summary.id)
    args: dict[str, Any] = plain(dict(call.args or {})) if call is not None else {}
    common: dict[str, Any] = {"request_id": summary.id, "agent": summary.agent}
    common["expires_at"] = summary.expires_at
    if summary.kind == "confirmation" and call and call.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
        original = args.get("originalFunctionCall") or {}
        asked = args.get("toolConfirmation") or {}
        return AskedRequest(
            kind="confirmation",
            function_call_id=str(original.get("id") or ""),
            tool=str(original.get("name") or summary.tool),
            args=original.get("args") or {},
            hint=str(asked.get("hint") or summary.hint),
            payload=asked.get("payload"),
            call_digest=str(args.get("callDigest") or ""),
            **common,
        )
    if summary.kind == "input" and call and call.name == REQUEST_INPUT_FUNCTION_NAME:
        schema = args.get("schema")
        return AskedRequest(
            kind="input",
            function_call_id=str(args.get("functionCallId") or ""),
            tool=summary.tool,
            args=summary.args or {},
            message=str(args.get("message") or summary.message),
            input_schema=schema,
            credential=bool((schema or {}).get(CREDENTIAL_KEY)),
            **common,
        )
    return AskedRequest(
        kind=summary.kind,
        function_call_id=summary.id if summary.long_running else "",
        tool=summary.tool,
        args=args if summary.long_running else summary.args or {},
        hint=summary.hint,
        message=summary.message,
        input_schema={"type": "object"} if summary.long_running else None,
        **common,
    )


class TaskReader:
    """Reads tasks from Temporal and the session store.

    Args:
        adk: A client of the runs' namespace (its converter reads their start events).
        sessions: The workers' session store.
    """

    def __init__(self, adk: AdkClient, sessions: SessionService) -> None:
        self._adk = adk
        self._sessions = sessions
        self._runs: OrderedDict[str, str | None] = OrderedDict()

    async def read(self, ref: TaskRef) -> TaskView | None:
        """The task as it stands; ``None`` when no such task exists (for this caller)."""
        try:
            description = await self._adk.handle(workflow_id_for(ref.key)).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return None
        events = await self._events(ref)
        if await self._invocation_of(description) != ref.invocation_id:
            if not events:
                return None
            state, error = _ended(events)
            return TaskView(ref, state, events, error=error)
        if description.status != WorkflowExecutionStatus.RUNNING:
            state, error = _closed(run_status(description), events)
            return TaskView(ref, state, events, error=error, description=description)
        published = Published.from_memo(await description.memo())
        calls = {c.id or "": c for e in events for c in e.function_calls()}
        requests = [_asked(r, calls) for r in published.requests]
        state = TaskState.TASK_STATE_WORKING
        if requests:
            credential = any(r.credential for r in requests)
            state = (
                TaskState.TASK_STATE_AUTH_REQUIRED
                if credential
                else TaskState.TASK_STATE_INPUT_REQUIRED
            )
        return TaskView(ref, state, events, requests, description=description)

    async def _events(self, ref: TaskRef) -> list[Event]:
        try:
            session = await self._sessions.get(ref.key)
        except LookupError:
            return []
        return [e for e in session.events if e.invocation_id == ref.invocation_id]

    async def _invocation_of(self, description: WorkflowExecutionDescription) -> str | None:
        """The invocation a run runs, from its start event (a continued run's carries it)."""
        run_id = description.run_id
        if run_id in self._runs:
            return self._runs[run_id]
        handle = self._adk.client.get_workflow_handle(description.id, run_id=run_id)
        found: str | None = None
        async for event in handle.fetch_history_events(page_size=1):
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            converter = self._adk.client.data_converter
            [inp] = await converter.decode(payloads, [InvocationInput])
            found = inp.carry.invocation_id if inp.carry is not None else inp.invocation_id
            break
        self._runs[run_id] = found
        while len(self._runs) > _RUNS_KEPT:
            self._runs.popitem(last=False)
        return found
