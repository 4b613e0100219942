"""``/run`` and ``/run_sse`` on durable runs: a new message starts an invocation on Temporal;
a message of function responses to the requests a waiting run opened answers them.

ADK ends an invocation at a pause and resumes it with the next ``/run`` whose message
answers the pause. A durable run waits instead, so that ``/run`` becomes the run's answer:
each function response to an open request (the ``adk_request_confirmation`` call's id, an
``adk_request_input`` id, a long-running call's id) goes through the gateway's answer path —
the same checks, refusals and record as any other answer — and the reply follows the same
invocation from where it stood: the re-run tool's result, then whatever comes next. Either
way the reply holds the invocation's events up to its next pause or its end, the user's own
events left out, as ADK's runner yields them.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from google.genai import types
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError

from ...budgets import check_budget
from ...client import InvocationHandle
from ...events import Event, EventActions
from ...ids import SessionKey
from ...workflows.messages import Published
from ..errors import ApiError
from ..gateway import Gateway
from .apps import AdkApps
from .wire import RunBody

__all__ = ["ADK_CHANNEL", "AdkRuns", "RunFailedError", "parse_confirmation"]

ADK_CHANNEL = "adk"
"""The channel answers sent through ADK's routes are recorded with."""

_QUERY_SECONDS = 5.0
"""How long one look at a run's open requests waits for a worker before it is asked again."""


class RunFailedError(Exception):
    """The invocation ended without completing (failed, cancelled, timed out)."""


def parse_confirmation(request_id: str, response: dict[str, Any]) -> tuple[bool, Any]:
    """``(confirmed, payload)`` of an answer to a confirmation, as ADK reads one: the
    ``ToolConfirmation`` fields, or the same as a JSON string under ``response``
    (``ToolConfirmation.from_response_dict`` in google-adk 2.13).

    Raises:
        ApiError: 422 when ``confirmed`` is missing or not a JSON boolean.
    """
    if len(response) == 1 and isinstance(response.get("response"), str):
        try:
            response = json.loads(response["response"])
        except json.JSONDecodeError as err:
            raise ApiError(
                422, "invalid_answer", f"the answer to {request_id} is not JSON: {err.msg}"
            ) from None
    confirmed = response.get("confirmed") if isinstance(response, dict) else None
    if not isinstance(confirmed, bool):
        raise ApiError(
            422,
            "invalid_answer",
            f"the answer to {request_id} needs 'confirmed': true or false "
            '(as {"confirmed": true} or {"response": "{\\"confirmed\\": true}"})',
        )
    return confirmed, response.get("payload")


def _answers(message: types.Content | None) -> list[types.FunctionResponse]:
    parts = message.parts or [] if message is not None else []
    return [p.function_response for p in parts if p.function_response is not None]


@dataclass
class AdkRuns:
    """Runs and answers ADK's ``/run`` bodies over the gateway."""

    gateway: Gateway
    apps: AdkApps

    async def open(
        self, body: RunBody, principal: str, groups: Sequence[str] = ()
    ) -> AsyncIterator[Event]:
        """Start the body's invocation (as started by ``principal``), or send its answers
        to the waiting one (as answered by ``principal``, in ``groups``); then the events to
        reply with, up to the invocation's next pause or its end.

        Everything that can refuse the body happens before this returns, so a stream of
        events never starts for a request that fails.

        Raises:
            ApiError: 404 for an unknown app or session, 409 while another invocation of
                the session runs, 422 for a malformed answer (and the gateway's refusals of
                an answer).
        """
        target = self.apps.target(body.app_name)
        ids = SessionKey(target.app, body.user_id, body.session_id)
        stored = await self.gateway.session(ids)
        if stored is None:
            raise ApiError(404, "session_not_found", f"Session not found: {body.session_id}")
        after = stored.events[-1].id if stored.events else None
        handle = self.gateway.handle(ids)
        answers = _answers(body.new_message)
        published = await self._waiting(handle) if answers else None
        if published is not None and {a.id for a in answers} & {r.id for r in published.requests}:
            await self._answer(ids, handle, answers, published, (principal, list(groups)))
        else:
            handle = await self._start(ids, target.root.name, body, principal)
            after = None
        return _follow(handle, after, stream=body.streaming)

    async def _waiting(self, handle: InvocationHandle) -> Published | None:
        """What the session's run published, when it is open (``None`` otherwise)."""
        try:
            description, published = await self.gateway.described(handle)
        except ApiError:
            return None
        if description.status != WorkflowExecutionStatus.RUNNING:
            return None
        return published

    async def _answer(
        self,
        ids: SessionKey,
        handle: InvocationHandle,
        answers: Sequence[types.FunctionResponse],
        published: Published,
        who: tuple[str, list[str]],
    ) -> None:
        """Send each function response as the answer to its request, as ``who`` (principal
        and groups), then wait until the run has taken them."""
        principal, groups = who
        kinds = {r.id: r.kind for r in published.requests}
        for answer in answers:
            request_id = answer.id or ""
            response = dict(answer.response or {})
            if kinds.get(request_id) == "confirmation":
                confirmed, payload = parse_confirmation(request_id, response)
                await self.gateway.confirm(
                    ids,
                    request_id,
                    confirmed,
                    payload,
                    answered_by=principal,
                    groups=groups,
                    channel=ADK_CHANNEL,
                )
            else:
                # An unknown id is refused by the gateway, naming the open ones.
                await self.gateway.resume(
                    ids,
                    request_id,
                    response,
                    answered_by=principal,
                    groups=groups,
                    channel=ADK_CHANNEL,
                )
        await _taken(handle, {a.id or "" for a in answers})

    async def _start(
        self, ids: SessionKey, agent: str, body: RunBody, principal: str
    ) -> InvocationHandle:
        """Start an invocation of ``agent`` with the body's message (its state delta stored
        first, as ADK stores it with the message); a busy session takes the message by the
        body's ``double_texting`` (ours, not ADK's), and the reply follows its invocation
        from the queue. A state delta is refused while the session is busy: it would
        change the running invocation's state. It is started by ``principal``."""
        if body.state_delta:
            if await self.gateway.adk.session_busy(ids):
                raise ApiError(409, "session_busy", f"session {ids} has an invocation running")
            await apply_state_delta(self.gateway, ids, body.state_delta)
        return await self.gateway.adk.start(
            *ids,
            agent,
            body.new_message,
            stream=body.streaming,
            double_texting=body.double_texting,
            started_by=principal,
        )


async def apply_state_delta(gateway: Gateway, ids: SessionKey, delta: dict[str, Any]) -> None:
    """Store ``delta`` as a user event of its own, as ADK's ``PATCH`` of a session does (an
    invocation id ``p-…`` that no run has).

    Raises:
        ApiError: 503 without the workers' session store.
        BudgetExceededError: The delta is over the state budget.
    """
    if gateway.sessions is None:
        raise ApiError(503, "no_session_store", "this gateway has no session store")
    budgets = gateway.adk.budgets
    check_budget(delta, "the state delta", budgets.state_delta_bytes, "state_delta_bytes")
    event = Event(
        id=str(uuid.uuid4()),
        invocation_id=f"p-{uuid.uuid4()}",
        author="user",
        actions=EventActions(state_delta=delta),
    )
    await gateway.sessions.append_events(ids, [event])


async def _taken(handle: InvocationHandle, request_ids: set[str]) -> None:
    """Return once none of ``request_ids`` is open any more (or the run closed): an answer
    Temporal keeps as a signal is taken only when a worker picks the run up."""
    while True:
        try:
            async with asyncio.timeout(_QUERY_SECONDS):
                if not request_ids & {r.id for r in await handle.pending()}:
                    return
        except (RPCError, TimeoutError):
            description = await handle.describe()
            if description.status != WorkflowExecutionStatus.RUNNING:
                return
        await asyncio.sleep(0.1)


async def _follow(
    handle: InvocationHandle, after: str | None, *, stream: bool
) -> AsyncIterator[Event]:
    """The invocation's events behind ``after`` (its pieces too with ``stream``), the user's
    left out, then :class:`RunFailedError` if it ended without completing."""
    events = handle.stream(after=after) if stream else handle.events(after=after)
    async for event in events:
        if event.author != "user":
            yield event
    await _require_completed(handle)


async def _require_completed(handle: InvocationHandle) -> None:
    """Raise :class:`RunFailedError` when the run closed without completing."""
    description = await handle.describe()
    if description.status == WorkflowExecutionStatus.RUNNING:
        return  # paused for an answer
    try:
        result = await handle.result()
    except Exception as err:  # Temporal's failure of the run (terminated, timed out…)
        raise RunFailedError(f"the invocation did not complete: {err}") from err
    if result.status != "completed":
        raise RunFailedError(f"the invocation {result.status}: {result.error or 'no reason'}")
