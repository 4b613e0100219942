"""The A2A request handler over durable invocations: a2a-sdk's ``RequestHandler`` whose every
method reads and acts on Temporal and the session store, never on a gateway's memory.

``SendMessage`` without a task starts an invocation (the task), with a task answers what the
task asks through the answer desk (:class:`~adk_temporal.answers.AnswerDesk`, channel
``a2a``, answered by the authenticated caller); a refused answer is A2A's invalid-params
error carrying the desk's reason, and changes nothing. ``SendStreamingMessage`` and
``SubscribeToTask`` follow the invocation's events (its streamed pieces too) until it ends
or asks; ``CancelTask`` is Temporal's cancellation of the run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.events import Event as A2aEvent
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    AgentCard,
    Artifact,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.genai import types

from ..errors import AdkRequestError, SessionBusyError
from ..events import Event
from ..ids import SessionKey, check_session_ids, workflow_id_for
from ..web.errors import ApiError
from ..web.gateway import Gateway
from .answers import desk_answers
from .tasks import TaskReader, TaskRef, TaskView, invocation_for
from .wire import genai_parts

__all__ = ["CHANNEL", "Caller", "DurableRequestHandler"]

CHANNEL = "a2a"
"""The channel answers sent over A2A are recorded with."""

_POLL_SECONDS = 0.2
"""How often a task is read again while an answer settles."""


@dataclass(frozen=True)
class Caller:
    """Who calls and what: the authenticated principal, the app and agent of the endpoint,
    and the user id the principal's tasks live under."""

    principal: str
    app: str
    agent: str
    user_id: str


def _caller(context: ServerCallContext) -> Caller:
    caller = context.state.get("caller")
    assert isinstance(caller, Caller), "the A2A routes authenticate every call first"
    return caller


def _history_length(request: GetTaskRequest | SendMessageRequest) -> int | None:
    """The history length asked for, ``None`` for all of it."""
    if isinstance(request, GetTaskRequest):
        return request.history_length if request.HasField("history_length") else None
    config = request.configuration
    return config.history_length if config.HasField("history_length") else None


def _invalid(err: Exception) -> InvalidParamsError:
    """A refusal of the gateway or the runtime as A2A's invalid-params error."""
    if isinstance(err, ApiError):
        data: dict[str, Any] = {"type": err.type}
        if err.refusal is not None:
            data["reason"] = err.refusal.reason
            if err.refusal.earlier is not None:
                data["earlier"] = err.refusal.earlier.describe()
        return InvalidParamsError(str(err), data=data)
    return InvalidParamsError(str(err), data={"type": type(err).__name__})


def _updates(view: TaskView, event: Event) -> list[A2aEvent]:
    """One followed event as the stream's updates: a reply of the conversation's own (not
    of an agent called as a tool) as the ``reply`` artifact, its text as it streams and then
    whole; other agent events as working status."""
    ref = view.ref
    ids: dict[str, Any] = {"task_id": ref.task_id, "context_id": ref.context_id}
    if event.author == "user":
        return []
    text = event.text()
    own = not event.isolation_scope
    if own and (event.partial or (text and not event.function_calls())):
        artifact = Artifact(artifact_id=f"reply-{event.id}", name="reply", parts=[Part(text=text)])
        last = not event.partial
        return [TaskArtifactUpdateEvent(artifact=artifact, append=not last, last_chunk=last, **ids)]
    message = view.message_of(event)
    if message is None:
        return []
    status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=message)
    return [TaskStatusUpdateEvent(status=status, **ids)]


class DurableRequestHandler(RequestHandler):
    """a2a-sdk's request handler, every task an invocation of the gateway's workers.

    Args:
        gateway: The gateway: its client, session store, answer desk and answer wait.
    """

    def __init__(self, gateway: Gateway) -> None:
        if gateway.sessions is None:
            raise ValueError("serving A2A needs the workers' session store in the gateway")
        self._gateway = gateway
        self._reader = TaskReader(gateway.adk, gateway.sessions)

    # ---------------------------------------------------------------- tasks

    async def _read(self, task_id: str, caller: Caller) -> TaskView:
        ref = TaskRef.parse(task_id, caller.app, caller.user_id)
        view = await self._reader.read(ref) if ref is not None else None
        if view is None:
            raise TaskNotFoundError(f"no task {task_id!r} here")
        return view

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        """``GetTask``: the task as it stands, read from Temporal and the session store."""
        view = await self._read(params.id, _caller(context))
        return view.task(_history_length(params))

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        """Not served: a task is found by its id."""
        raise UnsupportedOperationError("ListTasks is not served; get a task by its id")

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        """``CancelTask``: cancel the invocation (Temporal's cancellation) and return the task
        once its run closed (or, without a worker, as it stands after the gateway's answer
        wait: the cancellation applies when a worker picks the run up)."""
        view = await self._read(params.id, _caller(context))
        if view.terminal or view.description is None:
            raise TaskNotCancelableError(f"task {params.id!r} has ended: it cannot be cancelled")
        await self._gateway.adk.handle(workflow_id_for(view.ref.key)).cancel()
        try:
            async with asyncio.timeout(self._gateway.answer_wait):
                while not view.terminal:
                    await asyncio.sleep(_POLL_SECONDS)
                    view = await self._read(params.id, _caller(context))
        except TimeoutError:
            pass
        return view.task()

    # -------------------------------------------------------------- messages

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        """``SendMessage``: start the task or answer it; return it once it ends or asks
        (at once with ``return_immediately``)."""
        caller = _caller(context)
        ref, answered = await self._accept(params.message, caller)
        if not params.configuration.return_immediately:
            return (await self._settled(ref, answered)).task(_history_length(params))
        view = await self._reader.read(ref)
        assert view is not None  # started or answered just now
        return view.without(answered).task(_history_length(params))

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2aEvent]:
        """``SendStreamingMessage``: start the task or answer it, then the task, its updates
        as the invocation goes, and its last status (it ended or asks again)."""
        caller = _caller(context)
        ref, answered = await self._accept(params.message, caller)
        view = await self._reader.read(ref)
        assert view is not None
        view = view.without(answered)
        yield view.task(_history_length(params))
        async for update in self._follow(view, answered):
            yield update

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2aEvent]:
        """``SubscribeToTask``: the task as it stands, then its updates until it ends or
        asks; from any gateway, after any restart."""
        view = await self._read(params.id, _caller(context))
        if view.terminal:
            raise UnsupportedOperationError(f"task {params.id!r} has ended: nothing to follow")
        yield view.task()
        if not view.interrupted:
            async for update in self._follow(view, frozenset()):
                yield update

    async def _accept(self, message: Message, caller: Caller) -> tuple[TaskRef, frozenset[str]]:
        """Start the message's task, or answer the task it names; the task, and the ids of
        the requests answered."""
        if not message.task_id:
            return await self._start(message, caller), frozenset()
        view = await self._read(message.task_id, caller)
        if message.context_id and message.context_id != view.ref.context_id:
            raise InvalidParamsError(
                f"context {message.context_id!r} is not the context of task {message.task_id!r}"
            )
        if not view.interrupted:
            state = TaskState.Name(view.state).removeprefix("TASK_STATE_").lower()
            raise UnsupportedOperationError(
                f"task {message.task_id!r} is {state}: it takes a message only while it asks"
            )
        answered = await self._answer(view, message, caller)
        return view.ref, answered

    async def _start(self, message: Message, caller: Caller) -> TaskRef:
        """Start the invocation a new message asks for (one per message id: a message sent
        again finds its task)."""
        key = SessionKey(caller.app, caller.user_id, message.context_id or uuid.uuid4().hex)
        try:
            check_session_ids(key)
        except AdkRequestError as err:
            raise _invalid(err) from None
        ref = TaskRef(key, invocation_for(key, message.message_id))
        if await self._reader.read(ref) is not None:
            return ref
        parts = genai_parts(message.parts)
        if not parts:
            raise InvalidParamsError("the message has no text, data or file part to send")
        content = types.Content(role="user", parts=parts)
        try:
            await self._gateway.adk.start(
                *key, caller.agent, content, invocation_id=ref.invocation_id, stream=True
            )
        except SessionBusyError:
            raise InvalidParamsError(
                f"context {key.session_id!r} has a task that runs or asks: answer or cancel "
                "it, or send the message in another context"
            ) from None
        except AdkRequestError as err:
            raise _invalid(err) from None
        return ref

    async def _answer(self, view: TaskView, message: Message, caller: Caller) -> frozenset[str]:
        """Send the message's answers through the answer desk, all checked first."""
        try:
            answers = desk_answers(view.requests, message.parts)
        except ValueError as err:
            raise InvalidParamsError(str(err)) from None
        for request, answer in answers:
            try:
                if request.kind == "confirmation":
                    await self._gateway.confirm(
                        view.ref.key,
                        request.request_id,
                        bool(answer.confirmed),
                        answer.payload,
                        answer.call_digest,
                        answered_by=caller.principal,
                        channel=CHANNEL,
                    )
                else:
                    await self._gateway.resume(
                        view.ref.key,
                        request.request_id,
                        answer.input,
                        answered_by=caller.principal,
                        channel=CHANNEL,
                    )
            except (ApiError, AdkRequestError) as err:
                raise _invalid(err) from None
        return frozenset(r.request_id for r, _ in answers)

    async def _settled(self, ref: TaskRef, answered: frozenset[str]) -> TaskView:
        """The task once it ended or asks anything but ``answered``: the run's events are
        followed while it runs, then it is read until what it published caught up."""
        view = await self._reader.read(ref)
        assert view is not None
        async for _ in self._gateway.adk.handle(workflow_id_for(ref.key)).events(
            after=view.last_event_id
        ):
            pass
        while True:
            view = await self._reader.read(ref)
            assert view is not None
            asked = {r.request_id for r in view.requests}
            if view.terminal or (view.interrupted and not asked & answered):
                return view
            await asyncio.sleep(_POLL_SECONDS)

    async def _follow(self, view: TaskView, answered: frozenset[str]) -> AsyncGenerator[A2aEvent]:
        """The task's updates from ``view`` on, then its status once it ended or asks."""
        handle = self._gateway.adk.handle(workflow_id_for(view.ref.key))
        async for event in handle.stream(after=view.last_event_id):
            if event.invocation_id == view.ref.invocation_id:
                for update in _updates(view, event):
                    yield update
        settled = await self._settled(view.ref, answered)
        yield TaskStatusUpdateEvent(
            task_id=view.ref.task_id, context_id=view.ref.context_id, status=settled.status()
        )

    # ------------------------------------------------------ push, extended card

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not served: the app's signed webhooks notify pauses and endings."""
        raise PushNotificationNotSupportedError()

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not served (see :meth:`on_create_task_push_notification_config`)."""
        raise PushNotificationNotSupportedError()

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """Not served (see :meth:`on_create_task_push_notification_config`)."""
        raise PushNotificationNotSupportedError()

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Not served (see :meth:`on_create_task_push_notification_config`)."""
        raise PushNotificationNotSupportedError()

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """Not served: the public card is the whole card."""
        raise ExtendedAgentCardNotConfiguredError()
