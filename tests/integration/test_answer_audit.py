"""Every answer records who gave it, through which channel and when (the run's time): in the
session's reply event, and in the audit listing of the CLI and the gateway."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.audit import AuditEntry, audit_entries
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey

from ..commands import adk_command, offline_env
from .conftest import Runtime, WorkerFactory
from .gateway import TOKEN, Gateway, gateway_process
from .test_web_api import call, start, status_is
from .workers import Deployment, worker_process

USER = "u-audit"


async def _purchase(rt: Runtime, session_id: str) -> tuple[str, str]:
    """A paid report waiting for approval: its workflow id and confirmation id."""
    handle = await rt.adk.start(
        APP_NAME, USER, session_id, "weather_agent", "Buy a weather report for Oslo"
    )
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    [request] = await handle.pending()
    return handle.workflow_id, request.id


async def _audit(rt: Runtime, session_id: str) -> list[AuditEntry]:
    session = await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))
    return audit_entries(session.events)


async def test_a_raw_signal_is_recorded_as_signal_at_the_runs_time(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """An old-shaped ``adk_confirm`` signal (no who, no channel) is accepted and recorded as
    channel "signal"; a time the sender put in is replaced by the run's."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        workflow_id, request_id = await _purchase(rt, session_id)
        handle = temporal_client.get_workflow_handle(workflow_id)
        await handle.signal(
            "adk_confirm", {"confirmation_id": request_id, "confirmed": True, "answered_at": 1.0}
        )
        assert (await rt.adk.handle(workflow_id).result()).status == "completed"
        [entry] = await _audit(rt, session_id)
    assert (entry.decision, entry.channel, entry.answered_by) == ("approved", "signal", None)
    assert entry.tool == "buy_weather_report"
    assert entry.answered_at is not None and entry.answered_at > 1.0
    assert entry.call_digest


async def test_a_client_answer_records_its_principal_and_the_cli_lists_it(
    run_worker: WorkerFactory, tmp_path: Path, dev_server: DevServer
) -> None:
    """A rejection sent by the client as ``alice`` through ``cli`` is recorded so; an
    update naming no channel is ``update``; ``adk-temporal audit`` lists both."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        workflow_id, request_id = await _purchase(rt, session_id)
        await rt.adk.handle(workflow_id).confirm(
            request_id, False, answered_by="alice", channel="cli"
        )
        await rt.adk.handle(workflow_id).result()
        workflow_id, request_id = await _purchase(rt, session_id)
        await rt.adk.handle(workflow_id).confirm(request_id, True)
        await rt.adk.handle(workflow_id).result()
        first, second = await _audit(rt, session_id)
    assert (first.decision, first.answered_by, first.channel) == ("rejected", "alice", "cli")
    assert (second.decision, second.answered_by, second.channel) == ("approved", None, "update")
    listed = await asyncio.to_thread(
        subprocess.run,
        [*adk_command(), "audit", "--app", APP_NAME, "--user", USER, "--session", session_id,
         "--data-dir", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)["entries"]
    assert [(e["decision"], e["answered_by"], e["channel"]) for e in entries] == [
        ("rejected", "alice", "cli"),
        ("approved", None, "update"),
    ]


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory the worker and the gateway share."""
    return Deployment(dev_server.address, "audit-api", tmp_path_factory.mktemp("audit-api"))


@pytest.fixture(scope="module")
def gateway(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One gateway process for the module."""
    with gateway_process(deployment, tmp_path_factory.mktemp("gateway")) as running:
        yield running


async def test_the_gateway_records_the_token_never_the_principal_the_body_claims(
    gateway: Gateway, deployment: Deployment
) -> None:
    """An approval over the API whose body claims ``answered_by: mallory`` through the
    console is recorded as the bearer token's principal through ``gateway``; the audit
    endpoint lists it with the call digest."""
    with worker_process(deployment):
        path = await start(gateway, "Buy a weather report for Lima")
        await status_is(gateway, path, "awaiting_confirmation")
        [request] = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        body = {
            "confirmation_id": request["id"],
            "confirmed": True,
            "answered_by": "mallory",
            "channel": "console",
        }
        answered = await call(gateway, "POST", f"{path}/confirm", body)
        assert answered.status in (200, 202), answered.text
        assert (await status_is(gateway, path, "completed", "failed"))["status"] == "completed"
    listed = await call(gateway, "GET", f"{path}/audit")
    assert listed.status == 200, listed.text
    [entry] = listed.json["entries"]
    assert entry["answered_by"] == "token:" + hashlib.sha256(TOKEN.encode()).hexdigest()
    assert (entry["channel"], entry["decision"]) == ("gateway", "approved")
    assert entry["call_digest"] == request["call_digest"]
    assert entry["answered_at"] is not None


async def test_the_gateway_refuses_edits_to_a_tool_not_declared_editable(
    gateway: Gateway, deployment: Deployment
) -> None:
    """An approval over the API with ``edited_args`` for the paid report (not editable) is
    refused with 409 ``edit_not_allowed``, and the request stays open."""
    with worker_process(deployment):
        path = await start(gateway, "Buy a weather report for Quito")
        await status_is(gateway, path, "awaiting_confirmation")
        [request] = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        body = {"confirmation_id": request["id"], "confirmed": True, "edited_args": {"city": "x"}}
        refused = await call(gateway, "POST", f"{path}/confirm", body)
        assert refused.status == 409, refused.text
        assert refused.json["error"]["type"] == "edit_not_allowed"
        still = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        assert [r["id"] for r in still] == [request["id"]]
        await call(gateway, "POST", f"{path}/cancel")
