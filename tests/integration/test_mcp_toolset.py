"""MCP toolsets on Temporal, against real MCP servers (stdio and streamable HTTP)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from temporalio.client import WorkflowFailureError
from temporalio.common import RetryPolicy

from adk_temporal.agents import Agent
from adk_temporal.ids import SessionKey
from adk_temporal.mcp import IDEMPOTENCY_META_KEY, McpToolset, close_connections
from adk_temporal.models import ModelRegistry
from adk_temporal.ports import free_port

from ..mcp_servers import HttpToolServer, calls, raw_stdio_toolset, stdio_toolset
from ..multi_agents import RecordingModel
from .conftest import Runtime, WorkerFactory

pytestmark = pytest.mark.integration

APP = "mcp"
USER = "u-1"


def _call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def _setup(toolset: McpToolset, *script: Any) -> tuple[list[Agent], ModelRegistry, RecordingModel]:
    model = RecordingModel(script=list(script), name="scripted:mcp")
    models = ModelRegistry()
    models.register("scripted:mcp", lambda name: model)
    return [Agent("helper", "scripted:mcp", tools=[toolset])], models, model


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _responses(rt: Runtime, session_id: str) -> dict[str, Any]:
    session = await rt.sessions.get(SessionKey(APP, USER, session_id))
    return {r.name or "": r.response for e in session.events for r in e.function_responses()}


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpToolServer]:
    """The test MCP server over streamable HTTP on a free loopback port."""
    server = HttpToolServer(tmp_path / "http-calls.jsonl")
    server.start()
    yield server
    server.kill()


@pytest.fixture(autouse=True)
async def _close_pool() -> Any:
    yield
    await close_connections()


async def test_stdio_tools_are_listed_called_and_the_result_is_stored(
    run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """The model is offered the filtered stdio tools; its call runs on the server, with
    the call's idempotency key in _meta, and the result is stored in the session."""
    log = tmp_path / "calls.jsonl"
    toolset = stdio_toolset(log, tool_filter=["add", "shout"])
    agents, models, model = _setup(toolset, _call("add", a=2, b=3), "five")
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, session_id, "helper", "add 2 and 3")
        result = await handle.result()
        responses = await _responses(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "five")
    assert responses["add"] == {"sum": 5}
    offered = {d.name for t in model.requests[0].tools or [] for d in [t]}
    assert offered == {"add", "shout"}
    logged = calls(log)
    assert [c["tool"] for c in logged] == ["add"]
    key = logged[0]["meta"][IDEMPOTENCY_META_KEY]
    assert key.startswith(f"{handle.workflow_id}/{result.invocation_id}/")


async def test_http_tools_are_listed_called_and_the_result_is_stored(
    run_worker: WorkerFactory, http_server: HttpToolServer
) -> None:
    """Over streamable HTTP: a text result becomes {"result": text}, an isError result an
    error the model sees, and the invocation goes on."""
    toolset = http_server.toolset()
    agents, models, _ = _setup(toolset, [_call("shout", text="hi"), _call("broken")], "done")
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "helper", "go")).result()
        responses = await _responses(rt, session_id)
    assert result.status == "completed"
    assert responses["shout"] == {"result": "HI"}
    assert "the broken tool broke" in responses["broken"]["error"]
    # The two calls of one model turn run concurrently, so they reach the server in any order.
    assert sorted(c["tool"] for c in calls(http_server.log)) == ["broken", "shout"]


async def test_a_call_needing_approval_runs_once_after_a_worker_restart(
    run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """add requires approval: the worker stops while the call waits, another worker on the
    same queue takes the approval and the call runs once, with the same idempotency key."""
    log = tmp_path / "calls.jsonl"
    toolset = stdio_toolset(log, require_confirmation={"add": True})
    agents, models, _ = _setup(toolset, _call("add", a=1, b=1), "two")
    session_id = _session()
    async with run_worker(agents, models=models) as first:
        handle = await first.adk.start(APP, USER, session_id, "helper", "add")
        await handle.wait_for_status("awaiting_confirmation", timeout=60)
    await close_connections()  # the first worker's server goes with it
    assert calls(log) == []
    async with run_worker(agents, models=models, task_queue=first.task_queue) as rt:
        (request,) = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        responses = await _responses(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "two")
    assert responses["add"] == {"sum": 2}
    assert [c["tool"] for c in calls(log)] == ["add"]


async def test_a_tool_removed_between_steps_gives_the_model_an_error(
    run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """retire removes doomed from the server; the next step's call of doomed is an error
    response naming the tool, and the invocation completes."""
    log = tmp_path / "calls.jsonl"
    toolset = stdio_toolset(log, list_ttl_seconds=0)
    agents, models, model = _setup(toolset, _call("retire"), _call("doomed"), "gone")
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        result = await (await rt.adk.start(APP, USER, session_id, "helper", "go")).result()
        responses = await _responses(rt, session_id)
    assert (result.status, result.final_text) == ("completed", "gone")
    assert responses["retire"] == {"result": "doomed removed"}
    assert "doomed" in responses["doomed"]["error"]
    assert [c["tool"] for c in calls(log)] == ["retire"]
    offered = [{d.name for d in r.tools or []} for r in model.requests]
    assert "doomed" in offered[0] and "doomed" not in offered[1]


async def test_an_http_server_killed_mid_call_is_retried_after_its_restart(
    run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """The server dies inside slow_add; the step fails retryably, the server comes back on
    the same port, and the retried call succeeds with the same idempotency key."""
    server = HttpToolServer(tmp_path / "calls.jsonl")
    server.start(block=True)
    started = Path(str(server.log) + ".started")
    toolset = server.toolset(
        retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=20),
        heartbeat_timeout=timedelta(seconds=5),
    )
    agents, models, _ = _setup(toolset, _call("slow_add", a=20, b=22), "42")
    session_id = _session()
    try:
        async with run_worker(agents, models=models) as rt:
            handle = await rt.adk.start(APP, USER, session_id, "helper", "go")
            async with asyncio.timeout(60):
                while not started.exists():
                    await asyncio.sleep(0.05)
            server.kill()
            server.start()
            result = await handle.result()
            responses = await _responses(rt, session_id)
    finally:
        server.kill()
    assert (result.status, result.final_text) == ("completed", "42")
    assert responses["slow_add"] == {"sum": 42}
    logged = [c for c in calls(server.log) if c["tool"] == "slow_add"]
    assert len(logged) >= 2 and len({c["pid"] for c in logged}) == 2
    assert len({c["meta"][IDEMPOTENCY_META_KEY] for c in logged}) == 1


async def test_a_server_gone_at_listing_fails_the_step_naming_the_server(
    run_worker: WorkerFactory,
) -> None:
    """Nothing listens at the toolset's URL: the step's attempts fail on the listing, then
    the invocation fails with the server's URL and the cause; the model is never called."""
    url = f"http://127.0.0.1:{free_port()}/mcp"
    agents, models, model = _setup(McpToolset(url=url), "never said")
    session_id = _session()
    async with run_worker(agents, models=models) as rt:
        handle = await rt.adk.start(
            APP, USER, session_id, "helper", "add 2 and 3", model_maximum_attempts=2
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "McpServerError"
    assert f"MCP server {url}: cannot connect" in str(cause)
    assert model.requests == []


@pytest.mark.parametrize(
    ("listing", "named"),
    [("deep", ["tool 'deep'"]), ("string", ["tool 'stringy'"]), ("collide", ["'a b'", "'a_b'"])],
)
async def test_a_listing_that_cannot_be_used_fails_the_invocation_at_once(
    run_worker: WorkerFactory, tmp_path: Path, listing: str, named: list[str]
) -> None:
    """A schema the SDK cannot parse (nested too deep, or a string), or two tools that reach
    the model under one name: the first model step fails non-retryably with McpListingError
    naming the tools; the server is asked to list once and the model is never called."""
    log = tmp_path / "calls.jsonl"
    agents, models, model = _setup(raw_stdio_toolset(listing, log), "never said")
    async with run_worker(agents, models=models) as rt:
        handle = await rt.adk.start(APP, USER, _session(), "helper", "go")
        with pytest.raises(WorkflowFailureError) as failure:
            async with asyncio.timeout(120):  # a hang guard: the call timeout is 300 s
                await handle.result()
    cause = failure.value.cause
    assert getattr(cause, "type", None) == "McpListingError"
    assert all(name in str(cause) for name in named)
    assert [c["method"] for c in calls(log)].count("tools/list") == 1
    assert model.requests == []
