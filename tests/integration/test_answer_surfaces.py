"""One answer desk behind every surface: the JSON API, the CLI, the console, answer links
and ``chat`` refuse the same answer for the same reason, with who answered first and when
(issue 42, item 1).

Four requests, each answered on every surface: one answered already (through the API, by
the weather token's principal), one Temporal holds an answer for (a signal sent while no
worker ran), one whose run was terminated while it was open, and an id no run opened.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from adk_temporal.answers import AnswerRefusedError
from adk_temporal.cli.chat import _DeskAnswers
from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.signing import AnswerLink, sign_link
from adk_temporal.web.auth import TokenBook

from ..commands import run_cli
from .gateway import LINK_SECRET, TOKEN, Gateway, gateway_process
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

RUNS = "/v1/apps/weather/runs"
PRINCIPAL = TokenBook().principal(TOKEN)
"""How the gateway records the weather token's answers (its principal)."""


@dataclass(frozen=True)
class Target:
    """A request to answer, and what every surface must say of it."""

    workflow_id: str
    session: str
    request_id: str
    reason: str
    earlier_by: str | None


@dataclass(frozen=True)
class Said:
    """What one surface said: the reason, and who answered first (and when) if it named one."""

    reason: str
    earlier_by: str | None
    earlier_at: str | None


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory of the module's worker and gateway."""
    return Deployment(dev_server.address, "answer-surfaces", tmp_path_factory.mktemp("surfaces"))


@pytest.fixture(scope="module")
def gateway(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One gateway with the console for the module."""
    with gateway_process(deployment, tmp_path_factory.mktemp("gw"), console=True) as running:
        yield running


async def _call(gateway: Gateway, method: str, path: str, body: Any = None) -> Any:
    return await asyncio.to_thread(gateway.call, method, path, body)


async def _paused(gateway: Gateway) -> tuple[str, str, str]:
    """A new run waiting for an approval: its workflow id, session path and request id."""
    body = {
        "agent": "weather_agent",
        "user_id": "u-surfaces",
        "message": "Buy a weather report for Oslo",
    }
    created = (await _call(gateway, "POST", RUNS, body)).json
    path = created["links"]["self"]
    async with asyncio.timeout(90):
        while not (shown := (await _call(gateway, "GET", path)).json)["waiting_for"]:
            await asyncio.sleep(0.2)
    return created["workflow_id"], path, shown["waiting_for"][0]["id"]


async def _targets(gateway: Gateway, deployment: Deployment, adk: AdkClient) -> list[Target]:
    """The four requests, set up through a worker that is stopped before the held one."""
    with worker_process(deployment):
        wid, path, rid = await _paused(gateway)
        applied = await _call(gateway, "POST", f"{path}/confirm", _approve(rid))
        assert applied.status == 200, applied.text
        answered = Target(wid, path, rid, "already_answered", PRINCIPAL)
        wid, path, rid = await _paused(gateway)
        await adk.client.get_workflow_handle(wid).terminate("closed for the test")
        closed = Target(wid, path, rid, "run_closed", None)
        wid, path, rid = await _paused(gateway)
        unknown = Target(wid, path, "adk-nobody-opened-this", "not_open", None)
        wid, path, rid = await _paused(gateway)
    held_reply = await _call(gateway, "POST", f"{path}/confirm", _approve(rid))
    assert held_reply.status == 202, held_reply.text
    held = Target(wid, path, rid, "held", PRINCIPAL)
    return [answered, held, closed, unknown]


def _approve(request_id: str) -> dict[str, Any]:
    return {"confirmation_id": request_id, "confirmed": True}


def _said(reason: str, earlier: dict[str, Any] | None) -> Said:
    return Said(
        reason,
        earlier["answered_by"] if earlier else None,
        earlier["at"] if earlier else None,
    )


async def _json_api(gateway: Gateway, target: Target) -> Said:
    reply = await _call(gateway, "POST", f"{target.session}/confirm", _approve(target.request_id))
    assert reply.status in (404, 409), reply.text
    error = reply.json["error"]
    return _said(error["reason"], error.get("earlier"))


async def _cli(deployment: Deployment, target: Target) -> Said:
    done = await run_cli(
        deployment.address,
        "confirm",
        target.workflow_id,
        target.request_id,
        "--reject",
        "--wait",
        "1",
        "--json",
        "--task-queue",
        deployment.task_queue,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"[{target.reason}]" in done.stderr
    shown = json.loads(done.stdout)
    return _said(shown["reason"], shown["earlier"])


async def _link(gateway: Gateway, target: Target) -> Said:
    link = AnswerLink(
        workflow_id=target.workflow_id,
        invocation_id="e-unknown",
        request_id=target.request_id,
        decision="reject",
        call_digest="",
        expires_at=int(time.time()) + 3600,
    )
    token = sign_link(LINK_SECRET.encode(), link)
    reply = await asyncio.to_thread(gateway.call, "POST", f"/v1/links/{token}", None, token=None)
    assert reply.status in (404, 409), reply.text
    error = reply.json["error"]
    return _said(error["reason"], error.get("earlier"))


async def _chat(adk: AdkClient, target: Target) -> Said:
    with pytest.raises(AnswerRefusedError) as refused:
        await _DeskAnswers(adk, target.workflow_id).confirm(target.request_id, False)
    earlier = refused.value.refusal.earlier
    return _said(refused.value.refusal.reason, earlier.as_json() if earlier else None)


def _console(gateway: Gateway, target: Target) -> tuple[str, str]:
    """Sign in to the console with the weather token and post the approval form: the
    refusal page's text and the page's status line."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def csrf(page: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert found, page
        return found.group(1)

    def post(path: str, fields: dict[str, str]) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode()
        try:
            with opener.open(gateway.base + path, data=data, timeout=60) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    with opener.open(gateway.base + "/console/sign-in", timeout=60) as page:
        form = page.read().decode()
    status, home = post("/console/sign-in", {"csrf": csrf(form), "token": TOKEN})
    assert status == 200, home
    path = "/console" + target.session.removeprefix("/v1") + "/confirm"
    fields = {"csrf": csrf(home), "confirmation_id": target.request_id, "decision": "approve"}
    status, refused = post(path, fields)
    assert status in (404, 409), refused
    return refused, str(status)


async def test_every_surface_gives_the_same_reason_and_who_answered_first(
    gateway: Gateway, deployment: Deployment
) -> None:
    """For an answered, a held, a closed and an unknown request, the JSON API, the CLI,
    answer links, chat and the console each refuse with the desk's reason; where someone
    answered first they name the same principal and the same time."""
    adk = await AdkClient.connect(deployment.address, task_queue=deployment.task_queue)
    targets = await _targets(gateway, deployment, adk)
    for target in targets:
        said = {
            "api": await _json_api(gateway, target),
            "cli": await _cli(deployment, target),
            "link": await _link(gateway, target),
            "chat": await _chat(adk, target),
        }
        reasons = {surface: s.reason for surface, s in said.items()}
        assert set(reasons.values()) == {target.reason}, (target, reasons)
        earlier = {(s.earlier_by, s.earlier_at) for s in said.values()}
        assert len(earlier) == 1, (target, said)
        [(by, at)] = earlier
        assert by == target.earlier_by, (target, said)
        assert (at is None) == (target.earlier_by is None)
        page, status = await asyncio.to_thread(_console, gateway, target)
        assert f": {target.reason})" in page or f"({target.reason})" in page, (target, page)
        if by is not None and at is not None:
            shown_at = at.replace("T", " ")[:19]
            assert by in page and shown_at in page, (target, page)
        assert status in ("404", "409")
