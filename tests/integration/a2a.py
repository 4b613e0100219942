"""What the A2A tests share: the token, the apps' environment, a2a-sdk's client of a
gateway's agent, and reading tasks and answers."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, Task

from adk_temporal.a2a.wire import AnswerPart, asked_requests

from .. import a2a_apps
from .workers import Deployment

A2A_TOKEN = "t-a2a-0123456789abcdef01"
"""May use both test apps (``far`` and ``near``)."""
SECOND_TOKEN = "t-a2a-second-0123456789"
"""May use the far app: another caller of it."""
TOKENS = f"{A2A_TOKEN} {a2a_apps.FAR_APP},{a2a_apps.NEAR_APP}\n{SECOND_TOKEN} {a2a_apps.FAR_APP}"
"""The gateway's extra tokens (``$ADK_WEB_TOKENS``)."""


def app_env(deployment: Deployment) -> dict[str, str]:
    """The environment of the far app's processes: its payments ledger and its gate."""
    return {
        a2a_apps.RUNS_ENV: str(deployment.data_dir / "runs.txt"),
        a2a_apps.GATE_ENV: str(deployment.data_dir / "gate"),
    }


def payments(deployment: Deployment) -> list[str]:
    """The payments made: one line per run of the ``pay`` tool's body."""
    ledger = deployment.data_dir / "runs.txt"
    return ledger.read_text().splitlines() if ledger.exists() else []


def open_gate(deployment: Deployment) -> None:
    """Let the ``slow`` tool finish."""
    Path(deployment.data_dir / "gate").touch()


@asynccontextmanager
async def a2a_client(
    base: str, agent: str, *, token: str = A2A_TOKEN, streaming: bool = True
) -> AsyncIterator[Client]:
    """a2a-sdk's client of ``agent`` on the gateway at ``base``, from its card."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=120) as http:
        card = await A2ACardResolver(http, f"{base}/a2a/{agent}").get_agent_card()
        config = ClientConfig(httpx_client=http, streaming=streaming)
        client = ClientFactory(config).create(card)
        yield client


def message(
    *parts: Part, text: str = "", task_id: str = "", context_id: str = "", message_id: str = ""
) -> SendMessageRequest:
    """A user message (``text`` as a text part, then ``parts``)."""
    sent = [Part(text=text)] if text else []
    return SendMessageRequest(
        message=Message(
            message_id=message_id or uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[*sent, *parts],
            task_id=task_id,
            context_id=context_id,
        )
    )


async def send(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    """Every response to one message."""
    return [response async for response in client.send_message(request)]


def last_task(responses: list[StreamResponse]) -> Task:
    """The task a non-streaming send answered with."""
    [response] = responses
    assert response.HasField("task"), response
    return response.task


def approval(task: Task, confirmed: bool = True, **changes: Any) -> Part:
    """The answer part approving (or rejecting) the task's one open confirmation, as its
    request part asks; ``changes`` alter the answer (a wrong digest, say)."""
    [request] = asked_requests(task.status.message.parts)
    fields: dict[str, Any] = {
        "request_id": request.request_id,
        "confirmed": confirmed,
        "call_digest": request.call_digest,
        **changes,
    }
    return AnswerPart(**fields).part()
