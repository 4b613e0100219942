"""A long graph continues as new between nodes and ends with ADK's outcome; ``show`` and the
console's session page show the graph and where each node stands, from the memo alone; an
LLM node's tool approval is a durable pause answered from the CLI."""

from __future__ import annotations

import json
import subprocess
import uuid

import httpx2 as httpx
import pytest
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.audit import audit_entries
from adk_temporal.client import InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey
from adk_temporal.tools import FunctionTool
from adk_temporal.web.auth import ALL_APPS, TokenBook
from adk_temporal.web.cookies import COOKIE
from adk_temporal.web.gateway import Gateway
from adk_temporal.web.server import create_app
from adk_temporal.workflow import START, Workflow
from tests.adk_models import call, queue_registry
from tests.commands import run_cli
from tests.graphs.adk_env import run_on_adk
from tests.graphs.compare import assert_same_run
from tests.graphs.ours import KEY, MODELS, build, recorded

from .conftest import Runtime, WorkerFactory

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("graph_session_closed")]

TOKEN = "t" * 24


async def _runs_of(client: Client, workflow_id: str) -> int:
    """How many runs the workflow has had (each continue-as-new adds one)."""
    return len([w async for w in client.list_workflows(f"WorkflowId = '{workflow_id}'")])


async def _show(
    dev_server: DevServer, workflow_id: str, *args: str
) -> subprocess.CompletedProcess[str]:
    shown = await run_cli(dev_server.address, "show", workflow_id, *args)
    assert shown.returncode == 0, shown.stderr
    return shown


async def _console_page(rt: Runtime, key: SessionKey) -> str:
    """The session page of the console, served in-process against the same Temporal."""
    served = Gateway(adk=rt.adk, sessions=rt.sessions)
    app = create_app(served, TokenBook.parse(f"{TOKEN} {key.app_name}", "tokens"), console=True)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        http.cookies.set(COOKIE, app.state.console_sessions.sign_in(frozenset({ALL_APPS})))
        url = f"/console/apps/{key.app_name}/users/{key.user_id}/sessions/{key.session_id}"
        page = await http.get(url)
    assert page.status_code == 200, page.text
    return page.text


async def _waiting_in_a_later_run(rt: Runtime, handle: InvocationHandle) -> None:
    await handle.wait_for_status("awaiting_input", timeout=60)
    [request] = await handle.pending()
    assert request.id == "q-ok"


async def test_a_graph_continues_as_new_with_a_join_and_a_pause_and_is_seen(
    run_worker: WorkerFactory, temporal_client: Client, dev_server: DevServer
) -> None:
    """A graph handed over between nodes and again while one branch of a join waits for an
    answer (the other done) keeps the pause open in the next run; `show` (no worker
    running) and the console list each node's status and draw the graph; answered, the graph
    stores what google-adk stores."""
    built = build("pause_in_branch")
    # A session of its own: the run count below is of this workflow id alone.
    key = SessionKey(KEY.app_name, KEY.user_id, f"s-{uuid.uuid4().hex[:8]}")
    async with run_worker([built.workflow]) as rt:
        queue = rt.task_queue
        handle = await rt.adk.start(
            key.app_name,
            key.user_id,
            key.session_id,
            built.workflow.name,
            "go",
            continue_as_new_after_events=5,
        )
        await _waiting_in_a_later_run(rt, handle)
        page = await _console_page(rt, key)
    # Handed over after split (between nodes) and again while approve waits.
    assert await _runs_of(temporal_client, handle.workflow_id) == 3
    # No worker runs now: everything below is what the run published.
    shown = json.loads((await _show(dev_server, handle.workflow_id, "--json")).stdout)
    nodes = {n["name"]: n["status"] for n in shown["graph"]["nodes"]}
    assert nodes == {
        "split": "done",
        "approve": "waiting",
        "compute": "done",
        "gate": "pending",
        "finish": "pending",
    }
    told = (await _show(dev_server, handle.workflow_id)).stdout
    assert "graph    branching: 2 done, 1 waiting, 2 pending" in told, told
    assert "node     approve  waiting  (function)" in told, told
    drawn = (await _show(dev_server, handle.workflow_id, "--mermaid")).stdout
    assert drawn.startswith("flowchart TD") and "class approve waiting" in drawn
    assert "gate{{gate}}" in drawn and "class gate" not in drawn
    assert (
        '<tr data-node="approve"><td>approve</td><td>function</td><td class="node-waiting">' in page
    )
    async with run_worker([built.workflow], task_queue=queue) as rt:
        await handle.resume("q-ok", {"result": True}, answered_by="ops-ada")
        result = await handle.result()
        ours = await recorded(rt.sessions, None, key)
        [entry] = audit_entries((await rt.sessions.get(key)).events)
    assert result.status == "completed"
    # And once more after gate: the run that took the answer ran a step.
    assert await _runs_of(temporal_client, handle.workflow_id) == 4
    assert_same_run(ours, run_on_adk("pause_in_branch"), full_order=False)
    # Who answered is kept beside ADK's payload, for the audit trail.
    assert (entry.request_id, entry.answered_by, entry.channel) == ("q-ok", "ops-ada", "update")
    finished = json.loads((await _show(dev_server, handle.workflow_id, "--json")).stdout)
    assert {n["status"] for n in finished["graph"]["nodes"]} == {"done"}


async def test_show_of_a_run_that_is_no_graph_has_no_graph(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """`show --mermaid` of an invocation of an LLM agent says there is no graph, exit 1;
    `show --json` lists none."""
    built = build("llm_tool")
    async with run_worker([built.workflow], models=MODELS) as rt:
        handle = await rt.adk.start(KEY.app_name, KEY.user_id, "s-plain", "forecaster", "oslo")
        assert (await handle.result()).status == "completed"
    shown = json.loads((await _show(dev_server, handle.workflow_id, "--json")).stdout)
    assert shown["graph"] is None
    refused = await run_cli(dev_server.address, "show", handle.workflow_id, "--mermaid")
    assert refused.returncode == 1 and "runs no graph workflow" in refused.stderr


async def test_a_tool_approval_inside_an_llm_node_waits_and_is_answered_from_the_cli(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """An LLM agent node whose tool needs approval pauses the graph through a worker: the
    request is listed, `show` names the node waiting, `adk-temporal confirm` approves it,
    and the agent's answer flows to the next node."""
    paid: list[int] = []

    def pay(amount: int) -> dict[str, int]:
        """Pay an amount."""
        paid.append(amount)
        return {"paid": amount}

    models, _ = queue_registry("queue", [call("pay", amount=5), "paid 5"])
    cashier = Agent("cashier", "queue", tools=[FunctionTool(pay, require_confirmation=True)])

    def receipt(node_input: str) -> str:
        return f"receipt: {node_input}"

    graph = Workflow(name="paying", edges=[(START, cashier, receipt)])
    async with run_worker([graph], models=models) as rt:
        handle = await rt.adk.start(KEY.app_name, KEY.user_id, "s-paying", "paying", "pay")
        await handle.wait_for_status("awaiting_confirmation", timeout=60)
        [request] = await handle.pending()
        assert (request.tool, request.agent, paid) == ("pay", "cashier", [])
        shown = json.loads((await _show(dev_server, handle.workflow_id, "--json")).stdout)
        assert {n["name"]: n["status"] for n in shown["graph"]["nodes"]} == {
            "cashier": "waiting",
            "receipt": "pending",
        }
        confirmed = await run_cli(
            dev_server.address,
            "confirm",
            handle.workflow_id,
            request.id,
            "--approve",
            "--task-queue",
            rt.task_queue,
        )
        assert confirmed.returncode == 0, confirmed.stderr
        result = await handle.result()
    assert (result.status, result.final_text, paid) == ("completed", "receipt: paid 5", [5])
