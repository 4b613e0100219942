"""Rewind and fork against the real dev server and a real worker: refused while an approval
waits, then state (initial state included) and artifacts restored on File and GCS
(fake-gcs-server); a fork that goes on beside its original; the CLI and the HTTP gateway."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.app import App, Stores
from adk_temporal.artifacts import (
    ArtifactService,
    GcsArtifactService,
    LoadRequest,
    VersionsRequest,
)
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.errors import SessionBusyError
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SessionService, SqliteSessionService
from adk_temporal.testing.fake_gcs import FakeGcsServer

from ..commands import run_cli
from .conftest import WorkerFactory
from .gateway import OTHER_TOKEN, Gateway, Reply, gateway_process
from .workers import Deployment

pytestmark = pytest.mark.integration

USER = "u-1"
INITIAL = {"tier": "gold", "last_city": "Nowhere"}


@dataclass(frozen=True)
class _Stores:
    """A worker's client and the stores it writes, whatever the artifact backend."""

    adk: AdkClient
    sessions: SessionService
    artifacts: ArtifactService
    task_queue: str


@pytest.fixture(scope="module")
def fake_gcs() -> Iterator[FakeGcsServer]:
    """One fake-gcs-server for the module."""
    with FakeGcsServer() as server:
        yield server


def _gcs_worker(
    client: Client, tmp_path: Path, server: FakeGcsServer
) -> AbstractAsyncContextManager[_Stores]:
    @asynccontextmanager
    async def running() -> AsyncIterator[_Stores]:
        bucket = f"rewind-{uuid.uuid4().hex[:12]}"
        server.create_bucket(bucket)
        sessions = SqliteSessionService(tmp_path / "sessions.db")
        artifacts = GcsArtifactService(bucket, client=server.client())
        task_queue = f"tq-{uuid.uuid4().hex[:12]}"
        plugin = AdkPlugin(
            App([build_weather_agent("scripted:weather")]), stores=Stores(sessions, artifacts)
        )
        async with Worker(
            client,
            task_queue=task_queue,
            plugins=[plugin],
            max_cached_workflows=0,
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
        ):
            adk = AdkClient(client, task_queue=task_queue, session_service=sessions)
            yield _Stores(adk, sessions, artifacts, task_queue)

    return running()


@asynccontextmanager
async def _file_worker(run_worker: WorkerFactory) -> AsyncIterator[_Stores]:
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        yield _Stores(rt.adk, rt.sessions, rt.artifacts, rt.task_queue)


def _key() -> SessionKey:
    return SessionKey(APP_NAME, USER, f"s-{uuid.uuid4().hex[:8]}")


async def _turn(adk: AdkClient, key: SessionKey, message: str) -> str:
    """One invocation to its end; its invocation id."""
    result = await (await adk.start(*key, "weather_agent", message)).result()
    assert result.status == "completed", result
    return result.invocation_id


async def _waiting_purchase(adk: AdkClient, key: SessionKey) -> InvocationHandle:
    handle = await adk.start(*key, "weather_agent", "Buy a weather report for Hangzhou")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    return handle


async def _approve(handle: InvocationHandle) -> str:
    [request] = await handle.pending()
    await handle.confirm(request.id, True)
    result = await handle.result()
    assert result.status == "completed", result
    return result.invocation_id


async def _report(stores: _Stores, key: SessionKey) -> tuple[list[int], str]:
    """report.txt's versions and its latest content as text (empty bytes: "")."""
    versions = await stores.artifacts.versions(VersionsRequest.of(key, file_name="report.txt"))
    part = (await stores.artifacts.load(LoadRequest.of(key, file_name="report.txt"))).part
    if part.inline_data is not None:
        return list(versions.versions), (part.inline_data.data or b"").decode()
    return list(versions.versions), part.text or ""


@pytest.mark.parametrize("backend", ["file", "gcs"])
async def test_rewind_is_refused_while_waiting_then_restores_state_and_artifacts(
    backend: str,
    run_worker: WorkerFactory,
    temporal_client: Client,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """Refused while the purchase waits for approval; afterwards, rewinding before the
    update gives report.txt v1's text as v3, rewinding before the first turn gives the
    initial state and an empty report v4, the user's ledger stays, and a new turn runs."""
    key = _key()
    worker = (
        _file_worker(run_worker)
        if backend == "file"
        else _gcs_worker(temporal_client, tmp_path, request.getfixturevalue("fake_gcs"))
    )
    async with worker as stores:
        await stores.sessions.create(key, state=INITIAL)
        paris = await _turn(stores.adk, key, "What is the weather in Paris?")
        waiting = await _waiting_purchase(stores.adk, key)
        events = len((await stores.sessions.get(key)).events)
        with pytest.raises(SessionBusyError, match=f"adk/{key}"):
            await stores.adk.rewind(key, paris, artifact_service=stores.artifacts)
        with pytest.raises(SessionBusyError):
            await stores.adk.fork(key, artifact_service=stores.artifacts)
        assert len((await stores.sessions.get(key)).events) == events
        await _approve(waiting)
        update = await _turn(stores.adk, key, "Update the report for Hangzhou: take an umbrella")
        first = await stores.adk.rewind(key, update, artifact_service=stores.artifacts)
        assert first.artifact_delta == {"report.txt": 3}
        versions, text = await _report(stores, key)
        assert versions == [1, 2, 3] and "Hangzhou" in text and "umbrella" not in text
        await stores.adk.rewind(key, paris, artifact_service=stores.artifacts)
        assert await stores.sessions.get_state(key) == INITIAL
        assert await _report(stores, key) == ([1, 2, 3, 4], "")
        ledger = await stores.artifacts.load(LoadRequest.of(key, file_name="user:purchases.json"))
        assert ledger.part.inline_data is not None and b"Hangzhou" in (
            ledger.part.inline_data.data or b""
        )
        await _turn(stores.adk, key, "What is the weather in Rome?")
        assert await stores.sessions.get_state(key) == {"tier": "gold", "last_city": "Rome"}


async def test_a_fork_and_its_original_run_on_independently(run_worker: WorkerFactory) -> None:
    """A fork as of the purchase has the report and the state of then; a further turn in
    each session changes only that session."""
    key = _key()
    async with _file_worker(run_worker) as stores:
        await stores.sessions.create(key, state=INITIAL)
        bought = await _approve(await _waiting_purchase(stores.adk, key))
        await _turn(stores.adk, key, "Update the report for Hangzhou: take an umbrella")
        forked = await stores.adk.fork(key, bought, artifact_service=stores.artifacts)
        fork = SessionKey(APP_NAME, USER, forked.session_id)
        assert forked.artifacts == {"report.txt": [1]}
        await _turn(stores.adk, fork, "What is the weather in Lima?")
        await _turn(stores.adk, key, "What is the weather in Oslo?")
        fork_state = await stores.sessions.get_state(fork)
        original_state = await stores.sessions.get_state(key)
        fork_report = await _report(stores, fork)
        original_report = await _report(stores, key)
    assert fork_state == {**INITIAL, "last_report_city": "Hangzhou", "last_city": "Lima"}
    assert original_state == {**INITIAL, "last_report_city": "Hangzhou", "last_city": "Oslo"}
    assert fork_report[0] == [1] and "umbrella" not in fork_report[1]
    assert original_report[0] == [1, 2] and "umbrella" in original_report[1]


async def test_cli_rewind_and_fork(
    run_worker: WorkerFactory, dev_server: DevServer, tmp_path: Path
) -> None:
    """`adk-temporal rewind` refuses while the approval waits (exit 1, SessionBusyError),
    then rewinds (--json, the same --rewind-id again appends nothing); `fork` copies."""
    key = _key()
    async with _file_worker(run_worker) as stores:
        paris = await _turn(stores.adk, key, "What is the weather in Paris?")
        waiting = await _waiting_purchase(stores.adk, key)
        where = [
            *("--app", key.app_name, "--user", key.user_id, "--session", key.session_id),
            *("--data-dir", str(tmp_path), "--task-queue", stores.task_queue),
        ]
        refused = await run_cli(dev_server.address, "rewind", *where, "--before", paris)
        assert refused.returncode == 1 and "SessionBusyError" in refused.stderr, refused
        bought = await _approve(waiting)
        args = ("rewind", *where, "--before", bought, "--rewind-id", "rw-cli", "--json")
        done = await run_cli(dev_server.address, *args)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["appended"] and result["artifact_delta"] == {"report.txt": 2}
        assert result["state_delta"] == {"last_report_city": {"adk_temporal:removed": True}}
        again = json.loads((await run_cli(dev_server.address, *args)).stdout)
        assert not again["appended"] and again["event_id"] == "rw-cli"
        text = await run_cli(
            dev_server.address, "fork", *where, "--at", paris, "--new-session", "s-cli-fork"
        )
        assert text.returncode == 0, text.stderr
        assert "into session s-cli-fork" in text.stdout
        forked = await stores.sessions.get_state(SessionKey(APP_NAME, USER, "s-cli-fork"))
    assert forked == {"last_city": "Paris"}


async def _call(gateway: Gateway, path: str, body: Any, **kw: Any) -> Reply:
    return await asyncio.to_thread(gateway.call, "POST", path, body, **kw)


async def test_gateway_rewind_and_fork_endpoints(
    run_worker: WorkerFactory, dev_server: DevServer, tmp_path: Path
) -> None:
    """POST {session}/rewind is 409 while the approval waits, then 201 and 200 for the same
    event id, 404 for an unknown invocation, 403 outside the token's scope; POST
    {session}/fork is 201, then 409 for a taken id; both are in the OpenAPI document."""
    key = _key()
    base = f"/v1/apps/{key.app_name}/users/{key.user_id}/sessions/{key.session_id}"
    async with _file_worker(run_worker) as stores:
        deployment = Deployment(dev_server.address, stores.task_queue, tmp_path)
        (tmp_path / "gateway").mkdir()
        with gateway_process(deployment, tmp_path / "gateway") as gateway:
            paris = await _turn(stores.adk, key, "What is the weather in Paris?")
            waiting = await _waiting_purchase(stores.adk, key)
            busy = await _call(gateway, f"{base}/rewind", {"before_invocation_id": paris})
            assert busy.status == 409 and busy.json["error"]["type"] == "session_busy"
            await _approve(waiting)
            body = {"before_invocation_id": paris, "event_id": "rw-http"}
            assert (await _call(gateway, f"{base}/rewind", body, token=OTHER_TOKEN)).status == 403
            created = await _call(gateway, f"{base}/rewind", body)
            assert created.status == 201, created.text
            assert created.json["artifact_delta"] == {"report.txt": 2}
            assert (await _call(gateway, f"{base}/rewind", body)).status == 200
            unknown = await _call(gateway, f"{base}/rewind", {"before_invocation_id": "e-x"})
            assert unknown.status == 404 and unknown.json["error"]["type"] == "unknown_invocation"
            fork_body = {"invocation_id": paris, "new_session_id": "s-http-fork"}
            forked = await _call(gateway, f"{base}/fork", fork_body)
            assert forked.status == 201 and forked.json["session_id"] == "s-http-fork"
            other = SessionKey(APP_NAME, USER, f"{key.session_id}-other")
            await _turn(stores.adk, other, "What is the weather in Lima?")
            taken_body = {"invocation_id": paris, "new_session_id": other.session_id}
            taken = await _call(gateway, f"{base}/fork", taken_body)
            assert taken.status == 409 and taken.json["error"]["type"] == "session_exists"
            document = (await asyncio.to_thread(gateway.call, "GET", "/openapi.json")).json
        state = await stores.sessions.get_state(key)
    assert state == {}
    paths = document["paths"]
    assert {"post"} == set(paths["/v1/apps/{app}/users/{user}/sessions/{session}/rewind"])
    assert (
        "201" in paths["/v1/apps/{app}/users/{user}/sessions/{session}/fork"]["post"]["responses"]
    )
