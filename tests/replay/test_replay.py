"""Recorded histories of real runs replay against today's workflow code.

The JSON files in ``histories/`` were recorded from real runs on the dev server. Replaying
them with ``temporalio.worker.Replayer`` fails if a code change makes the workflow take a
different path for the same history, which would break every invocation in flight when the
new code is deployed. A recorded history stands for runs in flight and is never re-recorded:
a change of the command sequence is gated with ``workflow.patched`` instead.
``ADK_RECORD_HISTORIES=1 pytest -n0 tests/replay`` records the scenarios that have no history
yet (new code paths get new scenarios).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from http.server import HTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from google.genai import types
from pydantic import BaseModel
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHistory,
)
from temporalio.common import RetryPolicy
from temporalio.worker import Replayer, Worker

from adk_temporal import client as client_module
from adk_temporal.agents import Agent, BaseAgent
from adk_temporal.app import App, Stores
from adk_temporal.approvals import DuplicateVoteError, GrantTerms
from adk_temporal.background_http import BackgroundServer
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.context import ToolContext
from adk_temporal.devserver import DevServer
from adk_temporal.dispatch import LocalSteps
from adk_temporal.double_texting import DoubleTexting
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.examples.webhook_receiver import receiver
from adk_temporal.ids import SessionKey, any_app_task_queue, app_task_queue
from adk_temporal.mcp import close_connections
from adk_temporal.models import ModelRegistry, ScriptedModel, ScriptedReply
from adk_temporal.notifications import Notifications
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import InMemorySessionService, SqliteSessionService
from adk_temporal.tools import tool
from adk_temporal.usage import TokenBudgets
from adk_temporal.worker import build_worker, worker_identity
from adk_temporal.workflows.messages import BASELINE

from .. import a2a_apps, approvals_app
from ..a2a_apps import NEAR_APP
from ..a2a_sample import booking_server
from ..adk_scenarios import failing_fan, long_running_agent
from ..compaction_app import COMPACTION_APP, compaction_app
from ..compaction_app import CONFIG as COMPACTION_CONFIG
from ..early_answers_app import answered_early
from ..graphs.ours import build as build_graph
from ..integration.conftest import WorkerFactory
from ..integration.queue_workers import (
    UncheckedPlugin,
    connect_like,
    polled,
    weather_app,
    workers,
)
from ..integration.workers import Deployment, died_by_sigkill, worker_process
from ..mcp_servers import stdio_toolset
from ..multi_agents import multi_agent_app
from ..priced import priced_agent
from ..texting_app import DIR_ENV, calls, open_gate
from ..texting_app import agent as texting_agent
from ..texting_app import models as texting_models

HISTORIES = Path(__file__).parent / "histories"
RECORD = os.environ.get("ADK_RECORD_HISTORIES") == "1"
USER = "u-replay"


def _replayer() -> Replayer:
    # The plugin configures the replayer exactly as it configures workers: workflows,
    # data converter and sandbox pass-through.
    return Replayer(
        workflows=[], plugins=[AdkPlugin(App([]), stores=Stores(InMemorySessionService()))]
    )


def _committed() -> list[Path]:
    return sorted(HISTORIES.glob("*.json"))


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
@pytest.mark.parametrize("path", _committed(), ids=lambda p: p.stem)
async def test_committed_history_replays(path: Path) -> None:
    """Each committed history replays without a nondeterminism error."""
    data = json.loads(path.read_text())
    history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, f"{path.name}: {result.replay_failure}"


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
def test_every_scenario_has_a_committed_history() -> None:
    """The committed fixtures cover every recorded scenario."""
    names = {p.stem.split(".")[0] for p in _committed()}
    assert names == ALL_SCENARIOS


Scenario = Callable[[AdkClient, str], Awaitable[InvocationHandle]]


async def _ask(adk: AdkClient, session_id: str, message: str) -> InvocationHandle:
    return await adk.start(APP_NAME, USER, session_id, "weather_agent", message)


async def _answer_confirmation(handle: InvocationHandle, approve: bool) -> InvocationHandle:
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    await handle.confirm(request.id, approve)
    return handle


async def _weather(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _ask(adk, sid, "What's the weather in Hangzhou?")


async def _approve(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _answer_confirmation(await _ask(adk, sid, "Buy a weather report for Oslo"), True)


async def _two_cities(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _ask(adk, sid, "What's the weather in Hangzhou and Oslo?")


async def _reject(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _answer_confirmation(await _ask(adk, sid, "Buy a weather report for Rome"), False)


async def _approve_at_baseline_1(adk: AdkClient, sid: str) -> InvocationHandle:
    """Started by a client of the release before (baseline 1), answered on this one: the
    answer takes the held publishing through ``workflow.patched``."""
    with mock.patch.object(client_module, "BASELINE", 1):
        handle = await _ask(adk, sid, "Buy a weather report for Oslo")
    return await _answer_confirmation(handle, True)


async def _resume_input(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await _ask(adk, sid, "Help me plan a trip")
    await handle.wait_for_status("awaiting_input", timeout=30)
    [request] = await handle.pending()
    await handle.resume(request.id, {"start": "2026-12-01", "end": "2026-12-04"})
    return handle


async def _streamed(adk: AdkClient, sid: str) -> InvocationHandle:
    """A tool step, then a reply streamed through the session store while a client follows."""
    handle = await adk.start(
        APP_NAME, USER, sid, "weather_agent", "What's the weather in Oslo?", stream=True
    )
    pieces = [e async for e in handle.stream() if e.partial]
    assert pieces, "the weather model streams its text replies"
    return handle


async def _parallel(adk: AdkClient, sid: str) -> InvocationHandle:
    return await _ask(adk, sid, "What's the weather in Hangzhou and Beijing?")


async def _continue_as_new(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await adk.start(
        APP_NAME,
        USER,
        sid,
        "weather_agent",
        "Buy a weather report for Lima",
        continue_as_new_after_events=5,
    )
    return await _answer_confirmation(handle, True)


async def _parallel_pause(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await adk.start(MULTI_APP, USER, sid, "mixed", "go")
    return await _answer_confirmation(handle, True)


async def _loop_continue_as_new(adk: AdkClient, sid: str) -> InvocationHandle:
    """Each pass of a two-pass loop waits for approval; runs hand over inside the loop."""
    handle = await adk.start(MULTI_APP, USER, sid, "stamping", "go", continue_as_new_after_events=4)
    answered: set[str] = set()
    for _ in range(2):
        async with asyncio.timeout(30):
            while not (fresh := [r for r in await handle.pending() if r.id not in answered]):
                await asyncio.sleep(0.1)
        answered.add(fresh[0].id)
        await handle.confirm(fresh[0].id, True)
    return handle


async def _follow_up_agent(adk: AdkClient, sid: str) -> InvocationHandle:
    """escalator transfers to checker; the next message, started at escalator, goes to
    checker (the run's first step chooses the agent; the search attribute follows)."""
    await (await adk.start(MULTI_APP, USER, sid, "escalator", "check it")).result()
    return await adk.start(MULTI_APP, USER, sid, "escalator", "and again?")


MULTI_APP = "multi"
MULTI_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    "transfer": ("coordinator", "weather please"),
    "parallel_agents": ("fanout", "write notes"),
    "parallel_pause": _parallel_pause,
    "sequential": ("pipeline", "draft"),
    "agent_tool": ("caller", "which city is rainiest?"),
    # A loop that ends on an escalation, inside a sequence that goes on.
    "loop_escalate": ("editing", "polish it"),
    "loop_continue_as_new": _loop_continue_as_new,
    # ADK's escalation (patched): the judge sums up, then the loop stops.
    "loop_escalate_adk": ("editing", "polish it"),
    # checker, transferred to, escalates and sums up; its answer ends the run.
    "transfer_escalate_adk": ("escalator", "check it"),
    "follow_up_agent": _follow_up_agent,
    "baseline_parallel_pause": _parallel_pause,
    "baseline_loop_continue_as_new": _loop_continue_as_new,
    "baseline_transfer_escalate_adk": ("escalator", "check it"),
}

ADK_APP = "adk"
ADK_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    # One branch answers with an error: the other is stopped in its tool (patched).
    "parallel_failure": ("fan", "go"),
}


async def _refused_answers(adk: AdkClient, sid: str) -> InvocationHandle:
    """Malformed, oversized and unknown-id answers, then the approval."""
    handle = await _ask(adk, sid, "Buy a weather report for Quito")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    raw = adk.client.get_workflow_handle(handle.workflow_id)
    await raw.signal("adk_confirm", {"confirmation_id": request.id})
    await raw.signal("adk_confirm", {"confirmation_id": "adk-unknown", "confirmed": True})
    oversized = {"confirmation_id": request.id, "confirmed": True, "payload": "p" * 70_000}
    await raw.signal("adk_confirm", oversized)
    async with asyncio.timeout(30):
        while len((await handle.status()).ignored_signals) < 3:
            await asyncio.sleep(0.1)
    await handle.confirm(request.id, True)
    return handle


async def _cancelled(adk: AdkClient, sid: str) -> InvocationHandle:
    """Cancelled while waiting for approval: one cancellation event, requests closed."""
    handle = await _ask(adk, sid, "Buy a weather report for Bern")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    await handle.cancel()
    async with asyncio.timeout(30):
        while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await asyncio.sleep(0.1)
    return handle


SCENARIOS: dict[str, Scenario] = {
    "weather": _weather,
    "approve": _approve,
    "reject": _reject,
    "resume_input": _resume_input,
    "parallel": _parallel,
    "continue_as_new": _continue_as_new,
    "crash_recovered": _approve,  # recorded with a worker killed after the artifact save
    # Recorded after tool responses went to the session store: staged results in history.
    "staged_parallel": _parallel,
    "refused_answers": _refused_answers,
    "cancelled_while_waiting": _cancelled,
    "streamed": _streamed,
    # Started at baseline 1: no patch markers, ids drawn from the run id, short step inputs.
    "baseline_approve": _approve,
    "baseline_reject": _reject,
    "baseline_resume_input": _resume_input,
    "baseline_staged_parallel": _parallel,
    "baseline_continue_as_new": _continue_as_new,
    "baseline_cancelled_while_waiting": _cancelled,
    # Baseline 2: an answer's upserts wait for the task after the one that resumes the run.
    "baseline2_approve": _approve,
    "baseline2_refused_answers": _refused_answers,
    "baseline2_resume_input": _resume_input,
    "baseline2_continue_as_new": _continue_as_new,
    "baseline1_approved_after_upgrade": _approve_at_baseline_1,
}


@tool(retry_policy=RetryPolicy(maximum_attempts=2, initial_interval=timedelta(milliseconds=50)))
def unreachable() -> dict[str, str]:
    """Call a service that is down."""
    raise ConnectionError("service unreachable")


async def quick_approval(ctx: ToolContext) -> dict[str, Any]:
    """Go ahead only if approved within a second."""
    if ctx.tool_confirmation is None:
        ctx.request_confirmation("go?", timeout=timedelta(seconds=1))
        return {"status": "waiting for approval"}
    return {"confirmed": ctx.tool_confirmation.confirmed}


def slow_sync() -> dict[str, str]:
    """Do something that takes a while, in a thread."""
    import time

    time.sleep(1.5)
    return {"status": "done"}


class Forecast(BaseModel):
    """A structured answer."""

    city: str
    high: int


def _edges_app() -> tuple[list[BaseAgent], ModelRegistry]:
    models = ModelRegistry()
    valid, invalid = ['{"city": "Oslo", "high": 3}'], ['{"city": "Oslo"}']
    models.register("scripted:structured", lambda n: ScriptedModel(name=n, script=valid))
    models.register("scripted:unstructured", lambda n: ScriptedModel(name=n, script=invalid))

    failing: list[ScriptedReply] = [types.FunctionCall(name="unreachable", args={}), "gave up"]
    models.register("scripted:failing", lambda n: ScriptedModel(name=n, script=failing))
    expiring: list[ScriptedReply] = [types.FunctionCall(name="quick_approval", args={}), "too late"]
    models.register("scripted:expiring", lambda n: ScriptedModel(name=n, script=expiring))
    slow: list[ScriptedReply] = [types.FunctionCall(name="slow_sync", args={}), "finished"]
    models.register("scripted:slow", lambda n: ScriptedModel(name=n, script=slow))
    return [
        Agent("slow", "scripted:slow", tools=[slow_sync]),
        Agent("failing", "scripted:failing", tools=[unreachable]),
        Agent("expiring", "scripted:expiring", tools=[quick_approval]),
        Agent("structured", "scripted:structured", output_key="out", output_schema=Forecast),
        Agent("unstructured", "scripted:unstructured", output_key="out", output_schema=Forecast),
    ], models


EDGES_APP = "edges"


async def _cancelled_during_tool(adk: AdkClient, sid: str) -> InvocationHandle:
    """Cancelled while a tool runs: the run waits for the tool, stores its response, then
    the cancellation event (patched behaviour)."""
    handle = await adk.start(EDGES_APP, USER, sid, "slow", "go")
    async with asyncio.timeout(30):
        while not any(
            a.activity_type.name == "adk_tool_call"
            for a in (await handle.describe()).raw_description.pending_activities
        ):
            await asyncio.sleep(0.05)
    await handle.cancel()
    return handle


EDGES_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    # A tool step that failed on every attempt reaches the model (patched behaviour).
    "tool_failure": ("failing", "try it"),
    # A confirmation nobody answers expires on a durable timer.
    "expired_confirmation": ("expiring", "go"),
    # A final answer validated against an output_schema and stored under output_key.
    "output_schema": ("structured", "forecast please"),
    # One that does not validate: the invocation fails with OutputSchemaError.
    "output_schema_invalid": ("unstructured", "forecast please"),
    "cancelled_during_tool": _cancelled_during_tool,
    "baseline_tool_failure": ("failing", "try it"),
    "baseline_cancelled_during_tool": _cancelled_during_tool,
}


def _mcp_app(log: Path) -> tuple[list[BaseAgent], ModelRegistry]:
    models = ModelRegistry()
    script: list[ScriptedReply] = [types.FunctionCall(name="add", args={"a": 2, "b": 3}), "five"]
    models.register("scripted:mcp", lambda n: ScriptedModel(name=n, script=script))
    toolset = stdio_toolset(log, require_confirmation={"add": True})
    return [Agent("mcp_helper", "scripted:mcp", tools=[toolset])], models


MCP_APP = "mcp"


def _adk_app() -> tuple[list[BaseAgent], ModelRegistry]:
    fan = failing_fan(raises=False)
    return [fan.agent], fan.models


async def _mcp_approve(adk: AdkClient, sid: str) -> InvocationHandle:
    handle = await adk.start(MCP_APP, USER, sid, "mcp_helper", "add")
    return await _answer_confirmation(handle, True)


GRAPH_APP = "graphs"


def _graph_app() -> tuple[list[BaseAgent], ModelRegistry]:
    return [build_graph("pause_in_branch").workflow], ModelRegistry()


async def _graph_join_pause(adk: AdkClient, sid: str) -> InvocationHandle:
    """An ADK 2 graph: one branch of a join pauses (RequestInput) while the other finishes;
    the answer completes the join."""
    handle = await adk.start(GRAPH_APP, USER, sid, "branching", "go")
    await handle.wait_for_status("awaiting_input")
    await handle.resume("q-ok", {"result": True})
    return handle


async def _graph_continue_as_new(adk: AdkClient, sid: str) -> InvocationHandle:
    """The same graph handing over between nodes and while one branch of the join waits
    (baseline 3: node statuses in the memo)."""
    handle = await adk.start(
        GRAPH_APP, USER, sid, "branching", "go", continue_as_new_after_events=5
    )
    await handle.wait_for_status("awaiting_input")
    await handle.resume("q-ok", {"result": True})
    return handle


GRAPH_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    "graph_join_pause": _graph_join_pause,
    "graph_continue_as_new": _graph_continue_as_new,
}


def _approvals_app() -> tuple[list[BaseAgent], ModelRegistry]:
    return [approvals_app.clerk()], approvals_app.models()


async def _quorum_pause(adk: AdkClient, sid: str) -> InvocationHandle:
    """A 2-of-finance refund: alice's vote keeps it paused, a second vote of hers is refused,
    bob's decides it."""
    handle = await adk.start(
        approvals_app.APP, USER, sid, approvals_app.AGENT, "refund 30", started_by="carol"
    )
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    await handle.confirm(request.id, True, answered_by="alice", groups=["finance"], channel="cli")
    with contextlib.suppress(DuplicateVoteError):
        await handle.confirm(request.id, True, answered_by="alice", groups=["finance"])
    await handle.confirm(request.id, True, answered_by="bob", groups=["finance"], channel="cli")
    return handle


async def _standing_grant(adk: AdkClient, sid: str) -> InvocationHandle:
    """credit 20 approved with a grant; the session's next credit runs under it unasked."""
    first = await adk.start(approvals_app.APP, USER, sid, approvals_app.AGENT, "credit 20")
    await first.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await first.pending()
    terms = GrantTerms(max_calls=2, where="amount <= 50", ttl=timedelta(hours=2))
    await first.confirm(request.id, True, answered_by="bob", channel="cli", grant=terms)
    await first.result()
    return await adk.start(approvals_app.APP, USER, sid, approvals_app.AGENT, "credit 30")


async def _approval_escalation(adk: AdkClient, sid: str) -> InvocationHandle:
    """wire left unanswered: reminded, reassigned to treasury, then rejected at expiry."""
    return await adk.start(approvals_app.APP, USER, sid, approvals_app.AGENT, "wire 7")


async def _escalation_at_baseline_2(adk: AdkClient, sid: str) -> InvocationHandle:
    """Started by a client of the release before (baseline 2): its reminder timers take the
    change through ``workflow.patched`` (a marker)."""
    with mock.patch.object(client_module, "BASELINE", 2):
        return await _approval_escalation(adk, sid)


APPROVALS_APP = approvals_app.APP
APPROVALS_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    # Baseline 3: votes of a quorum policy (memo upserts on a vote that decides nothing).
    "quorum_pause": _quorum_pause,
    # A grant given with an approval, and a later run of the session whose call it covers.
    "standing_grant": _standing_grant,
    # The reminder and reassignment timers of an approval policy, then its expiry.
    "approval_escalation": _approval_escalation,
    "baseline2_approval_escalation": _escalation_at_baseline_2,
}

MCP_SCENARIOS: dict[str, tuple[str, str] | Scenario] = {
    # A tool of an MCP server (stdio) that needs approval, approved by signal.
    "mcp_approval": _mcp_approve,
}
TEXTING_SCENARIOS = (
    "texting_enqueue",
    "texting_interrupt",
    "texting_rollback",
    "baseline2_texting_enqueue",
)
"""A second message sent while the first invocation is in a slow tool, under each policy
that lets it in: the session's runs continue as new into it. The baseline-2 run was started
by the release before and takes the message through ``workflow.patched``."""

NOTIFY_SCENARIOS: dict[str, Scenario] = {
    # An app with notifications: the pause and the completion start adk_notify children.
    "notified_pause": _approve,
    # Recorded after notification runs got short ids (patched): adk-notify-<hash>.
    "notified_pause_short_ids": _approve,
    "baseline_notified_pause": _approve,
}
LOCAL_SCENARIOS: dict[str, Scenario] = {
    # Baseline 4, an app with local steps: the model steps after the first and the calls of
    # the named tools ran inside the workflow task (local activities); an approved call
    # re-entered as an activity.
    "local_steps_weather": _two_cities,
    "local_steps_approve": _approve,
}
ALL_SCENARIOS = {
    *SCENARIOS,
    *LOCAL_SCENARIOS,
    *MULTI_SCENARIOS,
    *EDGES_SCENARIOS,
    *MCP_SCENARIOS,
    *NOTIFY_SCENARIOS,
    *ADK_SCENARIOS,
    *GRAPH_SCENARIOS,
    *APPROVALS_SCENARIOS,
    "long_running_restart",
    "token_budget_pause",
    "app_queue_approve",
    "own_queue_approve",
    "compaction",
    "hand_back_app_queue",
    "unnamed_any_app_queue",
    "a2a_remote_input",
    "a2a_remote_confirmation",
    "early_answer",
    *TEXTING_SCENARIOS,
}


async def _save_runs(client: Client, name: str, workflow_id: str) -> None:
    runs = [wf.run_id async for wf in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    for index, run_id in enumerate(reversed(runs)):
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        suffix = f".run{index + 1}" if len(runs) > 1 else ""
        body = {"workflow_id": workflow_id, "history": history.to_json_dict()}
        (HISTORIES / f"{name}{suffix}.json").write_text(json.dumps(body, indent=1) + "\n")


def _missing(names: Iterable[str]) -> list[str]:
    recorded = {p.stem.split(".")[0] for p in _committed()}
    return [name for name in names if name not in recorded]


@pytest.mark.skipif(not RECORD, reason="set ADK_RECORD_HISTORIES=1 to record missing histories")
async def test_record_missing_histories(
    run_worker: WorkerFactory, temporal_client: Client, dev_server: DevServer, tmp_path: Path
) -> None:
    """Record the scenarios without a history from real runs, then check all replay."""
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        for name in _missing(n for n in SCENARIOS if n != "crash_recovered"):
            handle = await SCENARIOS[name](rt.adk, f"replay-{name}-{uuid.uuid4().hex[:6]}")
            with contextlib.suppress(WorkflowFailureError):  # a cancelled run "fails"
                await handle.result()
            await _save_runs(temporal_client, name, handle.workflow_id)
    local = LocalSteps(tools={"get_weather", "buy_weather_report"})
    async with run_worker([build_weather_agent("scripted:weather")], local_steps=local) as rt:
        for name in _missing(LOCAL_SCENARIOS):
            handle = await LOCAL_SCENARIOS[name](rt.adk, f"replay-{name}-{uuid.uuid4().hex[:6]}")
            await handle.result()
            await _save_runs(temporal_client, name, handle.workflow_id)
    hook = BackgroundServer(HTTPServer(("127.0.0.1", 0), receiver(b"replay", print)), "hook")
    hook.start()
    notifications = Notifications(
        endpoints=[f"http://127.0.0.1:{hook.port}/"],
        secret=b"replay",
        answer_base_url="https://gateway.example",
        on=["paused", "completed"],
    )
    try:
        agents = [build_weather_agent("scripted:weather")]
        async with run_worker(agents, notifications=notifications) as rt:
            for name in _missing(NOTIFY_SCENARIOS):
                handle = await NOTIFY_SCENARIOS[name](
                    rt.adk, f"replay-{name}-{uuid.uuid4().hex[:6]}"
                )
                await handle.result()
                await _save_runs(temporal_client, name, handle.workflow_id)
    finally:
        hook.stop()
    groups: list[tuple[str, Any, dict[str, tuple[str, str] | Scenario]]] = [
        (MULTI_APP, multi_agent_app(), MULTI_SCENARIOS),
        (EDGES_APP, _edges_app(), dict(EDGES_SCENARIOS)),
        (MCP_APP, _mcp_app(tmp_path / "mcp-calls.jsonl"), MCP_SCENARIOS),
        (ADK_APP, _adk_app(), ADK_SCENARIOS),
        (GRAPH_APP, _graph_app(), GRAPH_SCENARIOS),
        (APPROVALS_APP, _approvals_app(), APPROVALS_SCENARIOS),
    ]
    for app, (agents, models), scenarios in groups:
        async with run_worker(agents, models=models) as rt:
            for name in _missing(scenarios):
                spec = scenarios[name]
                sid = f"replay-{name}-{uuid.uuid4().hex[:6]}"
                if isinstance(spec, tuple):
                    handle = await rt.adk.start(app, USER, sid, spec[0], spec[1])
                else:
                    handle = await spec(rt.adk, sid)
                with contextlib.suppress(WorkflowFailureError):  # a cancelled run "fails"
                    await handle.result()
                await _save_runs(temporal_client, name, handle.workflow_id)
    await close_connections()  # the MCP scenario's server process
    if _missing(["long_running_restart"]):
        await _record_long_running_restart(run_worker, temporal_client)
    if _missing(["token_budget_pause"]):
        await _record_token_budget(run_worker, temporal_client)
    if _missing(["compaction"]):
        await _record_compaction(run_worker, temporal_client)
    for name in _missing(TEXTING_SCENARIOS):
        await _record_texting(run_worker, temporal_client, tmp_path / name, name)
    if _missing(["app_queue_approve"]):
        await _record_app_queue(temporal_client, "app_queue_approve", own_queues=False)
    if _missing(["own_queue_approve"]):
        await _record_app_queue(temporal_client, "own_queue_approve", own_queues=True)
    if _missing(["hand_back_app_queue"]):
        await _record_hand_back(temporal_client, tmp_path / "hand-back")
    if _missing(["unnamed_any_app_queue"]):
        await _record_unnamed(temporal_client, tmp_path / "unnamed")
    if _missing(["crash_recovered"]):
        await _record_crash(temporal_client, dev_server, tmp_path)
    if _missing(["a2a_remote_input", "a2a_remote_confirmation"]):
        await _record_a2a_remote(run_worker, temporal_client)
    if _missing(["early_answer"]):
        await _record_early_answer(temporal_client, tmp_path)
    for path in _committed():
        data = json.loads(path.read_text())
        history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
        await _replayer().replay_workflow(history)


async def _record_early_answer(client: Client, tmp_path: Path) -> None:
    """A checked answer that came in the workflow task with the node result that opened its
    request: let through by the validator, checked again by the handler, applied."""
    sessions = SqliteSessionService(tmp_path / "early.db")
    key = SessionKey("app", USER, f"replay-early-{uuid.uuid4().hex[:6]}")
    handle = await answered_early(client, sessions, f"early-{uuid.uuid4().hex[:6]}", key)
    await sessions.close()
    await _save_runs(client, "early_answer", handle.workflow_id)


async def _record_a2a_remote(run_worker: WorkerFactory, client: Client) -> None:
    """A remote A2A agent (an agent tool) whose task pauses: asking for input, answered
    after the worker stopped; asking to approve a call, approved (checked update)."""
    with mock.patch.dict(os.environ, {a2a_apps.FAR_TOKEN_ENV: "unused-by-the-sample"}):
        async with booking_server() as (card_url, _):
            os.environ[a2a_apps.FAR_ENV] = card_url
            near = a2a_apps.near_app()
            sid = f"replay-a2a-{uuid.uuid4().hex[:6]}"
            async with run_worker(near.agents, models=near.models) as first:
                handle = await first.adk.start(NEAR_APP, USER, sid, "assistant", "desk: book")
                await handle.wait_for_status("awaiting_input", timeout=30)
            async with run_worker(near.agents, models=near.models, task_queue=first.task_queue):
                [request] = await handle.pending()
                await handle.resume(request.id, "4")
                await handle.result()
            await _save_runs(client, "a2a_remote_input", handle.workflow_id)
            async with run_worker(near.agents, models=near.models) as rt:
                handle = await rt.adk.start(NEAR_APP, USER, sid + "-pay", "assistant", "desk: pay")
                await _answer_confirmation(handle, True)
                await handle.result()
            await _save_runs(client, "a2a_remote_confirmation", handle.workflow_id)


async def _record_long_running_restart(run_worker: WorkerFactory, client: Client) -> None:
    """A long-running tool's call waits for its response; the worker stops, and the
    response reaches a new worker (checked update)."""
    replies: list[str | types.FunctionCall] = [
        types.FunctionCall(name="increaseByOne", args={}),
        "pending, I will tell you",
        "approved",
    ]
    found = long_running_agent(replies)
    sid = f"replay-long-running-{uuid.uuid4().hex[:6]}"
    async with run_worker([found.agent], models=found.models) as first:
        handle = await first.adk.start(ADK_APP, USER, sid, found.agent.name, "go")
        await handle.wait_for_status("awaiting_input", timeout=30)
    async with run_worker([found.agent], models=found.models, task_queue=first.task_queue):
        [request] = await handle.pending()
        await handle.resume(request.id, {"status": "approved"})
        await handle.result()
    await _save_runs(client, "long_running_restart", handle.workflow_id)


async def _record_compaction(run_worker: WorkerFactory, client: Client) -> None:
    """Events compaction (patched ``events-compaction``): a turn, then a turn whose
    approval is pending when ``adk_compact`` runs; approved, it completes."""
    app = compaction_app()
    sid = f"replay-compaction-{uuid.uuid4().hex[:6]}"
    async with run_worker(
        [app.agent], models=app.models, events_compaction_config=COMPACTION_CONFIG
    ) as rt:
        await (await rt.adk.start(COMPACTION_APP, USER, sid, "payer", "hi")).result()
        handle = await rt.adk.start(COMPACTION_APP, USER, sid, "payer", "pay 5")
        await _answer_confirmation(handle, True)
        await handle.result()
    await _save_runs(client, "compaction", handle.workflow_id)


_TEXTING_POLICIES: dict[str, DoubleTexting] = {
    "texting_enqueue": "enqueue",
    "texting_interrupt": "interrupt",
    "texting_rollback": "rollback",
    "baseline2_texting_enqueue": "enqueue",
}


async def _record_texting(
    run_worker: WorkerFactory, client: Client, gates: Path, name: str
) -> None:
    """``task one`` waits in its slow tool; ``task two`` is sent with the scenario's policy
    (double texting), then both tools are let go; the first run continues as new into it."""
    gates.mkdir(parents=True)
    policy = _TEXTING_POLICIES[name]
    sid = f"replay-{name}-{uuid.uuid4().hex[:6]}"
    with mock.patch.dict(os.environ, {DIR_ENV: str(gates)}):
        async with run_worker([texting_agent()], models=texting_models()) as rt:
            baseline = 2 if name.startswith("baseline2") else BASELINE
            with mock.patch.object(client_module, "BASELINE", baseline):
                first = await rt.adk.start("texting", USER, sid, "tasker", "task one")
            async with asyncio.timeout(30):
                while ("slow_step", "one") not in calls(gates):
                    await asyncio.sleep(0.05)
            second = await rt.adk.start(
                "texting", USER, sid, "tasker", "task two", double_texting=policy
            )
            open_gate(gates, "two")
            open_gate(gates, "one")
            await first.result()
            await second.result()
    await _save_runs(client, name, second.workflow_id)


async def _record_app_queue(client: Client, name: str, own_queues: bool) -> None:
    """A named app's run and an approval through the CLI channel with a principal: started
    on the shared queue (patched ``app-task-queues``), its steps move to the app's own
    queue; started on the app's own queue (``own_queues``), they stay on it."""
    sessions = InMemorySessionService()
    queue = f"replay-{uuid.uuid4().hex[:8]}"
    app = App(agents=[build_weather_agent("scripted:weather")], name=APP_NAME)
    worker = build_worker(client, app, task_queue=queue, stores=Stores(sessions))
    adk = AdkClient(client, task_queue=queue, own_queues=own_queues)
    async with worker:
        async with asyncio.timeout(60):
            while own_queues and await adk.start_queue(APP_NAME) == queue:
                await asyncio.sleep(0.5)
        handle = await _ask(
            adk, f"replay-app-queue-{uuid.uuid4().hex[:6]}", "Buy a report for Oslo"
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True, answered_by="alice", channel="cli")
        await handle.result()
    await _save_runs(client, name, handle.workflow_id)


async def _record_hand_back(client: Client, root: Path) -> None:
    """A run of app ``alpha`` beside a worker of ``evil`` polling alpha's own queue (built
    around the start check): its model step and tool call reached evil and were handed back
    (patched ``hand-back-other-apps-steps``), the first run where both did."""
    queue = f"replay-{uuid.uuid4().hex[:8]}"
    own = app_task_queue(queue, "alpha")
    async with workers(client, root, queue, {"alpha": weather_app("alpha")}):
        evil = UncheckedPlugin(weather_app("evil"), stores=Stores(InMemorySessionService()))
        async with Worker(
            await connect_like(client),
            task_queue=own,
            plugins=[evil],
            identity=worker_identity(weather_app("evil")),
            max_cached_workflows=0,
        ):
            adk = AdkClient(client, task_queue=queue)
            async with asyncio.timeout(60):
                while await adk.start_queue("alpha") != own:
                    await asyncio.sleep(0.5)
            for i in range(40):
                handle = await adk.start(
                    "alpha", USER, f"replay-hb-{i}", "weather_agent", "weather in Paris?"
                )
                await handle.result()
                history = await client.get_workflow_handle(handle.workflow_id).fetch_history()
                text = json.dumps(history.to_json_dict())
                if "UnknownAppError" in text and text.count("TIMER_STARTED") >= 2:
                    break
    await _save_runs(client, "hand_back_app_queue", handle.workflow_id)


async def _record_unnamed(client: Client, root: Path) -> None:
    """A run of app ``foo``, served by an unnamed app's worker beside a named app's on one
    queue: its steps move to the unnamed apps' queue (``any_app_queue`` or a route)."""
    queue = f"replay-{uuid.uuid4().hex[:8]}"
    apps = {"named": weather_app("named"), "unnamed": weather_app(None)}
    async with workers(client, root, queue, apps):
        await polled(client, any_app_task_queue(queue), app_task_queue(queue, "named"))
        handle = await AdkClient(client, task_queue=queue).start(
            "foo", USER, "replay-unnamed", "weather_agent", "weather in Paris?"
        )
        await handle.result()
    await _save_runs(client, "unnamed_any_app_queue", handle.workflow_id)


async def _record_token_budget(run_worker: WorkerFactory, client: Client) -> None:
    """A session budget reached at the third model step: the run waits, a grant answers,
    it hands over, and the next budget request is refused."""
    priced = priced_agent(calls=4)
    sid = f"replay-budget-{uuid.uuid4().hex[:6]}"
    budgets = TokenBudgets(session=200)
    async with run_worker([priced.agent], models=priced.models, token_budgets=budgets) as rt:
        handle = await rt.adk.start(
            ADK_APP, USER, sid, "assistant", "count", continue_as_new_after_events=4
        )
        for allow in (100, 0):
            await handle.wait_for_status("awaiting_input", timeout=30)
            [request] = await handle.pending()
            await handle.resume(request.id, {"allow": allow})
        await handle.result()
    await _save_runs(client, "token_budget_pause", handle.workflow_id)


async def _record_crash(temporal_client: Client, dev_server: DevServer, tmp_path: Path) -> None:
    deployment = Deployment(dev_server.address, "replay-crash", tmp_path / "data")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    with worker_process(deployment, "artifact.after_save") as first:
        handle = await adk.start(
            APP_NAME,
            USER,
            f"replay-crash-{uuid.uuid4().hex[:6]}",
            "weather_agent",
            "Buy a weather report for Oslo",
            tool_timeout_seconds=3,
        )
        await _answer_confirmation(handle, True)
        assert died_by_sigkill(first)
    with worker_process(deployment):
        await handle.result()
    await _save_runs(temporal_client, "crash_recovered", handle.workflow_id)
