"""The HTTP gateway against the real dev server, worker processes and a uvicorn process."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from http.server import HTTPServer
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from adk_temporal.background_http import BackgroundServer
from adk_temporal.client import AdkClient
from adk_temporal.codec import KEY_FILE_ENV
from adk_temporal.devserver import DevServer
from adk_temporal.examples.webhook_receiver import receiver
from adk_temporal.plugin import adk_data_converter
from adk_temporal.signing import AnswerLink, sign_link

from .. import web_app
from ..commands import new_key_file, run_cli
from .gateway import (
    CORS_ORIGIN,
    LINK_SECRET,
    OTHER_TOKEN,
    TOKEN,
    Gateway,
    Reply,
    gateway_process,
)
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

RUNS = "/v1/apps/weather/runs"


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory the workers and the gateway share."""
    return Deployment(dev_server.address, "web-api", tmp_path_factory.mktemp("web-api"))


@pytest.fixture(scope="module")
def gateway(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One gateway process for the module (workers come and go per test)."""
    with gateway_process(deployment, tmp_path_factory.mktemp("gateway")) as running:
        yield running


async def call(gateway: Gateway, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    return await asyncio.to_thread(gateway.call, method, path, body, **kw)


async def until(probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll ``probe`` (a coroutine function) until it returns something truthy."""
    async with asyncio.timeout(timeout):
        while not (found := await probe()):
            await asyncio.sleep(0.2)
    return found


async def start(gateway: Gateway, message: str) -> str:
    """Start a run; return its session resource path."""
    reply = await call(
        gateway, "POST", RUNS, {"agent": "weather_agent", "user_id": "u-web", "message": message}
    )
    assert reply.status == 201, reply.text
    created = reply.json
    assert created["status"] == "running"
    assert created["workflow_id"] == f"adk/weather/u-web/{created['session_id']}"
    path: str = created["links"]["self"]
    assert created["links"]["temporal_ui"].endswith("/history")
    return path


async def status_is(gateway: Gateway, path: str, *statuses: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        shown = (await call(gateway, "GET", path)).json
        return shown if shown["status"] in statuses else None

    found: dict[str, Any] = await until(probe)
    return found


async def test_a_paused_run_is_approved_over_the_api_across_a_worker_restart(
    gateway: Gateway, deployment: Deployment
) -> None:
    """Start, pause, list; the worker stops; answering still works; the new worker finishes
    the run and the purchase is charged once."""
    charged = len(deployment.payments.charges())
    with worker_process(deployment):
        path = await start(gateway, "Buy a weather report for Hangzhou")
        shown = await status_is(gateway, path, "awaiting_confirmation")
        pending = (await call(gateway, "GET", f"{path}/pending")).json
        assert pending["source"] == "worker"
        [request] = pending["requests"]
        assert request["payload"] == {"city": "Hangzhou", "price_usd": 2.0}

        async def listed() -> bool:
            reply = await call(gateway, "GET", f"{RUNS}?status=awaiting_confirmation")
            return any(r["workflow_id"] == shown["workflow_id"] for r in reply.json["runs"])

        await until(listed)

    # No worker now: what the run published is served by Temporal itself.
    memo = (await call(gateway, "GET", f"{path}/pending")).json
    assert memo["source"] == "memo"
    assert [r["id"] for r in memo["requests"]] == [request["id"]]
    unknown = await call(
        gateway, "POST", f"{path}/confirm", {"confirmation_id": "adk-nope", "confirmed": True}
    )
    assert unknown.status == 404
    assert unknown.json["error"]["type"] == "unknown_request"
    accepted = await call(
        gateway, "POST", f"{path}/confirm", {"confirmation_id": request["id"], "confirmed": True}
    )
    assert accepted.status == 202, accepted.text
    assert accepted.json["outcome"] == "accepted"

    with worker_process(deployment):
        done = await status_is(gateway, path, "completed", "failed")
    assert done["status"] == "completed"
    assert done["waiting_for"] == []
    assert len(deployment.payments.charges()) == charged + 1


async def test_a_notified_pause_is_answered_by_its_receiver_over_the_api_after_a_restart(
    gateway: Gateway, deployment: Deployment
) -> None:
    """The paused run notifies a receiver, which checks the signature; after the worker was
    restarted the receiver answers with the request and URL the notice carries, and the run
    completes with the purchase charged once."""
    notices: list[dict[str, Any]] = []
    hook = BackgroundServer(
        HTTPServer(("127.0.0.1", 0), receiver(LINK_SECRET.encode(), notices.append)), "hook"
    )
    hook.start()
    env = {
        web_app.WEBHOOK_ENV: f"http://127.0.0.1:{hook.port}/hook",
        web_app.GATEWAY_ENV: gateway.base,
        web_app.SECRET_ENV: LINK_SECRET,
    }
    charged = len(deployment.payments.charges())
    try:
        with worker_process(deployment, app="tests.web_app:app", env=env):
            path = await start(gateway, "Buy a weather report for Lima")
            [notice] = await until(lambda: _ready(notices))
        assert notice["type"] == "invocation.paused"
        [request] = notice["requests"]
        assert (request["tool"], request["args"]) == ("buy_weather_report", {"city": "Lima"})
        answer = request["answer"]
        assert answer["url"] == f"{gateway.base}{path}/confirm"
        with worker_process(deployment, app="tests.web_app:app", env=env):
            answered = await call(gateway, "POST", f"{path}/confirm", answer["body"])
            # Applied when the fresh worker took the update in time, else held by Temporal.
            done = await status_is(gateway, path, "completed", "failed")
            again = await call(gateway, "POST", f"{path}/confirm", answer["body"])
    finally:
        hook.stop()
    assert (answered.status, answered.json["outcome"]) in ((200, "applied"), (202, "accepted"))
    assert done["status"] == "completed"
    assert again.status in (404, 409), again.text
    assert len(deployment.payments.charges()) == charged + 1
    assert [n["type"] for n in notices] == ["invocation.paused"]


async def _ready(notices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(notices)


async def test_a_run_encrypted_with_a_key_the_gateway_lacks_does_not_hide_the_others(
    gateway: Gateway, deployment: Deployment, tmp_path: Path
) -> None:
    """Listing the app's runs shows a run whose memo is encrypted as unreadable, and the
    other runs as usual."""
    key_file = new_key_file(tmp_path / "keys.json")
    with worker_process(deployment, env={KEY_FILE_ENV: str(key_file)}):
        path = await start(gateway, "Buy a weather report for Bern")
        listed = await call(gateway, "GET", f"{RUNS}?status=awaiting_confirmation")
        await until(lambda: _unreadable(gateway, path))
    plain = await start(gateway, "What's the weather in Bern?")

    async def both_listed() -> bool:
        listed = {r["links"]["self"] for r in (await call(gateway, "GET", RUNS)).json["runs"]}
        return {path, plain} <= listed

    # Visibility lists a run a moment after its start: on a loaded machine, seconds.
    await until(both_listed)
    runs = (await call(gateway, "GET", RUNS)).json["runs"]
    [workflow_id] = [r["workflow_id"] for r in runs if r["links"]["self"] == path]
    listed_by_cli = await run_cli(deployment.address, "list", "--app", "weather", "--json")
    client = await Client.connect(deployment.address)
    await client.get_workflow_handle(workflow_id).terminate("the test is over")
    assert listed_by_cli.returncode == 0, listed_by_cli.stderr
    [row] = [r for r in json.loads(listed_by_cli.stdout) if r["workflow_id"] == workflow_id]
    assert "encrypted" in row["unreadable"]
    assert listed.status == 200
    encrypted = [r for r in runs if r["links"]["self"] == path]
    assert encrypted and "encrypted" in encrypted[0]["unreadable"]
    assert [r["unreadable"] for r in runs if r["links"]["self"] == plain] == [None]


async def _unreadable(gateway: Gateway, path: str) -> bool:
    runs = (await call(gateway, "GET", f"{RUNS}?status=awaiting_confirmation")).json["runs"]
    return any(r["links"]["self"] == path and r["unreadable"] for r in runs)


async def test_tokens_scopes_and_body_limits(gateway: Gateway) -> None:
    """401 without or with an unknown token, 403 out of scope, 413 over 1 MiB (declared or
    chunked), 422 for a malformed body; every refusal is a typed JSON error."""
    body = {"agent": "weather_agent", "user_id": "u", "message": "hi"}
    for token in (None, "t-unknown-0123456789abcdef"):
        reply = await call(gateway, "POST", RUNS, body, token=token)
        assert reply.status == 401
        assert reply.json["error"]["type"] == "unauthenticated"
        assert reply.headers["www-authenticate"].startswith("Bearer")
    forbidden = await call(gateway, "GET", RUNS, token=OTHER_TOKEN)
    assert forbidden.status == 403
    assert forbidden.json["error"] == {
        "type": "forbidden",
        "message": "the token may not use app 'weather'",
    }
    declared = await asyncio.to_thread(gateway.oversized, RUNS, declared=2 << 20)
    assert declared.status == 413
    assert declared.json["error"]["type"] == "body_too_large"
    # 1 MiB and one byte, with no length announced: the count stops it.
    pieces = [b"x" * 65536] * 16 + [b"x"]
    chunked = await asyncio.to_thread(gateway.oversized, RUNS, declared=None, chunks=pieces)
    assert chunked.status == 413
    malformed = await call(
        gateway, "POST", f"{RUNS[:-5]}/users/u/sessions/s/confirm", {"confirmed": "yes"}
    )
    assert malformed.status == 422
    assert "confirmation_id" in malformed.json["error"]["message"]
    # A digit that is not 0-9 ("²" passes str.isdigit, int() refuses it) is a bad query.
    superscript = await call(gateway, "GET", f"{RUNS}?limit=%C2%B2")
    assert (superscript.status, superscript.json["error"]["type"]) == (422, "invalid_query")
    missing = await call(gateway, "GET", "/v1/apps/weather/users/u/sessions/never")
    assert missing.status == 404
    assert missing.json["error"]["type"] == "no_invocation"
    unknown_agent = await call(gateway, "POST", RUNS, {**body, "agent": "nobody"})
    assert unknown_agent.status == 422
    assert "weather_agent" in unknown_agent.json["error"]["message"]
    document = (await call(gateway, "GET", "/openapi.json", token=None)).json
    session = "/v1/apps/{app}/users/{user}/sessions/{session}"
    assert set(document["paths"][f"{session}/confirm"]["post"]["responses"]) >= {
        "200",
        "202",
        "401",
        "403",
        "404",
        "409",
        "413",
        "422",
    }
    assert "ConfirmBody" in document["components"]["schemas"]
    # The access log never shows a token.
    log = gateway.log.read_text()
    assert "POST /v1/apps/weather/runs" in log
    assert "t-unknown" not in log and "t-weather" not in log


async def test_checked_answers_refuse_clearly_and_change_nothing(
    gateway: Gateway, deployment: Deployment
) -> None:
    """A schema violation (422), an unknown id (404), a wrong kind (404) and a digest
    mismatch (409) change nothing; the right answers apply (200) and cancel works."""
    charged = len(deployment.payments.charges())
    with worker_process(deployment):
        trip = await start(gateway, "Help me plan a trip")
        await status_is(gateway, trip, "awaiting_input")
        [asked] = (await call(gateway, "GET", f"{trip}/pending")).json["requests"]
        bad = await call(
            gateway, "POST", f"{trip}/resume", {"interrupt_id": asked["id"], "input": {"start": 5}}
        )
        assert bad.status == 422, bad.text
        assert bad.json["error"]["type"] == "invalid_input"
        unknown = await call(
            gateway, "POST", f"{trip}/resume", {"interrupt_id": "call-x/input-9", "input": None}
        )
        assert unknown.status == 404
        still = (await call(gateway, "GET", f"{trip}/pending")).json["requests"]
        assert [r["id"] for r in still] == [asked["id"]]
        dates = {"start": "2026-12-01", "end": "2026-12-05"}
        applied = await call(
            gateway, "POST", f"{trip}/resume", {"interrupt_id": asked["id"], "input": dates}
        )
        assert applied.status == 200, applied.text
        assert applied.json["outcome"] == "applied"
        assert (await status_is(gateway, trip, "completed"))["status"] == "completed"

        buy = await start(gateway, "Buy a weather report for Oslo")
        await status_is(gateway, buy, "awaiting_confirmation")
        [request] = (await call(gateway, "GET", f"{buy}/pending")).json["requests"]
        wrong_kind = await call(
            gateway, "POST", f"{buy}/resume", {"interrupt_id": request["id"], "input": None}
        )
        assert wrong_kind.status == 404
        mismatch = await call(
            gateway,
            "POST",
            f"{buy}/confirm",
            {"confirmation_id": request["id"], "confirmed": True, "call_digest": "0" * 16},
        )
        assert mismatch.status == 409, mismatch.text
        assert mismatch.json["error"]["type"] == "confirmation_mismatch"
        cancelled = await call(gateway, "POST", f"{buy}/cancel")
        assert cancelled.status == 202
        assert (await status_is(gateway, buy, "cancelled"))["status"] == "cancelled"
        again = await call(gateway, "POST", f"{buy}/cancel")
        assert again.status == 409
    assert len(deployment.payments.charges()) == charged


async def test_answer_links_apply_once_and_refuse_the_rest(
    gateway: Gateway, deployment: Deployment, dev_server: DevServer
) -> None:
    """GET shows and answers nothing; tampered, expired and wrong-run links are refused
    and change nothing; the right one applies once; reusing it is refused."""
    client = await Client.connect(dev_server.address, data_converter=adk_data_converter())
    adk = AdkClient(client, task_queue=deployment.task_queue)
    charged = len(deployment.payments.charges())
    with worker_process(deployment):
        path = await start(gateway, "Buy a weather report for Lima")
        shown = await status_is(gateway, path, "awaiting_confirmation")
        [request] = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        invocation = (await adk.handle(shown["workflow_id"]).status()).invocation_id

        def link(key: bytes = LINK_SECRET.encode(), **changes: Any) -> str:
            fields: dict[str, Any] = {
                "workflow_id": shown["workflow_id"],
                "invocation_id": invocation,
                "request_id": request["id"],
                "decision": "approve",
                "call_digest": request["call_digest"],
                "expires_at": int(time.time()) + 3600,
                **changes,
            }
            return f"/v1/links/{sign_link(key, AnswerLink(**fields))}"

        good = link()
        page = await call(gateway, "GET", good, token=None, headers={"Accept": "text/html"})
        assert page.status == 200
        assert "Approve this request?" in page.text
        assert "Buy the weather report for Lima" in page.text
        body, mac = good.rsplit(".", 1)
        refused = {
            "tampered": (f"{body}.{'0' * len(mac)}", 400, "invalid_link"),
            "non-ASCII signature": (f"{body}.%C3%A9", 400, "invalid_link"),
            "expired": (link(expires_at=int(time.time()) - 1), 400, "invalid_link"),
            "wrong run": (link(invocation_id="e-another-invocation"), 409, "wrong_run"),
            "other secret": (link(key=b"another secret"), 400, "invalid_link"),
        }
        for what, (url, status, kind) in refused.items():
            reply = await call(gateway, "POST", url, token=None)
            assert (reply.status, reply.json["error"]["type"]) == (status, kind), what
        still = (await call(gateway, "GET", f"{path}/pending")).json["requests"]
        assert [r["id"] for r in still] == [request["id"]]

        applied = await call(gateway, "POST", good, token=None)
        assert applied.status == 200, applied.text
        assert applied.json["outcome"] == "applied"
        reused = await call(gateway, "POST", good, token=None)
        assert reused.status == 409
        assert reused.json["error"]["type"] in ("link_used", "run_closed")
        assert (await status_is(gateway, path, "completed"))["status"] == "completed"
        page = await call(gateway, "GET", good, token=None, headers={"Accept": "text/html"})
        assert "no longer open" in page.text
    assert len(deployment.payments.charges()) == charged + 1
    assert good.rsplit("/", 1)[1] not in gateway.log.read_text()


async def test_only_the_configured_origin_may_call_from_a_browser(gateway: Gateway) -> None:
    """The configured site's preflight is answered without a token, and its calls carry the
    allowing header (but never credentials); another site gets neither."""
    allowed = await call(
        gateway,
        "OPTIONS",
        RUNS,
        token=None,
        headers={
            "Origin": CORS_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )
    assert allowed.status == 200
    assert allowed.headers["access-control-allow-origin"] == CORS_ORIGIN
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in allowed.headers
    foreign = await call(
        gateway,
        "OPTIONS",
        RUNS,
        token=None,
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert foreign.status == 400
    assert "access-control-allow-origin" not in foreign.headers

    listed = await call(gateway, "GET", RUNS, headers={"Origin": CORS_ORIGIN})
    assert listed.status == 200
    assert listed.headers["access-control-allow-origin"] == CORS_ORIGIN
    refused = await call(gateway, "GET", RUNS, token=None, headers={"Origin": CORS_ORIGIN})
    assert refused.status == 401
    assert refused.headers["access-control-allow-origin"] == CORS_ORIGIN
    other = await call(gateway, "GET", RUNS, headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


async def test_a_stream_waiting_for_a_worker_is_kept_alive_until_the_run_ends(
    gateway: Gateway, deployment: Deployment
) -> None:
    """With no worker nothing happens for as long as none comes; the stream sends comments
    meanwhile, then the events and the end once a worker runs the invocation."""
    path = await start(gateway, "What is the weather in Paris?")
    comments: list[str] = []
    following = asyncio.create_task(
        asyncio.to_thread(gateway.sse, f"{path}/events", TOKEN, comments)
    )

    async def kept_alive() -> bool | None:
        return comments.count(": keep-alive") >= 2 or None

    await until(kept_alive)
    assert not following.done()
    with worker_process(deployment):
        frames = await following
    assert frames[-1] == ("end", {"status": "completed"})
    assert any(name == "adk_event" for name, _ in frames)


async def test_events_stream_as_server_sent_events(
    gateway: Gateway, deployment: Deployment
) -> None:
    """The events endpoint delivers the invocation's events, then how it ended."""
    with worker_process(deployment):
        path = await start(gateway, "What is the weather in Paris?")
        frames = await asyncio.to_thread(gateway.sse, f"{path}/events")
    names = [name for name, _ in frames]
    assert names[-1] == "end"
    assert frames[-1][1] == {"status": "completed"}
    texts = [
        part.get("text", "")
        for name, event in frames
        if name == "adk_event"
        for part in event.get("content", {}).get("parts", [])
    ]
    assert any("Paris" in text for text in texts)
    authors = {event["author"] for name, event in frames if name == "adk_event"}
    assert {"user", "weather_agent"} <= authors

    # A browser reconnecting sends the id of the last event it got, and gets only the rest;
    # with the worker gone, the finished run's result names the invocation to follow.
    stored = [event["id"] for name, event in frames if name == "adk_event"]
    assert len(stored) >= 3
    resumed = await asyncio.to_thread(gateway.sse, f"{path}/events", TOKEN, None, stored[1])
    assert [event["id"] for name, event in resumed if name == "adk_event"] == stored[2:]
    assert resumed[-1] == ("end", {"status": "completed"})
    unknown = await asyncio.to_thread(gateway.sse, f"{path}/events", TOKEN, None, "not-an-event")
    assert [event["id"] for name, event in unknown if name == "adk_event"] == stored


async def test_approvers_see_what_they_approve_and_state_and_artifacts_are_json(
    gateway: Gateway, deployment: Deployment
) -> None:
    """The app's pending listing names the tool, arguments, hint and payload (and when the
    request opened, with the URL of the whole value); once approved, the session's state,
    artifact list and each artifact version are JSON resources."""
    with worker_process(deployment):
        path = await start(gateway, "Buy a weather report for Quito")
        shown = await status_is(gateway, path, "awaiting_confirmation")

        async def listed() -> dict[str, Any] | None:
            runs = (await call(gateway, "GET", "/v1/apps/weather/pending")).json["runs"]
            return next((r for r in runs if r["workflow_id"] == shown["workflow_id"]), None)

        run = await until(listed)
        [request] = run["requests"]
        assert request["tool"] == "buy_weather_report"
        assert request["args"] == {"city": "Quito"}
        assert request["hint"] == "Buy the weather report for Quito for $2.00?"
        assert json.loads(request["payload_preview"]) == {"city": "Quito", "price_usd": 2.0}
        assert request["opened_at"] <= time.time()
        assert run["links"]["pending"] == f"{path}/pending"
        await call(
            gateway,
            "POST",
            f"{path}/confirm",
            {"confirmation_id": request["id"], "confirmed": True},
        )
        await status_is(gateway, path, "completed")

    state = await call(gateway, "GET", f"{path}/state")
    assert state.status == 200 and state.json["state"]["last_report_city"] == "Quito"
    listing = (await call(gateway, "GET", f"{path}/artifacts")).json["artifacts"]
    entries = {a["name"]: a for a in listing}
    assert entries["report.txt"]["versions"] == [1]
    assert entries["report.txt"]["url"] == f"{path}/artifacts/report.txt?version=1"
    report = (await call(gateway, "GET", entries["report.txt"]["url"])).json
    assert report["kind"] == "text" and report["text"].startswith("Weather report for Quito")
    ledger = (await call(gateway, "GET", f"{path}/artifacts/user%3Apurchases.json")).json
    assert ledger["kind"] == "json" and ledger["mime_type"] == "application/json"
    assert json.loads(ledger["text"])[-1]["city"] == "Quito"
    missing = await call(gateway, "GET", f"{path}/artifacts/report.txt?version=9")
    assert missing.status == 404 and missing.json["error"]["type"] == "unknown_artifact"
    bad = await call(gateway, "GET", f"{path}/artifacts/report.txt?version=last")
    assert bad.status == 422
    unknown = await call(gateway, "GET", "/v1/apps/weather/users/u-web/sessions/none-such/state")
    assert unknown.status == 404
