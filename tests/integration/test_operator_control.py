"""Operator control on the real dev server: no worker, deadlines, cancellation, list/show.

An approval often arrives while no worker runs; a run must not wait for ever; an operator
must be able to stop one. Each case checks what an operator sees from the CLI and what the
session holds afterwards.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from datetime import timedelta
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.context import ToolContext
from adk_temporal.devserver import DevServer
from adk_temporal.errors import InvocationClosedError, UnknownRequestIdError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import (
    LlmRequest,
    LlmResponse,
    ModelRegistry,
    ScriptedModel,
    ScriptedReply,
)
from adk_temporal.visibility import run_status
from adk_temporal.workflows.messages import ADK_STATUS

from ..commands import run_cli
from .conftest import Runtime, WorkerFactory
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

APP = "ops"
USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _cli(server: DevServer, *args: str) -> subprocess.CompletedProcess[str]:
    return await run_cli(server.address, *args)


async def _events(rt: Runtime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


async def _durably_awaiting(rt: Runtime, workflow_id: str) -> None:
    """Until the run's own state in Temporal (not a worker's answer) says it waits."""
    handle = rt.client.get_workflow_handle(workflow_id)
    async with asyncio.timeout(60):
        while (await handle.describe()).typed_search_attributes.get(
            ADK_STATUS
        ) != "awaiting_confirmation":
            await asyncio.sleep(0.1)


REQUEST = "adk_request_confirmation"


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.function_responses() if r.name == name
    ]


async def buy(item: str, ctx: ToolContext) -> dict[str, Any]:
    """Buy an item once approved.

    Args:
        item: What to buy.
    """
    decision = ctx.tool_confirmation
    if decision is None:
        ctx.request_confirmation(f"Buy {item}?", {"item": item})
        return {"status": "waiting for approval"}
    return {"bought": decision.confirmed, "expired": decision.expired}


async def buy_soon(ctx: ToolContext) -> dict[str, Any]:
    """Buy if approved within two seconds."""
    decision = ctx.tool_confirmation
    if decision is None:
        ctx.request_confirmation("Quick, buy?", timeout=timedelta(seconds=2))
        return {"status": "waiting for approval"}
    return {"bought": decision.confirmed, "expired": decision.expired}


def _app(tool: Any, **args: Any) -> tuple[list[Agent], ModelRegistry]:
    call = types.FunctionCall(name=tool.__name__, args=args)
    models = ModelRegistry()
    models.register("scripted:ops", lambda n: ScriptedModel(name=n, script=[call, "done"]))
    return [Agent("ops", "scripted:ops", tools=[tool])], models


async def test_without_a_worker_pending_lists_and_confirm_is_applied_later(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """The worker stops while the run waits: pending still lists the request (from the memo),
    a wrong id is refused, confirm returns within its wait, and a new worker applies it."""
    agents, models = _app(buy, item="lamp")
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        task_queue = rt.task_queue
        handle = await rt.adk.start(APP, USER, session_id, "ops", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        # A query answers from the worker's memory: the worker stops only once Temporal
        # holds the pause (a stop before would leave the pause to the next worker).
        await _durably_awaiting(rt, handle.workflow_id)
    # No worker from here on. Visibility indexes the paused run shortly after the pause
    # (a CLI run takes seconds on a loaded machine: the wait is generous).
    async with asyncio.timeout(150):
        while True:
            listed = await _cli(dev_server, "pending", "--task-queue", task_queue, "--json")
            assert listed.returncode == 0, listed.stderr
            if json.loads(listed.stdout):
                break
            await asyncio.sleep(0.2)
    [row] = json.loads(listed.stdout)
    assert (row["workflow_id"], row["id"], row["call"]) == (
        handle.workflow_id,
        request.id,
        "buy(item='lamp')",
    )
    assert row["payload_size"] > 0 and "payload" not in row
    shown = await _cli(dev_server, "pending", "--workflow-id", handle.workflow_id)
    assert request.id in shown.stdout and f"--address {dev_server.address}" in shown.stdout
    wrong = await _cli(dev_server, "confirm", handle.workflow_id, "adk-nope", "--approve")
    assert wrong.returncode == 1 and "no open confirmation request 'adk-nope'" in wrong.stderr
    checked = await _cli(
        dev_server,
        "confirm",
        handle.workflow_id,
        request.id,
        "--approve",
        "--wait",
        "1",
        "--checked",
    )
    assert checked.returncode == 1 and "no worker checked the answer" in checked.stderr
    sent = await _cli(
        dev_server,
        "confirm",
        handle.workflow_id,
        request.id,
        "--approve",
        "--wait",
        "1",
        "--json",
    )
    assert sent.returncode == 0, sent.stderr
    assert json.loads(sent.stdout)["outcome"] == "accepted"
    async with run_worker(agents, models=models, task_queue=task_queue) as rt:
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert _responses(events, "buy")[-1] == {"bought": True, "expired": False}


async def test_run_warns_when_no_worker_polls_the_task_queue(dev_server: DevServer) -> None:
    """`run --no-wait` on a queue nobody polls starts the run and says so at once."""
    queue = f"empty-{uuid.uuid4().hex[:8]}"
    started = await _cli(
        dev_server,
        "run",
        "--no-wait",
        "--task-queue",
        queue,
        "--app",
        APP,
        "--user",
        USER,
        "--session",
        _session(),
        "--agent",
        "ops",
        "hello",
    )
    assert started.returncode == 0, started.stderr
    assert f"no worker polls task queue '{queue}'" in started.stderr


async def test_run_refuses_an_app_no_worker_serves(dev_server: DevServer, tmp_path: Any) -> None:
    """`worker --examples` serves app "weather": `run --app other` fails before starting
    anything, naming the apps the queue's workers do serve."""
    deployment = Deployment(dev_server.address, f"apps-{uuid.uuid4().hex[:8]}", tmp_path)
    session_id = _session()
    with worker_process(deployment):
        refused = await _cli(
            dev_server,
            "run",
            "--no-wait",
            "--task-queue",
            deployment.task_queue,
            "--app",
            "other",
            "--user",
            USER,
            "--session",
            session_id,
            "--agent",
            "weather_agent",
            "hi",
        )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "serves app 'other'; they serve: weather" in refused.stderr.replace("\n", " ")
    listed = await _cli(dev_server, "list", "--session", session_id, "--json")
    assert json.loads(listed.stdout) == []


async def test_an_expired_confirmation_rejects_even_across_a_worker_restart(
    run_worker: WorkerFactory,
) -> None:
    """The deadline is a durable timer: it fires while no worker runs; the next worker
    re-enters the tool rejected and expired; a late answer is refused and listed."""
    # After the expired purchase the model asks for another one, so the run is still
    # there to refuse the late answer.
    script: list[ScriptedReply] = [
        types.FunctionCall(name="buy_soon", args={}),
        types.FunctionCall(name="buy", args={"item": "chair"}),
        "done",
    ]
    models = ModelRegistry()
    models.register("scripted:ops", lambda n: ScriptedModel(name=n, script=script))
    agents = [Agent("ops", "scripted:ops", tools=[buy_soon, buy])]
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        task_queue = rt.task_queue
        handle = await rt.adk.start(APP, USER, session_id, "ops", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        assert request.expires_at is not None
    await asyncio.sleep(2.5)  # the deadline passes with no worker at all
    async with run_worker(agents, models=models, task_queue=task_queue) as rt:
        async with asyncio.timeout(30):
            while [p.id for p in await handle.pending()] in ([], [request.id]):
                await asyncio.sleep(0.1)
        with pytest.raises(UnknownRequestIdError, match="expired at"):
            await handle.confirm(request.id, True)
        await handle.confirm(request.id, True, checked=False)
        async with asyncio.timeout(30):
            while not any("expired" in s for s in (await handle.status()).ignored_signals):
                await asyncio.sleep(0.1)
        [second] = await handle.pending()
        await handle.confirm(second.id, True)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert _responses(events, "buy_soon")[-1] == {"bought": False, "expired": True}
    request_call = next(c for e in events for c in e.function_calls() if c.name == REQUEST)
    reply = _responses(events, REQUEST)[0]
    assert reply.pop("waitedSeconds") >= 2  # it expired: its deadline had passed
    assert reply == {
        "confirmed": False,
        "expired": True,
        "callDigest": (request_call.args or {})["callDigest"],
    }


class _SlowModel(ScriptedModel):
    """Answers after a long think, unless cancelled first."""

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Sleep, then answer from the script."""
        await asyncio.sleep(60)
        return await super().generate(request)


@pytest.mark.parametrize("where", ["model step", "tool", "approval"])
async def test_cancel_reaches_the_running_step_and_frees_the_session(
    run_worker: WorkerFactory, dev_server: DevServer, where: str
) -> None:
    """`adk-temporal cancel` during a model call, a long tool or a wait for approval: the
    step sees CancelledError, one cancellation event is stored, the status is cancelled,
    the request is closed and the session takes the next message."""
    seen: list[str] = []
    started = asyncio.Event()

    async def slow_tool() -> dict[str, str]:
        """Take a long time."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("tool cancelled")
            raise
        return {"status": "done"}

    models = ModelRegistry()
    if where == "model step":
        models.register("scripted:ops", lambda n: _SlowModel(name=n, script=["done"]))
        tools: list[Any] = []
    elif where == "tool":
        call = types.FunctionCall(name="slow_tool", args={})
        models.register("scripted:ops", lambda n: ScriptedModel(name=n, script=[call, "done"]))
        tools = [slow_tool]
    else:
        call = types.FunctionCall(name="buy", args={"item": "kettle"})
        models.register("scripted:ops", lambda n: ScriptedModel(name=n, script=[call, "done"]))
        tools = [buy]
    session_id = _session()
    async with run_worker([Agent("ops", "scripted:ops", tools=tools)], models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "ops", "go", heartbeat_seconds=1)
        if where == "tool":
            await asyncio.wait_for(started.wait(), 30)
        elif where == "approval":
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
        else:
            await handle.wait_for_status("running", timeout=30)
            await asyncio.sleep(1)
        cancelled = await _cli(dev_server, "cancel", handle.workflow_id, "--json")
        assert cancelled.returncode == 0, cancelled.stderr
        assert json.loads(cancelled.stdout)["closed"] is True
        events = await _events(rt, session_id)
        description = await handle.describe()
        assert await handle.published() == type(await handle.published())()
        listed = await _cli(dev_server, "list", "--session", session_id, "--json")
        nxt = await rt.adk.start(APP, USER, session_id, "ops", "again")
        await nxt.cancel()
    assert [e.error_code for e in events if e.error_code] == ["Cancelled"]
    assert description.typed_search_attributes.get(ADK_STATUS) == "cancelled"
    assert json.loads(listed.stdout)[0]["status"] == "cancelled"
    if where == "tool":
        assert seen == ["tool cancelled"]


async def test_list_and_show_work_without_a_worker(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """`list` finds completed and waiting runs; `show` gives status, open requests and
    steps when a worker answers, and still works when none does: a completed run's steps
    and tokens come from its result then."""
    agents, models = _app(buy, item="desk")
    models.register("scripted:done", lambda n: ScriptedModel(name=n, script=["done"]))
    agents.append(Agent("quick", "scripted:done"))
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        done = await rt.adk.start(APP, USER, _session(), "quick", "go")
        assert (await done.result()).status == "completed"
        handle = await rt.adk.start(APP, USER, session_id, "ops", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        shown = json.loads((await _cli(dev_server, "show", handle.workflow_id, "--json")).stdout)
        assert shown["status"] == "awaiting_confirmation"
        assert shown["steps"] == 1
        assert [r["call"] for r in shown["open_requests"]] == ["buy(item='desk')"]
    offline = json.loads((await _cli(dev_server, "show", handle.workflow_id, "--json")).stdout)
    assert offline["steps"] is None and offline["open_requests"] == shown["open_requests"]
    closed = await _cli(dev_server, "show", done.workflow_id, "--json")
    assert closed.returncode == 0, closed.stderr
    result = await done.result()
    assert json.loads(closed.stdout)["status"] == "completed"
    assert json.loads(closed.stdout)["steps"] == result.steps == 1
    assert json.loads(closed.stdout)["usage"] == result.usage.model_dump()
    told = (await _cli(dev_server, "show", done.workflow_id)).stdout
    assert "steps    1" in told and "tokens" in told, told
    text = await _cli(dev_server, "list", "--app", APP, "--user", USER)
    assert f"{handle.workflow_id}  awaiting_confirmation  ops" in text.stdout
    missing = await _cli(dev_server, "show", "adk/ops/u-1/nope")
    assert missing.returncode == 1 and "no invocation 'adk/ops/u-1/nope'" in missing.stderr


async def test_cancel_of_a_closed_run_names_its_state_and_exits_1(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """`adk-temporal cancel` of a completed run, and of one already cancelled, says which
    state the run is in and exits 1 (--json too), instead of claiming to have cancelled it;
    AdkClient's cancel raises InvocationClosedError naming the state, the run unchanged."""
    agents, models = _app(buy, item="mug")
    models.register("scripted:done", lambda n: ScriptedModel(name=n, script=["done"]))
    agents.append(Agent("quick", "scripted:done"))
    async with run_worker(agents, models=models) as rt:
        done = await rt.adk.start(APP, USER, _session(), "quick", "go")
        assert (await done.result()).status == "completed"
        waiting = await rt.adk.start(APP, USER, _session(), "ops", "go")
        await waiting.wait_for_status("awaiting_confirmation", timeout=30)
        first = await _cli(dev_server, "cancel", waiting.workflow_id, "--json")
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout) == {
            "workflow_id": waiting.workflow_id,
            "closed": True,
            "status": "cancelled",
        }
    for handle, state in ((done, "completed"), (waiting, "cancelled")):
        with pytest.raises(InvocationClosedError, match=f"is {state}: only a running"):
            await handle.cancel()
        assert run_status(await handle.describe()) == state
        again = await _cli(dev_server, "cancel", handle.workflow_id)
        assert again.returncode == 1, again.stdout + again.stderr
        assert f"{handle.workflow_id} is {state}" in again.stderr.replace("\n", " ")
        assert "cancelled adk/" not in again.stdout
        as_json = await _cli(dev_server, "cancel", handle.workflow_id, "--json")
        assert as_json.returncode == 1, as_json.stdout + as_json.stderr
