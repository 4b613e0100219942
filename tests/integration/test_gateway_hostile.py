"""The gateway as a hostile caller uses it (issue 25): the real ``adk-temporal web`` process,
the real dev server, worker processes that come and go."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import pytest
from temporalio.client import Client

from adk_temporal.answers import read_answers
from adk_temporal.client import AdkClient
from adk_temporal.codec import EncryptionCodec
from adk_temporal.devserver import DevServer
from adk_temporal.plugin import adk_data_converter
from adk_temporal.signing import AnswerLink, sign_link

from ..commands import new_key_file, run_cli
from .gateway import LINK_SECRET, OTHER_TOKEN, Gateway, Reply, gateway_process
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

RUNS = "/v1/apps/weather/runs"
OTHER_RUNS = "/v1/apps/other/runs"
INJECTION = 'x\\\' OR AdkApp = "other" -- '
"""Closes the literal with ``\\'``, widens the query to app ``other``, comments out the rest."""


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory the workers and the gateway share."""
    return Deployment(dev_server.address, "gateway-hostile", tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def gateway(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One gateway process for the module."""
    with gateway_process(deployment, tmp_path_factory.mktemp("gateway")) as running:
        yield running


async def call(gateway: Gateway, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    return await asyncio.to_thread(gateway.call, method, path, body, **kw)


async def start(
    gateway: Gateway, message: str, *, runs: str = RUNS, user: str = "u-hostile", **kw: Any
) -> dict[str, Any]:
    """Start a run; return what the gateway says of it."""
    body = {"agent": "weather_agent", "user_id": user, "message": message}
    reply = await call(gateway, "POST", runs, body, **kw)
    assert reply.status == 201, reply.text
    created: dict[str, Any] = reply.json
    return created


async def status_is(gateway: Gateway, path: str, *statuses: str) -> dict[str, Any]:
    """Poll the run until its status is one of ``statuses``."""
    async with asyncio.timeout(60):
        while (shown := (await call(gateway, "GET", path)).json)["status"] not in statuses:
            await asyncio.sleep(0.2)
    found: dict[str, Any] = shown
    return found


async def shows(gateway: Gateway, runs: str, workflow_id: str, **kw: Any) -> None:
    """Poll the list of ``runs`` until it shows ``workflow_id``."""
    async with asyncio.timeout(60):
        while workflow_id not in {
            r["workflow_id"] for r in (await call(gateway, "GET", runs, **kw)).json["runs"]
        }:
            await asyncio.sleep(0.2)


async def test_a_hostile_run_filter_never_lists_another_apps_runs(
    gateway: Gateway, dev_server: DevServer
) -> None:
    """`user_id=x\\' OR AdkApp = "other" -- ` (and the same as session_id) is a 400 naming
    the field for a token scoped to one app; a filter with a quote in it still finds exactly
    its run; an unfiltered list shows only the token's app."""
    other = await start(gateway, "hi", runs=OTHER_RUNS, token=OTHER_TOKEN)
    mine = await start(gateway, "hi", user="o'brien")
    client = await Client.connect(dev_server.address)
    try:
        # Visibility lags a start: both runs must be listed before the probes mean anything.
        await shows(gateway, OTHER_RUNS, other["workflow_id"], token=OTHER_TOKEN)
        await shows(gateway, RUNS, mine["workflow_id"])
        for field in ("user_id", "session_id"):
            reply = await call(gateway, "GET", f"{RUNS}?{field}={quote(INJECTION)}")
            assert reply.status == 400, reply.text
            assert reply.json["error"]["type"] == "invalid_query"
            assert field in reply.json["error"]["message"]
        quoted = await call(gateway, "GET", f"{RUNS}?user_id={quote(mine['user_id'])}")
        assert [r["workflow_id"] for r in quoted.json["runs"]] == [mine["workflow_id"]]
        listed = (await call(gateway, "GET", f"{RUNS}?limit=1000")).json["runs"]
        assert mine["workflow_id"] in {r["workflow_id"] for r in listed}
        assert not [r for r in listed if not r["workflow_id"].startswith("adk/weather/")]
        refused = await run_cli(dev_server.address, "list", "--user", INJECTION, "--json")
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "--user" in refused.stderr
    finally:
        for run in (other, mine):
            await client.get_workflow_handle(run["workflow_id"]).terminate("the test is over")


BODIES = {
    "nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
    "a 5,000-digit integer": "9" * 5000,
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e999": "1e999",
}


async def test_bodies_that_are_not_strict_bounded_json_are_a_400(gateway: Gateway) -> None:
    """Deep nesting, a 5,000-digit integer, NaN, the infinities and a number overflowing to
    infinity are refused as invalid JSON, on every JSON route, never a 500 or an answer."""
    session = "/v1/apps/weather/users/u-hostile/sessions/never"
    for what, raw in BODIES.items():
        confirm = f'{{"confirmation_id": "adk-1", "confirmed": true, "payload": {raw}}}'
        resume = f'{{"interrupt_id": "call-1/input-1", "input": {raw}}}'
        started = f'{{"agent": "weather_agent", "user_id": "u", "message": "m", "x": {raw}}}'
        for path, body in (
            (f"{session}/confirm", confirm),
            (f"{session}/resume", resume),
            (RUNS, started),
        ):
            reply = await call(gateway, "POST", path, raw=body.encode())
            assert (reply.status, reply.json["error"]["type"]) == (400, "invalid_json"), (
                what,
                path,
                reply.text,
            )
    assert "unexpected failure" not in gateway.log.read_text()


async def test_without_a_worker_a_second_answer_to_one_request_is_refused(
    gateway: Gateway, deployment: Deployment, dev_server: DevServer
) -> None:
    """No worker runs: the first link is accepted (202); reusing it, the opposite link, a
    plain conflicting confirm and the CLI's confirm are refused (409) as an answer already on
    its way; the next worker applies only the first, charging once."""
    client = await Client.connect(dev_server.address, data_converter=adk_data_converter())
    adk = AdkClient(client, task_queue=deployment.task_queue)
    charged = len(deployment.payments.charges())
    with worker_process(deployment):
        created = await start(gateway, "Buy a weather report for Quito")
        path = created["links"]["self"]
        await status_is(gateway, path, "awaiting_confirmation")
        [request] = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        invocation = (await adk.handle(created["workflow_id"]).status()).invocation_id

    def link(decision: Literal["approve", "reject"]) -> str:
        signed = AnswerLink(
            workflow_id=created["workflow_id"],
            invocation_id=invocation,
            request_id=request["id"],
            decision=decision,
            call_digest=request["call_digest"],
            expires_at=int(time.time()) + 3600,
        )
        return f"/v1/links/{sign_link(LINK_SECRET.encode(), signed)}"

    first = await call(gateway, "POST", link("approve"), token=None)
    assert (first.status, first.json["outcome"]) == (202, "accepted"), first.text
    later = {
        "the same link": await call(gateway, "POST", link("approve"), token=None),
        "the opposite link": await call(gateway, "POST", link("reject"), token=None),
        "a conflicting confirm": await call(
            gateway,
            "POST",
            f"{path}/confirm",
            {"confirmation_id": request["id"], "confirmed": False},
        ),
    }
    for what, reply in later.items():
        assert reply.status == 409, (what, reply.text)
        assert reply.json["error"]["type"] == "answer_pending", what
        assert reply.json["error"]["reason"] == "held", what
        assert request["id"] in reply.json["error"]["message"], what
        assert "on its way" in reply.json["error"]["message"], what
    by_cli = await run_cli(
        dev_server.address, "confirm", created["workflow_id"], request["id"], "--reject"
    )
    assert by_cli.returncode == 1, by_cli.stdout + by_cli.stderr
    assert "on its way" in by_cli.stderr

    with worker_process(deployment):
        done = await status_is(gateway, path, "completed", "failed")
    assert done["status"] == "completed"
    assert len(deployment.payments.charges()) == charged + 1


async def test_cancelling_a_closed_run_names_its_state(
    gateway: Gateway, deployment: Deployment
) -> None:
    """The cancel endpoint refuses a completed and an already-cancelled run with 409 naming
    the state the run is in."""
    with worker_process(deployment):
        done = await start(gateway, "What is the weather in Lima?")
        await status_is(gateway, done["links"]["self"], "completed")
        waiting = await start(gateway, "Buy a weather report for Lima")
        await status_is(gateway, waiting["links"]["self"], "awaiting_confirmation")
        cancelled = await call(gateway, "POST", waiting["links"]["cancel"])
        assert cancelled.status == 202, cancelled.text
        await status_is(gateway, waiting["links"]["self"], "cancelled")
    for run, state in ((done, "completed"), (waiting, "cancelled")):
        again = await call(gateway, "POST", run["links"]["cancel"])
        assert again.status == 409, again.text
        assert again.json["error"]["type"] == "run_closed"
        assert f"is {state}" in again.json["error"]["message"], again.text


async def test_a_held_answer_is_read_through_the_clients_codec(
    dev_server: DevServer, tmp_path: Path
) -> None:
    """With payloads encrypted, an answer signalled while no worker runs is sealed in history
    and still found by a client with the key: a second answer to it is refused."""
    codec = EncryptionCodec.from_file(new_key_file(tmp_path / "keys.json"))
    adk = await AdkClient.connect(
        dev_server.address, task_queue=f"nobody-{uuid.uuid4().hex[:8]}", payload_codec=codec
    )
    handle = await adk.start("sealed", "u-1", "s-1", "agent", "hello")
    try:
        await handle.confirm("adk-held", False, checked=False)
        history = await adk.client.get_workflow_handle(handle.workflow_id).fetch_history()
        [signal] = [
            e.workflow_execution_signaled_event_attributes
            for e in history.events
            if e.HasField("workflow_execution_signaled_event_attributes")
        ]
        assert b"adk-held" not in signal.input.SerializeToString()
        held = (await read_answers(adk.client, handle.workflow_id)).held
        assert list(held) == ["adk-held"]
        assert (held["adk-held"].decision, held["adk-held"].channel) == ("rejected", "signal")
    finally:
        await adk.client.get_workflow_handle(handle.workflow_id).terminate("the test is over")


async def test_a_held_answer_a_worker_refused_no_longer_blocks_the_request(
    gateway: Gateway, deployment: Deployment
) -> None:
    """An input that violates the schema, sent while no worker runs, is held (202); once a
    worker has refused it and listed the refusal, a valid input applies (200)."""
    with worker_process(deployment):
        created = await start(gateway, "Help me plan a trip")
        path = created["links"]["self"]
        await status_is(gateway, path, "awaiting_input")
        [asked] = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
    bad = {"interrupt_id": asked["id"], "input": {"start": 5}}
    held = await call(gateway, "POST", f"{path}/resume", bad)
    assert held.status == 202, held.text
    with worker_process(deployment):
        async with asyncio.timeout(60):
            while not (await call(gateway, "GET", path)).json["refused_answers"]:
                await asyncio.sleep(0.2)
        dates = {"start": "2026-12-01", "end": "2026-12-05"}
        good = {"interrupt_id": asked["id"], "input": dates}
        applied = await call(gateway, "POST", f"{path}/resume", good)
        assert (applied.status, applied.json["outcome"]) == (200, "applied"), applied.text
        await status_is(gateway, path, "completed")
