"""One remote step's conversation with a remote A2A agent, through a2a-sdk's client.

A new turn is sent as a message in the turn's context; an answer is sent on the remote task
that asked, and only while that task still shows the question (a step retried after the
answer went out does not send it again); a task still working is read again. The task is
then followed — over a stream when the card offers one, by reading it otherwise or once the
stream ends — until it ends, asks, or has been followed for the turn's time, and the last
read of it is the reply. The remote side's refusals (a bad answer, an unknown task) are the
turn's failure; not reaching it is an error the step is retried for.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from a2a.client import A2ACardResolver, A2AClientError, Client, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.errors import A2AError
from google.genai import types

from ..flow.remote import (
    RemoteAsked,
    RemoteDone,
    RemoteFailed,
    RemoteQuestion,
    RemoteReply,
    RemoteTurn,
    RemoteWorking,
)
from .errors import RemoteAgentUnavailableError
from .wire import (
    INTERRUPTED,
    TERMINAL,
    AnswerPart,
    a2a_parts,
    asked_requests,
    data_part,
    genai_parts,
    text_of,
)

__all__ = ["RemoteEndpoint", "exchange"]

_CANCEL_SECONDS = 5.0
"""How long a cancelled step tries to cancel its remote task on the way out."""


@dataclass(frozen=True)
class RemoteEndpoint:
    """Where a remote agent is, and how it is called."""

    name: str
    agent_card: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    poll_interval: float = 0.5
    streaming: bool = True


def _card_location(url: str) -> tuple[str, str]:
    """The base URL and card path of a card URL (or of a base URL: the well-known path)."""
    if not urlsplit(url).path.endswith(".json"):
        return url.rstrip("/"), AGENT_CARD_WELL_KNOWN_PATH
    base, _, name = url.rpartition("/")
    path = "/.well-known/" + name if base.endswith("/.well-known") else "/" + name
    return base.removesuffix("/.well-known"), path


@contextlib.asynccontextmanager
async def _connected(agent: RemoteEndpoint) -> AsyncIterator[tuple[Client, bool]]:
    """An a2a-sdk client of ``agent`` from its card, and whether it streams."""
    timeout = httpx.Timeout(agent.timeout)
    async with httpx.AsyncClient(timeout=timeout, headers=dict(agent.headers)) as http:
        base, path = _card_location(agent.agent_card)
        card = await A2ACardResolver(http, base, path).get_agent_card()
        streams = agent.streaming and card.capabilities.streaming
        config = ClientConfig(httpx_client=http, streaming=streams)
        client = ClientFactory(config).create(card)
        try:
            yield client, streams
        finally:
            await client.close()


def _question(task: Task) -> RemoteQuestion:
    """What a paused task asks: its first open request as its data part describes it (an
    adk-temporal server's), else its status text."""
    message = task.status.message
    auth = task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    asked = asked_requests(message.parts)
    if not asked:
        return RemoteQuestion(
            task_id=task.id,
            context_id=task.context_id,
            status_message_id=message.message_id,
            credential=auth,
            text=text_of(message.parts) or "The remote agent asks for input.",
        )
    first = asked[0]
    return RemoteQuestion(
        task_id=task.id,
        context_id=task.context_id,
        status_message_id=message.message_id,
        credential=auth or first.credential,
        kind=first.kind,
        request_id=first.request_id,
        function_call_id=first.function_call_id,
        tool=first.tool,
        args=first.args,
        text=first.question(),
        payload=first.payload,
        call_digest=first.call_digest,
        input_schema=first.input_schema,
    )


def _reply(task: Task) -> RemoteReply:
    """The reply a task read last stands for."""
    state = task.status.state
    if state in INTERRUPTED:
        return RemoteReply(RemoteAsked(kind="asked", question=_question(task)))
    said = [p for a in task.artifacts for p in a.parts] or list(task.status.message.parts)
    if state == TaskState.TASK_STATE_COMPLETED:
        content = types.Content(role="model", parts=genai_parts(said))
        text = "".join(p.text or "" for p in content.parts or [])
        return RemoteReply(RemoteDone(kind="done", text=text, task_id=task.id), content)
    if state in TERMINAL:
        name = TaskState.Name(state).removeprefix("TASK_STATE_").lower()
        error = text_of(task.status.message.parts) or "no reason given"
        return RemoteReply(
            RemoteFailed(kind="failed", error=f"the remote task {name}: {error}", task_id=task.id)
        )
    return RemoteReply(RemoteWorking(kind="working", task_id=task.id))


def _answer_message(turn: RemoteTurn) -> Message:
    """Our answer, on the task that asked: an answer part for an adk-temporal server's
    request, else text (or the value as a data part)."""
    question, answer = turn.question, turn.answer
    assert question is not None and answer is not None
    if question.request_id and answer.kind == "confirmation":
        part = AnswerPart(
            request_id=question.request_id,
            confirmed=answer.confirmed and not answer.expired,
            payload=answer.payload,
            call_digest=question.call_digest,
        ).part()
    elif question.request_id:
        part = AnswerPart(request_id=question.request_id, input=answer.value).part()
    elif isinstance(answer.value, str):
        part = Part(text=answer.value)
    else:
        part = data_part(answer.value)
    return Message(
        message_id=turn.message_id,
        role=Role.ROLE_USER,
        task_id=question.task_id,
        context_id=question.context_id,
        parts=[part],
    )


class _Conversation:
    """One turn's exchange with one remote agent."""

    def __init__(self, agent: RemoteEndpoint, client: Client, streams: bool, turn: RemoteTurn):
        self._agent = agent
        self._client = client
        self._streams = streams
        self._turn = turn
        self._task_id: str | None = None
        self._answered = ""
        """The status message our answer answered: while a task still shows it (what it
        publishes may lag), it has not asked anew."""

    async def run(self) -> RemoteReply:
        turn = self._turn
        if turn.question is not None and turn.answer is not None:
            task = await self._get(turn.question.task_id)
            still_asks = task.status.state in INTERRUPTED and (
                task.status.message.message_id == turn.question.status_message_id
            )
            self._answered = turn.question.status_message_id
            if not still_asks:
                return await self._follow(task)
            return await self._send(_answer_message(turn))
        if turn.task_id is not None:
            return await self._follow(await self._get(turn.task_id))
        if turn.message is None or not turn.message.parts:
            return RemoteReply(RemoteFailed(kind="failed", error="nothing to send to the agent"))
        message = Message(
            message_id=turn.message_id,
            role=Role.ROLE_USER,
            context_id=turn.context_id,
            parts=a2a_parts(turn.message),
        )
        return await self._send(message)

    async def _get(self, task_id: str) -> Task:
        self._task_id = task_id
        task = await self._client.get_task(GetTaskRequest(id=task_id))
        self._turn.beat()
        return task

    async def _send(self, message: Message) -> RemoteReply:
        """Send ``message``, follow its stream while it lasts, then the task."""
        request = SendMessageRequest(message=message)
        request.configuration.return_immediately = not self._streams
        async for response in self._client.send_message(request):
            self._turn.beat()
            if response.HasField("message"):
                content = types.Content(role="model", parts=genai_parts(response.message.parts))
                text = text_of(response.message.parts)
                return RemoteReply(RemoteDone(kind="done", text=text), content)
            if self._take(response) in INTERRUPTED | TERMINAL:
                break
        if self._task_id is None:
            return RemoteReply(RemoteFailed(kind="failed", error="the agent answered nothing"))
        return await self._follow(await self._get(self._task_id))

    def _take(self, response: StreamResponse) -> TaskState | None:
        """The task's state as far as the stream told it (its id noted); streamed text goes
        to ``on_text``."""
        if response.HasField("task"):
            self._task_id = response.task.id
            return response.task.status.state
        if response.HasField("status_update"):
            self._task_id = response.status_update.task_id
            return response.status_update.status.state
        update = response.artifact_update
        self._task_id = update.task_id or self._task_id
        if self._turn.on_text is not None and (update.append or not update.last_chunk):
            self._turn.on_text(text_of(update.artifact.parts))
        return None

    def _settled(self, task: Task) -> bool:
        """Whether ``task`` ended, or asks something other than what we answered."""
        status = task.status
        if status.state in INTERRUPTED:
            return status.message.message_id != self._answered
        return status.state in TERMINAL

    async def _follow(self, task: Task) -> RemoteReply:
        """Read ``task`` until it ends or asks, for the turn's time at most."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._turn.follow_seconds
        while not self._settled(task) and loop.time() < deadline:
            await asyncio.sleep(self._agent.poll_interval)
            task = await self._get(task.id)
        return _reply(task)

    async def cancel(self) -> None:
        """Cancel the remote task this step followed (a cancelled invocation's)."""
        if self._task_id is not None:
            with contextlib.suppress(A2AError, TimeoutError):
                async with asyncio.timeout(_CANCEL_SECONDS):
                    await self._client.cancel_task(CancelTaskRequest(id=self._task_id))


async def exchange(agent: RemoteEndpoint, turn: RemoteTurn) -> RemoteReply:
    """Send ``turn`` to ``agent`` and follow its task.

    Raises:
        RemoteAgentUnavailableError: The agent or its card could not be reached.
    """
    try:
        async with _connected(agent) as (client, streams):
            conversation = _Conversation(agent, client, streams, turn)
            try:
                return await conversation.run()
            except asyncio.CancelledError:
                await conversation.cancel()
                raise
    except A2AClientError as err:
        raise RemoteAgentUnavailableError(
            f"remote agent {agent.name!r} at {agent.agent_card}: {err}"
        ) from err
    except A2AError as err:
        error = f"the remote agent refused: {err.message}"
        return RemoteReply(RemoteFailed(kind="failed", error=error, task_id=turn.task_id or ""))
