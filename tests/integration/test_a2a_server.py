"""a2a-sdk's own client against ``adk-temporal web --a2a`` and real worker processes
(SPEC §1.14, issue 45): each A2A task is one durable invocation, read from Temporal and the
session store by whichever gateway process is asked."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.types import GetTaskRequest, TaskState

from adk_temporal.a2a.wire import asked_requests
from adk_temporal.devserver import DevServer

from .a2a import TOKENS, a2a_client, app_env, last_task, message, send
from .gateway import Gateway, gateway_process
from .workers import Deployment, worker_process

FAR = "tests.a2a_apps:far_app"


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Deployment:
    """A fresh task queue and data directory; the gateways take the A2A token."""
    monkeypatch.setenv("ADK_WEB_TOKENS", TOKENS)
    for name, value in app_env(Deployment("", "", tmp_path / "data")).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "data").mkdir()
    return Deployment(dev_server.address, f"a2a-{uuid.uuid4().hex[:8]}", tmp_path / "data")


@pytest.fixture
def gateway(deployment: Deployment, tmp_path: Path) -> Iterator[Gateway]:
    """The gateway serving the far app over A2A."""
    with gateway_process(deployment, tmp_path, app=FAR, args=["--a2a"]) as served:
        yield served


async def test_send_completes_a_task_that_get_reads_back(
    deployment: Deployment, gateway: Gateway
) -> None:
    """A message without a task starts one invocation and, sent without streaming, returns
    the completed task with the reply as its artifact; GetTask reads the same task back,
    its context the session."""
    with worker_process(deployment, app=FAR):
        async with a2a_client(gateway.base, "payments", streaming=False) as client:
            task = last_task(await send(client, message(text="weather in Oslo")))
            got = await client.get_task(GetTaskRequest(id=task.id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["It is sunny in Oslo."]
    assert got.id == task.id and got.context_id == task.context_id
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert [m.parts[0].text for m in got.history if m.parts[0].text][0] == "weather in Oslo"
    assert asked_requests(got.status.message.parts) == []
