"""Notifications out on the real dev server: signed, answerable, retried, never blocking."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.service import RPCError, RPCStatusCode

from adk_temporal.artifacts import VersionsRequest
from adk_temporal.background_http import BackgroundServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.notifications import Endpoint, Notifications
from adk_temporal.signing import read_link, verify_body
from adk_temporal.visibility import WAITING_VIEW
from adk_temporal.workflows.notify import notify_workflow_id

from ..unit.test_notify_delivery import MORE_THAN_THE_DEFAULT_POOL, Trickler
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-notify"
SECRET = b"notify-secret"
GATEWAY = "https://gateway.example"


class Hook:
    """A webhook endpoint on a free loopback port that records every delivery.

    It starts down (bound, not listening: connections are refused) unless ``up`` is
    called; each notification's first ``fail_first`` attempts get ``status_on_failure``
    (with ``location`` as its Location header, if given).
    """

    def __init__(
        self, *, fail_first: int = 0, status_on_failure: int = 503, location: str | None = None
    ) -> None:
        self.deliveries: list[tuple[dict[str, str], bytes, int]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                key = self.headers["Idempotency-Key"]
                earlier = sum(1 for h, _, _ in hook.deliveries if h["Idempotency-Key"] == key)
                status = status_on_failure if earlier < fail_first else 204
                hook.deliveries.append((dict(self.headers), body, status))
                self.send_response(status)
                if location is not None and status != 204:
                    self.send_header("Location", location)
                self.end_headers()

            def do_GET(self) -> None:
                # What a client following a redirect sends: recorded, then answered 2xx.
                hook.deliveries.append((dict(self.headers), b"", 204))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = HTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        server.server_bind()
        self.background = BackgroundServer(server, "webhook")
        self.url = f"http://127.0.0.1:{self.background.port}/hook"

    def up(self) -> None:
        """Start accepting connections."""
        self.background.server.server_activate()
        self.background.start()

    def accepted(self) -> list[dict[str, Any]]:
        """The documents of the deliveries answered 2xx, in arrival order."""
        return [json.loads(body) for _, body, status in self.deliveries if status < 300]

    async def wait_accepted(self, count: int) -> list[dict[str, Any]]:
        """Wait until ``count`` deliveries were accepted."""
        async with asyncio.timeout(60):
            while len(self.accepted()) < count:
                await asyncio.sleep(0.05)
        return self.accepted()


def _notifications(hook: Hook, **changes: Any) -> Notifications:
    fields: dict[str, Any] = {
        "endpoints": [hook.url],
        "secret": SECRET,
        "answer_base_url": GATEWAY,
        # Short back-off keeps the test quick; the policy's shape is the production one.
        "retry_initial": timedelta(milliseconds=200),
        "retry_maximum": timedelta(seconds=1),
    }
    return Notifications(**{**fields, **changes})


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


async def _started(notice: WorkflowHandle[Any, Any]) -> None:
    """Wait until the notice's ``adk_notify`` child exists: the status shows the pause
    before the server has created the child the pause starts."""
    async with asyncio.timeout(30):
        while True:
            try:
                await notice.describe()
                return
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
            await asyncio.sleep(0.05)


async def test_a_pause_is_notified_signed_with_links_and_answered_once(
    run_worker: WorkerFactory,
) -> None:
    """The receiver verifies the signature, which covers the Idempotency-Key (checked with
    the standard library as the docs show); the document names the request, its answer URL
    and two signed links; answering through the client completes the run once."""
    hook = Hook()
    hook.up()
    session_id = _session()
    try:
        config = _notifications(hook)
        agent = build_weather_agent("scripted:weather")
        async with run_worker([agent], notifications=config) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, session_id, "weather_agent", "Buy a weather report for Oslo"
            )
            [doc] = await hook.wait_accepted(1)
            [pending] = await handle.pending()
            # Only invocations are listed as waiting: the notification run is not one.
            assert await rt.adk.waiting(task_queue=rt.task_queue) == [handle.workflow_id]
            await handle.confirm(pending.id, True)
            result = await handle.result()
            versions = await rt.artifacts.versions(
                VersionsRequest(
                    app_name=APP_NAME,
                    user_id=USER,
                    session_id=session_id,
                    file_name="report.txt",
                )
            )
    finally:
        hook.background.stop()
    assert result.status == "completed"
    assert versions.versions == [1]

    [(headers, body, _)] = hook.deliveries  # completion is not notified by default
    verify_body(
        SECRET,
        signature=headers["X-Adk-Signature"],
        timestamp=headers["X-Adk-Timestamp"],
        idempotency_key=headers["Idempotency-Key"],
        body=body,
        now=time.time(),
    )
    assert headers["Idempotency-Key"] == doc["id"]
    # The recipe the docs give a receiver without adk-temporal: the key is signed too.
    signed = f"{headers['X-Adk-Timestamp']}.{headers['Idempotency-Key']}.".encode() + body
    mac = hmac.new(SECRET, signed, hashlib.sha256).hexdigest()
    assert headers["X-Adk-Signature"] == f"v2={mac}"
    assert doc["type"] == "invocation.paused"
    assert (doc["app"], doc["user_id"], doc["session_id"]) == (APP_NAME, USER, session_id)
    assert doc["workflow_id"] == handle.workflow_id
    assert doc["invocation_id"] == result.invocation_id
    assert doc["run_id"]
    [request] = doc["requests"]
    assert request["id"] == pending.id and request["kind"] == "confirmation"
    assert request["tool"] == "buy_weather_report" and request["args"] == {"city": "Oslo"}
    assert isinstance(pending, PendingConfirmation)
    assert request["payload"] == pending.payload and request["hint"] == pending.hint
    assert isinstance(pending, PendingConfirmation)
    assert request["call_digest"] == pending.call_digest
    session_url = f"{GATEWAY}/v1/apps/{APP_NAME}/users/{USER}/sessions/{session_id}"
    assert request["answer"]["url"] == f"{session_url}/confirm"
    assert request["answer"]["body"]["confirmation_id"] == pending.id
    for decision in ("approve", "reject"):
        token = request["links"][decision].removeprefix(f"{GATEWAY}/v1/links/")
        link = read_link(SECRET, token, now=time.time())
        assert (link.workflow_id, link.request_id, link.decision) == (
            handle.workflow_id,
            pending.id,
            decision,
        )


async def test_a_notice_run_has_a_short_id_names_its_invocation_and_is_out_of_the_view(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """The Temporal UI's list: a notice run's id is ``adk-notify-<hash>`` (not the parent's
    id again), its summary names the invocation it is for, and the documented waiting view
    lists the invocation without it."""
    hook = Hook()
    hook.up()
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=_notifications(hook)
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, _session(), "weather_agent", "Buy a weather report for Oslo"
            )
            await hook.wait_accepted(1)
            [pending] = await handle.pending()
            invocation_id = (await handle.status()).invocation_id
            child_id = notify_workflow_id(handle.workflow_id, invocation_id, "paused", pending.id)
            notice = await temporal_client.get_workflow_handle(child_id).describe()
            summary = await notice.static_summary()
            mine = f"WorkflowId IN ('{handle.workflow_id}', '{child_id}')"
            listed = [
                wf.id async for wf in temporal_client.list_workflows(f"{WAITING_VIEW} AND {mine}")
            ]
            everything = [wf.id async for wf in temporal_client.list_workflows(mine)]
            await handle.confirm(pending.id, True)
            await handle.result()
    finally:
        hook.background.stop()
    assert child_id.startswith("adk-notify-") and len(child_id) < 40
    assert notice.workflow_type == "adk_notify"
    assert summary == (f"invocation.paused: 1 request(s) · for {handle.workflow_id}")
    assert sorted(everything) == sorted([handle.workflow_id, child_id])
    assert listed == [handle.workflow_id]


async def test_a_down_endpoint_gets_every_notice_once_it_is_up_and_never_holds_the_run(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """The invocation pauses, is answered and completes while the endpoint refuses
    connections; once up, the endpoint answers 503 first, and every notice arrives again
    with the same idempotency key."""
    hook = Hook(fail_first=1)
    session_id = _session()
    config = _notifications(hook, on=["paused", "completed"])
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, session_id, "weather_agent", "Buy a weather report for Lima"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [pending] = await handle.pending()
            invocation_id = (await handle.status()).invocation_id
            paused = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, invocation_id, "paused", pending.id)
            )
            completed = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, invocation_id, "completed")
            )
            # Answered only once notified: an answer that beats the notice needs none.
            await _started(paused)
            await handle.confirm(pending.id, True)
            result = await handle.result()
            assert result.status == "completed"
            assert hook.deliveries == []
            # Delivery is being retried, outliving the invocation.
            async with asyncio.timeout(30):
                while (await paused.describe()).raw_description.pending_activities[0].attempt < 2:
                    await asyncio.sleep(0.1)
            assert (await completed.describe()).status == WorkflowExecutionStatus.RUNNING

            hook.up()
            await paused.result()
            await completed.result()
    finally:
        hook.background.stop()
    docs = {doc["type"]: doc for doc in hook.accepted()}
    assert set(docs) == {"invocation.paused", "invocation.completed"}
    assert [r["id"] for r in docs["invocation.paused"]["requests"]] == [pending.id]
    assert docs["invocation.completed"]["invocation_id"] == result.invocation_id
    for doc in docs.values():
        attempts = [
            (headers, body, status)
            for headers, body, status in hook.deliveries
            if headers["Idempotency-Key"] == doc["id"]
        ]
        assert [status for _, _, status in attempts] == [503, 204]
        assert attempts[0][1] == attempts[1][1]  # the same document, signed per attempt


async def test_an_endpoint_that_refuses_a_notice_is_not_retried_and_the_run_goes_on(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """A 4xx (other than 408/429) fails the delivery for good at once: one attempt."""
    hook = Hook(fail_first=10, status_on_failure=400)
    hook.up()
    config = _notifications(hook)
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, _session(), "weather_agent", "Buy a weather report for Bern"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [pending] = await handle.pending()
            invocation_id = (await handle.status()).invocation_id
            notice = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, invocation_id, "paused", pending.id)
            )
            await _started(notice)
            with pytest.raises(WorkflowFailureError):
                await notice.result()
            await handle.confirm(pending.id, True)
            assert (await handle.result()).status == "completed"
    finally:
        hook.background.stop()
    assert [status for _, _, status in hook.deliveries] == [400]


async def test_a_pause_carried_over_continue_as_new_is_notified_once(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """A run that hands over right after opening a request leaves it to the next run, which
    learns the notifications from the carried agent tree and notifies it once."""
    hook = Hook()
    hook.up()
    config = _notifications(hook)
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME,
                USER,
                _session(),
                "weather_agent",
                "Buy a weather report for Lima",
                continue_as_new_after_events=5,
            )
            [doc] = await hook.wait_accepted(1)
            [pending] = await handle.pending()
            await handle.confirm(pending.id, True)
            assert (await handle.result()).status == "completed"
    finally:
        hook.background.stop()
    runs = [
        wf.run_id
        async for wf in temporal_client.list_workflows(f"WorkflowId = '{handle.workflow_id}'")
    ]
    # Newest first: the first run opened the request, a later one waited and notified.
    assert len(runs) > 1 and doc["run_id"] in runs[:-1]
    assert [r["id"] for r in doc["requests"]] == [pending.id]
    assert len(hook.deliveries) == 1


async def test_a_notice_still_being_delivered_never_fails_a_later_run(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """Two runs of one session reuse a caller-chosen invocation id while the endpoint is down:
    the second run's completion notice is the first one's, still being retried. The second
    run completes all the same, and the one delivery keeps going."""
    hook = Hook()  # never up: every attempt is refused
    config = _notifications(hook, on=("completed",))
    session_id = _session()
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            for _ in range(2):
                handle = await rt.adk.start(
                    APP_NAME,
                    USER,
                    session_id,
                    "weather_agent",
                    "What is the weather in Oslo?",
                    invocation_id="e-chosen-by-the-caller",
                )
                assert (await handle.result()).status == "completed"
            notice = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, "e-chosen-by-the-caller", "completed")
            )
            described = await notice.describe()
            assert described.status == WorkflowExecutionStatus.RUNNING
            await notice.terminate("the test is over")
    finally:
        hook.background.stop()
    assert hook.deliveries == []


async def test_a_trickling_endpoint_never_stalls_an_invocation_that_saves_an_artifact(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """More endpoints than the worker's default thread pool, each trickling a header byte a
    second: while the pause notice is being delivered and retried, the approved purchase
    saves its file artifact and the invocation completes."""
    trickler = Trickler()
    session_id = _session()
    async with trickler.running() as base:
        urls = [f"{base}/hook/{i}" for i in range(MORE_THAN_THE_DEFAULT_POOL)]
        config = Notifications(
            endpoints=urls,
            secret=SECRET,
            timeout=timedelta(seconds=2),
            retry_initial=timedelta(milliseconds=200),
            retry_maximum=timedelta(seconds=1),
        )
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, session_id, "weather_agent", "Buy a weather report for Oslo"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [pending] = await handle.pending()
            await asyncio.wait_for(trickler.connected.wait(), timeout=30)
            await handle.confirm(pending.id, True)
            try:
                async with asyncio.timeout(60):  # a hang guard, not a measurement
                    result = await handle.result()
            except TimeoutError:
                pytest.fail("the invocation stalled behind webhook deliveries")
            versions = await rt.artifacts.versions(
                VersionsRequest(
                    app_name=APP_NAME,
                    user_id=USER,
                    session_id=session_id,
                    file_name="report.txt",
                )
            )
            notice = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, result.invocation_id, "paused", pending.id)
            )
            # The notice is still being retried: the endpoints never answered.
            assert (await notice.describe()).status == WorkflowExecutionStatus.RUNNING
            await notice.terminate("the test is over")
    assert result.status == "completed"
    assert versions.versions == [1]


async def test_a_redirecting_endpoint_is_retried_and_its_target_never_hears_of_it(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """The endpoint answers 302 to a second receiver: the delivery is retried, never counted
    delivered, and the second receiver gets no request — so neither the endpoint's
    credentials nor the signature — while the invocation goes on."""
    target = Hook()
    target.up()
    hook = Hook(fail_first=10**6, status_on_failure=302, location=target.url)
    hook.up()
    config = _notifications(
        hook, endpoints=[Endpoint(hook.url, {"Authorization": "Bearer ep-token"})]
    )
    try:
        async with run_worker(
            [build_weather_agent("scripted:weather")], notifications=config
        ) as rt:
            handle = await rt.adk.start(
                APP_NAME, USER, _session(), "weather_agent", "Buy a weather report for Rome"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [pending] = await handle.pending()
            invocation_id = (await handle.status()).invocation_id
            try:
                async with asyncio.timeout(30):
                    while len(hook.deliveries) < 2:
                        await asyncio.sleep(0.05)
            except TimeoutError:
                pytest.fail("the redirected notice was not retried")
            notice = temporal_client.get_workflow_handle(
                notify_workflow_id(handle.workflow_id, invocation_id, "paused", pending.id)
            )
            assert (await notice.describe()).status == WorkflowExecutionStatus.RUNNING
            await notice.terminate("the test is over")
            await handle.confirm(pending.id, True)
            assert (await handle.result()).status == "completed"
    finally:
        hook.background.stop()
        target.background.stop()
    assert target.deliveries == []
    assert {status for _, _, status in hook.deliveries} == {302}
    assert all(h["Authorization"] == "Bearer ep-token" for h, _, _ in hook.deliveries)
