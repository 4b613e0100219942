"""The gateway's schedules API and console page, its ``double_texting`` on runs (queue,
withdraw, interrupt), and ADK's ``/run`` with ``doubleTexting``, against worker processes."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_temporal.devserver import DevServer

from .. import adk_web_app
from .gateway import OTHER_TOKEN, Gateway, Reply, gateway_process
from .test_gateway_limits import _raw, _sign_in
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

APPS = "/v1/apps/weather"
USER = "u-gw-sched"


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory."""
    return Deployment(dev_server.address, f"gw-sched-{uuid.uuid4().hex[:8]}", tmp_path / "data")


@pytest.fixture
def gateway(deployment: Deployment, tmp_path: Path) -> Iterator[Gateway]:
    """The gateway with its console, and a worker of the examples."""
    with worker_process(deployment), gateway_process(deployment, tmp_path, console=True) as gw:
        yield gw


async def _call(gateway: Gateway, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    return await asyncio.to_thread(gateway.call, method, path, body, **kw)


async def _until(probe: Callable[[], Awaitable[Any]], timeout: float = 90.0) -> Any:
    """Poll ``probe`` until it returns something truthy."""
    async with asyncio.timeout(timeout):
        while not (found := await probe()):
            await asyncio.sleep(0.2)
    return found


async def test_schedules_api_and_console_page(gateway: Gateway) -> None:
    """Create (paused), list, describe, trigger, list its invocations, pause with a note,
    show on the console page, delete; another app's token sees none of it; a schedule
    with neither cron nor interval is refused naming the problem."""
    sid = f"gw-{uuid.uuid4().hex[:8]}"
    body = {
        "schedule_id": sid,
        "user_id": USER,
        "agent": "weather_agent",
        "message": "What's the weather in Hangzhou?",
        "cron": ["0 6 * * *"],
        "paused": True,
    }
    created = await _call(gateway, "POST", f"{APPS}/schedules", body)
    assert created.status == 201, created.text
    assert created.json["schedule"]["app_name"] == "weather" and created.json["paused"]
    bad = await _call(
        gateway, "POST", f"{APPS}/schedules", {**body, "cron": [], "schedule_id": "x"}
    )
    assert (bad.status, bad.json["error"]["type"]) == (422, "invalid_schedule")
    assert "cron expression or an interval" in bad.json["error"]["message"]
    hidden = await _call(gateway, "GET", f"{APPS}/schedules/{sid}", token=OTHER_TOKEN)
    assert hidden.status == 403
    listed = await _call(gateway, "GET", f"{APPS}/schedules")
    assert sid in [s["schedule"]["schedule_id"] for s in listed.json["schedules"]]
    fired = await _call(gateway, "POST", f"{APPS}/schedules/{sid}/trigger", {})
    assert fired.status == 202, fired.text

    async def completed() -> Any:
        runs = (await _call(gateway, "GET", f"{APPS}/schedules/{sid}/invocations")).json["runs"]
        return [r for r in runs if r["status"] == "completed"]

    [run] = await _until(completed)
    assert run["session_id"].startswith(f"{sid}-")
    paused = await _call(gateway, "POST", f"{APPS}/schedules/{sid}/pause", {"note": "holiday"})
    assert paused.json["note"] == "holiday"
    cookie = await asyncio.to_thread(_sign_in, gateway, "t-weather-0123456789abcdef")
    page = await asyncio.to_thread(
        _raw,
        gateway,
        "GET",
        "/console/apps/weather/schedules",
        headers={"Cookie": f"adk_console={cookie}"},
    )
    assert page.status == 200 and sid in page.text and "paused: holiday" in page.text
    assert re.search(rf'action="/console/apps/weather/schedules/{sid}/trigger"', page.text)
    deleted = await _call(gateway, "DELETE", f"{APPS}/schedules/{sid}")
    assert deleted.json == {"schedule_id": sid, "done": "deleted"}
    gone = await _call(gateway, "GET", f"{APPS}/schedules/{sid}")
    assert (gone.status, gone.json["error"]["type"]) == (404, "schedule_not_found")


async def test_runs_take_a_double_texting_policy_queue_withdraw_interrupt(
    gateway: Gateway,
) -> None:
    """A second message to a session waiting for approval: refused by default (409), queued
    with ``enqueue`` (202, shown, withdrawn), and with ``interrupt`` it stops the waiting
    invocation and runs."""
    session = f"s-{uuid.uuid4().hex[:8]}"
    start = {"agent": "weather_agent", "user_id": USER, "session_id": session}
    first = await _call(
        gateway, "POST", f"{APPS}/runs", {**start, "message": "Buy a weather report for Oslo"}
    )
    assert first.status == 201, first.text
    path = first.json["links"]["self"]

    async def waiting() -> Any:
        shown = (await _call(gateway, "GET", path)).json
        return shown["status"] == "awaiting_confirmation"

    await _until(waiting)
    weather = {**start, "message": "What's the weather in Hangzhou?"}
    busy = await _call(gateway, "POST", f"{APPS}/runs", weather)
    assert (busy.status, busy.json["error"]["type"]) == (409, "session_busy")
    queued = await _call(gateway, "POST", f"{APPS}/runs", {**weather, "double_texting": "enqueue"})
    assert (queued.status, queued.json["status"]) == (202, "queued"), queued.text
    [listed] = (await _call(gateway, "GET", path)).json["queued"]
    assert listed["invocation_id"] == queued.json["invocation_id"]
    withdrawn = await _call(
        gateway, "POST", f"{path}/withdraw", {"invocation_id": listed["invocation_id"]}
    )
    assert withdrawn.status == 200 and withdrawn.json["preview"] == weather["message"]
    again = await _call(
        gateway, "POST", f"{path}/withdraw", {"invocation_id": listed["invocation_id"]}
    )
    assert (again.status, again.json["error"]["type"]) == (404, "queued_message_not_found")
    interrupting = await _call(
        gateway, "POST", f"{APPS}/runs", {**weather, "double_texting": "interrupt"}
    )
    assert interrupting.status == 202, interrupting.text

    async def done() -> Any:
        shown = (await _call(gateway, "GET", path)).json
        return shown["status"] == "completed" and not shown["queued"] and shown

    shown = await _until(done)
    assert shown["waiting_for"] == []


async def test_adk_run_takes_double_texting(deployment: Deployment, tmp_path: Path) -> None:
    """ADK's ``/run`` on a session waiting for approval: refused (409) without a policy;
    with ``doubleTexting: interrupt`` the waiting invocation stops and the reply holds the
    new message's events."""
    app = "tests.adk_web_app:app"
    env = {adk_web_app.RUNS_ENV: str(tmp_path / "runs.txt")}
    with (
        worker_process(deployment, app=app, env=env),
        gateway_process(deployment, tmp_path, app=app, args=["--adk-dev"]) as gw,
    ):
        sessions = f"/apps/{adk_web_app.APP_NAME}/users/u/sessions"
        created = await _call(gw, "POST", sessions, {}, token=None)
        session_id = created.json["id"]
        run = {"appName": adk_web_app.APP_NAME, "userId": "u", "sessionId": session_id}

        def message(text: str) -> dict[str, Any]:
            return {"role": "user", "parts": [{"text": text}]}

        paused = await _call(
            gw, "POST", "/run", {**run, "newMessage": message("pay 5")}, token=None
        )
        assert paused.status == 200, paused.text
        busy = await _call(
            gw, "POST", "/run", {**run, "newMessage": message("weather in Rome")}, token=None
        )
        assert busy.status == 409, busy.text
        interrupting = {
            **run,
            "newMessage": message("weather in Rome"),
            "doubleTexting": "interrupt",
        }
        reply = await _call(gw, "POST", "/run", interrupting, token=None)
        assert reply.status == 200, reply.text
        calls = [
            p["functionCall"]["name"]
            for e in reply.json
            for p in e.get("content", {}).get("parts", [])
            if "functionCall" in p
        ]
        assert calls == ["get_weather"]
    assert not (tmp_path / "runs.txt").exists()
