"""The remote step: send a remote agent its turn (or our answer to its question), follow its
task, store its reply.

The step's pending events (the user's message, the event recording an answer) are stored
before the remote agent is asked, so followers see them first. A completed reply is stored
as the remote agent's event under the id the workflow decided, a failure as its error
event: a retry after that write finds it and answers from it without asking again. A
question or a task still working stores nothing; a retry asks the remote task again, and
the remote agent sends an answer only while its task still shows the question.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence

from google.genai import types

from ..agents import RemoteAgent
from ..budgets import Budgets, json_size
from ..errors import (
    BudgetExceededError,
    InvocationErrorCode,
    UnencodableValueError,
    UnknownAgentError,
)
from ..events import Event, EventActions
from ..flow.remote import (
    RemoteAsked,
    RemoteDone,
    RemoteFailed,
    RemoteReply,
    RemoteStepInput,
    RemoteStepResult,
    RemoteTurn,
)
from ..history import USER_AUTHOR, is_branch_visible
from .forwarding import PartialForwarder
from .heartbeat import Heartbeat, heartbeating
from .ref import SessionRef
from .services import StepServices
from .writes import append_to_session, stored_form

__all__ = ["context_id_of", "remote_step", "turn_message"]

_CONTEXT_NAMESPACE = uuid.UUID("6f1d3c1e-52b4-4d4c-9a57-0a2a5e1c7a45")
"""Names the remote contexts this runtime opens (``uuid5`` below)."""


def context_id_of(ref: SessionRef) -> str:
    """The remote context of ``ref``'s agent in this session, branch and scope: the same
    for every turn, so the far side keeps the conversation; another session, branch or
    agent tool call has its own (a far session takes one task at a time)."""
    name = f"{ref.workflow_id}\n{ref.agent_name}\n{ref.branch}\n{ref.isolation_scope}"
    return f"c-{uuid.uuid5(_CONTEXT_NAMESPACE, name).hex}"


def _visible(event: Event, ref: SessionRef) -> bool:
    return event.isolation_scope == ref.isolation_scope and is_branch_visible(
        ref.branch, event.branch
    )


def turn_message(events: Sequence[Event], ref: SessionRef) -> types.Content | None:
    """What a new turn sends: the text said since the remote agent's last reply in this
    branch and scope — the user's as it is, another agent's as ``[name] said: …`` (the far
    side keeps the conversation before it); ``None`` when nothing was said."""
    parts: list[types.Part] = []
    for event in reversed(events):
        if not _visible(event, ref) or event.partial:
            continue
        if event.author == ref.agent_name:
            break
        text = event.text()
        if not text:
            continue
        said = text if event.author == USER_AUTHOR else f"[{event.author}] said: {text}"
        parts.append(types.Part(text=said))
    return types.Content(role="user", parts=parts[::-1]) if parts else None


def _reply_event(inp: RemoteStepInput, ref: SessionRef, reply: RemoteReply) -> Event | None:
    """The event storing a completed reply or a failure; ``None`` for a question or a task
    still working."""
    event = Event(
        id=inp.event_id,
        invocation_id=ref.invocation_id,
        author=ref.agent_name,
        branch=ref.branch,
        isolation_scope=ref.isolation_scope,
        timestamp=inp.timestamp,
        actions=EventActions(),
    )
    result = reply.result
    if isinstance(result, RemoteDone):
        event.content = reply.content or types.Content(role="model", parts=[])
        return event
    if isinstance(result, RemoteFailed):
        event.error_code = InvocationErrorCode.REMOTE_AGENT_FAILED.value
        event.error_message = result.error
        return event
    return None


def _check_result(result: RemoteStepResult, budgets: Budgets) -> None:
    """Refuse a remote answer that cannot cross history, before anything is stored: a
    question over ``request_bytes``, a reply over ``model_reply_bytes`` (as a model's).

    Raises:
        BudgetExceededError: The answer is over its budget, or not strict JSON.
    """
    asked = isinstance(result, RemoteAsked)
    what = "the remote agent's question" if asked else "the remote agent's reply"
    name, limit = (
        ("request_bytes", budgets.request_bytes)
        if asked
        else ("model_reply_bytes", budgets.model_reply_bytes)
    )
    try:
        size = json_size(result.model_dump(mode="python"), what)
    except UnencodableValueError as err:
        raise BudgetExceededError(f"{what} cannot cross history: {err}") from None
    if size > limit:
        raise BudgetExceededError(
            f"{what} is {size} bytes, over the {name} budget of {limit} bytes; raise "
            f"Budgets.{name} (history payloads stop at 2 MB)"
        )


def _from_stored(event: Event) -> RemoteStepResult:
    """The result a stored reply (or failure) stands for: a retry's answer."""
    if event.error_code == InvocationErrorCode.REMOTE_AGENT_FAILED.value:
        return RemoteFailed(kind="failed", error=event.error_message or "")
    return RemoteDone(kind="done", text=event.text())


@contextlib.asynccontextmanager
async def _forwarding(
    services: StepServices, inp: RemoteStepInput, ref: SessionRef, attempt: int
) -> AsyncIterator[PartialForwarder | None]:
    """A forwarder of the reply's streamed text when the invocation streams."""
    if not inp.stream:
        yield None
        return
    template = Event(
        id=inp.event_id,
        invocation_id=ref.invocation_id,
        author=ref.agent_name,
        branch=ref.branch,
        isolation_scope=ref.isolation_scope,
        timestamp=inp.timestamp,
    )
    async with PartialForwarder(services.sessions, ref.key, template, attempt) as forwarder:
        yield forwarder


async def remote_step(
    services: StepServices,
    inp: RemoteStepInput,
    ref: SessionRef,
    *,
    attempt: int = 1,
    heartbeat: Heartbeat | None = None,
) -> RemoteStepResult:
    """Store the pending events, send the remote agent its turn, store what it answered.

    Args:
        services: What the step runs against.
        inp: The step.
        ref: The step's session, remote agent and invocation.
        attempt: Which attempt of the step this is; marks the pieces it streams.
        heartbeat: Called while the remote task is followed, when the engine watches.

    Raises:
        UnknownAgentError: The agent is not a remote agent on this worker.
    """
    agent = services.agents[ref.agent_name]
    if not isinstance(agent, RemoteAgent):
        raise UnknownAgentError(f"agent {ref.agent_name!r} is not a remote agent on this worker")
    loaded = await services.load_session(ref)
    new, unstage = await stored_form(services.sessions, ref, inp.pending_events, loaded.stored.ids)
    stored = next((e for e in loaded.session.events if e.id == inp.event_id), None)
    if stored is not None:
        return _from_stored(stored)
    if new or unstage:
        await append_to_session(services, ref, new, unstage)
    fresh = inp.question is None and inp.task_id is None
    async with _forwarding(services, inp, ref, attempt) as forwarder, heartbeating(heartbeat):
        turn = RemoteTurn(
            context_id=context_id_of(ref),
            message_id=inp.message_id,
            message=turn_message([*loaded.session.events, *new], ref) if fresh else None,
            question=inp.question,
            answer=inp.answer,
            task_id=inp.task_id,
            follow_seconds=inp.follow_seconds,
            beat=heartbeat.beat if heartbeat is not None else lambda: None,
            on_text=forwarder.offer if forwarder is not None else None,
        )
        reply = await agent.exchange(turn)
    _check_result(reply.result, inp.budgets)
    event = _reply_event(inp, ref, reply)
    if event is not None:
        await append_to_session(services, ref, [event])
    return reply.result
