"""Forgetting on the dev server, with per-session data keys and sealed stores.

Three sessions of the weather example run through one worker whose key file turns on data
keys (kept in ``sessions.db``) and sealed stores: s1 and s2 buy a report (s1 approved by
signal, s2 by update), s3 is left waiting for its approval. ``adk-temporal forget
--session s1`` then leaves every kind of s1 payload in Temporal history — workflow input,
activity inputs and results, memo, signal — failing to decode with ``ForgottenError``, while
s2's decode as before; s1's rows and artifacts are gone, a copy of its artifact bytes no
longer opens, the codec server shows "forgotten", and the forget log names who and why.
Forgetting s3 cancels its waiting run first; the gateway forgets a user, logged with its
token. A retention sweep, run by the app's Temporal
schedule, forgets exactly the sessions idle past ``App.retention``.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from google.genai import types
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import (
    Client,
    ScheduleActionExecutionStartWorkflow,
    WorkflowExecutionStatus,
)

from adk_temporal.app import App, Stores
from adk_temporal.artifacts import ArtifactService, ListRequest
from adk_temporal.client import AdkClient
from adk_temporal.codec import EncryptionCodec, EncryptionKeys, write_key_file
from adk_temporal.codec_server import CodecServer
from adk_temporal.devserver import DevServer
from adk_temporal.errors import ForgottenError, SessionNotFoundError
from adk_temporal.events import Event
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey, workflow_id_for
from adk_temporal.keys import DataKeySettings, StoreSealer, Target
from adk_temporal.keys.sealing import open_bytes
from adk_temporal.ports import free_port
from adk_temporal.sessions import SessionService, SqliteSessionService
from adk_temporal.web.auth import TokenBook
from adk_temporal.web.gateway import Gateway
from adk_temporal.web.server import create_app
from adk_temporal.worker import artifact_store, build_worker, session_store

from ..commands import adk_command, offline_env

pytestmark = pytest.mark.integration

USER = "forget-user"
TOKEN = "forget-codec-token-4d2a9e0c"
API_TOKEN = "t-forget-api-0123456789abcdef"


@dataclass
class World:
    """The deployment: key file, data directory, worker client and the three sessions."""

    server: DevServer
    app_name: str
    key_file: Path
    data_dir: Path
    adk: AdkClient
    task_queue: str
    sessions: dict[str, SessionKey]
    cities: dict[str, str]
    report_bytes: bytes
    """s1's ``report.txt`` as the artifact store holds it, copied before the forget."""
    adk_sessions: SessionService
    """The worker's session store."""
    artifacts: ArtifactService
    """The worker's artifact store."""

    def codec(self) -> EncryptionCodec:
        """A fresh codec over the key file, as another process would build it."""
        return EncryptionCodec.from_file(self.key_file)

    def cli(
        self, *args: str, server: bool = True, stores: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """One ``adk-temporal`` command with the key file (and the server, and the stores)."""
        where = ["--address", self.server.address, "--task-queue", self.task_queue]
        data = ["--data-dir", str(self.data_dir)]
        return subprocess.run(
            [
                *adk_command(),
                *args,
                *(where if server else []),
                *(data if stores else []),
                "--encryption-key-file",
                str(self.key_file),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=offline_env(),
            stdin=subprocess.DEVNULL,
        )


def _key_file(path: Path) -> Path:
    settings = DataKeySettings(store="sqlite:data/sessions.db", seal_stores=True)
    keys = EncryptionKeys.generate()
    write_key_file(path, EncryptionKeys(keys.current, keys.keys, data_keys=settings))
    return path


async def _buy(adk: AdkClient, app_name: str, key: SessionKey, city: str, how: str) -> None:
    """A paid report in ``key``: approved by signal or update, or left waiting."""
    handle = await adk.start(
        app_name, key.user_id, key.session_id, "weather_agent", f"Buy a weather report for {city}"
    )
    await handle.wait_for_status("awaiting_confirmation", timeout=60)
    if how == "wait":
        return
    [request] = await handle.pending()
    assert isinstance(request, PendingConfirmation)
    await handle.confirm(request.id, True, {"note": f"ok-{city}"}, checked=how == "update")
    assert (await handle.result()).status == "completed"


@pytest.fixture(scope="module")
async def world(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[World]:
    """The worker, serving while the module's tests run, and s1..s3 already played."""
    root = tmp_path_factory.mktemp("forget")
    key_file = _key_file(root / "keys.json")
    data_dir = root / "data"
    codec = EncryptionCodec.from_file(key_file)
    assert codec.seals_stores and codec.data_keys is not None
    sessions = session_store(data_dir, keys=codec.data_keys)
    artifacts = artifact_store(data_dir, keys=codec.data_keys)
    task_queue = f"forget-{uuid.uuid4().hex[:8]}"
    app_name = f"forget-app-{uuid.uuid4().hex[:6]}"
    adk = await AdkClient.connect(
        dev_server.address, task_queue=task_queue, session_service=sessions, payload_codec=codec
    )
    app = App(
        agents=[build_weather_agent("scripted:weather")],
        name=app_name,
        retention=timedelta(days=30),
    )
    worker = build_worker(
        adk.client,
        app,
        task_queue=task_queue,
        stores=Stores(sessions, artifacts),
        max_cached_workflows=0,
    )
    keys = {
        n: SessionKey(app_name, USER, f"{n}-{uuid.uuid4().hex[:6]}") for n in ("s1", "s2", "s3")
    }
    cities = {n: f"Q{uuid.uuid4().hex[:6]}ville" for n in keys}
    async with worker:
        await _buy(adk, app_name, keys["s1"], cities["s1"], "signal")
        await _buy(adk, app_name, keys["s2"], cities["s2"], "update")
        await _buy(adk, app_name, keys["s3"], cities["s3"], "wait")
        report = data_dir / "artifacts" / app_name / USER / keys["s1"].session_id / "report.txt"
        [stored] = report.glob("1.*.data")
        yield World(
            dev_server,
            app_name,
            key_file,
            data_dir,
            adk,
            task_queue,
            keys,
            cities,
            stored.read_bytes(),
            sessions,
            artifacts,
        )
    await sessions.close()


def _payloads(event: HistoryEvent) -> Iterator[tuple[str, Payload]]:
    """(kind, payload) of the payloads an event carries that forget must reach."""
    kinds = {
        "workflow_execution_started_event_attributes": "workflow input",
        "activity_task_scheduled_event_attributes": "activity input",
        "activity_task_completed_event_attributes": "activity result",
        "workflow_execution_signaled_event_attributes": "signal",
        "workflow_execution_update_accepted_event_attributes": "update",
        "workflow_properties_modified_event_attributes": "memo",
    }
    attributes = event.WhichOneof("attributes")
    kind = kinds.get(attributes or "")
    if kind is None:
        return
    body = getattr(event, attributes or "")
    if kind == "memo":
        yield from ((kind, p) for p in body.upserted_memo.fields.values())
    elif kind == "update":
        yield from ((kind, p) for p in body.accepted_request.input.args.payloads)
    elif kind == "activity result":
        yield from ((kind, p) for p in body.result.payloads)
    else:
        yield from ((kind, p) for p in body.input.payloads)


async def _history_payloads(world: World, key: SessionKey) -> list[tuple[str, Payload]]:
    """Every payload of the session's runs, raw (a client without the codec)."""
    raw = await Client.connect(world.server.address)
    found: list[tuple[str, Payload]] = []
    async for wf in raw.list_workflows(f"WorkflowId = '{workflow_id_for(key)}'"):
        history = await raw.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        for event in history.events:
            found.extend(_payloads(event))
    return found


@pytest.fixture(scope="module")
async def s1_before(world: World) -> list[tuple[str, Payload]]:
    """s1's raw payloads, each decoding before the forget; then s1 is forgotten by the CLI."""
    payloads = await _history_payloads(world, world.sessions["s1"])
    codec = world.codec()
    decoded = b"".join(p.data for p in await codec.decode([p for _, p in payloads]))
    assert world.cities["s1"].encode() in decoded
    key = world.sessions["s1"]
    done = world.cli(
        "forget",
        "--app",
        key.app_name,
        "--user",
        key.user_id,
        "--session",
        key.session_id,
        "--reason",
        "erasure request #77",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)
    assert entry["target"] == str(key) and entry["outcome"] == "forgotten"
    return payloads


async def test_every_kind_of_forgotten_payload_fails_typed(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """After forget, each kind of s1 payload in history raises ForgottenError naming s1."""
    kinds = {kind for kind, _ in s1_before}
    assert {"workflow input", "activity input", "activity result", "memo", "signal"} <= kinds
    codec = world.codec()
    for kind, payload in s1_before:
        with pytest.raises(ForgottenError) as caught:
            await codec.decode([payload])
        assert caught.value.scope == str(world.sessions["s1"]), kind


async def test_the_cli_says_a_forgotten_run_is_forgotten(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """`adk-temporal show` of a forgotten run fails naming the forget, not the key file."""
    done = world.cli("show", workflow_id_for(world.sessions["s1"]), stores=False)
    assert done.returncode == 1 and "ForgottenError" in done.stderr, done.stderr
    assert "adk-temporal forgotten" in done.stderr and "same key file" not in done.stderr


async def test_other_sessions_decode_as_before(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """s2's payloads, every kind including its update, still decode after s1 is forgotten."""
    payloads = await _history_payloads(world, world.sessions["s2"])
    assert {"workflow input", "activity input", "activity result", "memo", "update"} <= {
        kind for kind, _ in payloads
    }
    decoded = await world.codec().decode([p for _, p in payloads])
    assert world.cities["s2"].encode() in b"".join(p.data for p in decoded)
    assert {p.metadata["encoding"] for p in decoded}.isdisjoint({b"binary/encrypted"})


async def test_forgotten_rows_and_artifacts_are_gone(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """s1's session rows and artifacts are deleted; leftover bytes no longer open; s2's stay."""
    codec = world.codec()
    assert codec.data_keys is not None
    sessions = session_store(world.data_dir, keys=codec.data_keys)
    artifacts = artifact_store(world.data_dir, keys=codec.data_keys)
    try:
        with pytest.raises(SessionNotFoundError):
            await sessions.get(world.sessions["s1"])
        listed = await artifacts.list(ListRequest.of(world.sessions["s1"]))
        assert "report.txt" not in listed.file_names
        with pytest.raises(ForgottenError):
            await open_bytes(codec.data_keys, world.report_bytes, name="report.txt")
        kept = await sessions.get(world.sessions["s2"])
        assert any(world.cities["s2"] in e.text() for e in kept.events)
    finally:
        await sessions.close()


async def test_the_forget_log_names_who_and_why(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """`adk-temporal forgotten` lists s1's forget: by whom, the reason, the key and artifacts."""
    key = world.sessions["s1"]
    done = world.cli(
        "forgotten",
        "--app",
        key.app_name,
        "--user",
        key.user_id,
        "--json",
        server=False,
        stores=False,
    )
    assert done.returncode == 0, done.stderr
    [entry] = [e for e in json.loads(done.stdout) if e["target"] == str(key)]
    assert entry["reason"] == "erasure request #77" and entry["channel"] == "cli"
    assert entry["by"] and entry["key_ids"] and entry["artifacts"] >= 1
    assert entry["sessions"] == [str(key)]


async def test_codec_server_shows_forgotten_not_an_error(
    world: World, s1_before: list[tuple[str, Payload]]
) -> None:
    """The codec server decodes a forgotten payload to a "forgotten" note, s2's as ever."""
    s2 = await _history_payloads(world, world.sessions["s2"])
    batch = [json_format.MessageToDict(s1_before[0][1]), json_format.MessageToDict(s2[0][1])]
    with CodecServer(world.codec(), TOKEN) as server:
        reply = await asyncio.to_thread(_post_decode, server.url, batch)
    note, plain = (json.loads(base64.b64decode(p["data"])) for p in reply["payloads"])
    assert "forgotten" in note and str(world.sessions["s1"]) in note["forgotten"]
    assert world.cities["s2"] in json.dumps(plain)


def _post_decode(url: str, payloads: list[dict[str, object]]) -> dict[str, list[dict[str, str]]]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(
            "POST",
            "/decode",
            body=json.dumps({"payloads": payloads}),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        response = conn.getresponse()
        assert response.status == 200
        loaded: dict[str, list[dict[str, str]]] = json.loads(response.read())
        return loaded
    finally:
        conn.close()


async def test_forgetting_a_waiting_session_cancels_its_run_first(world: World) -> None:
    """s3 waits for approval: forget cancels the run, then deletes its rows and key."""
    key = world.sessions["s3"]
    entry = await world.adk.forget(
        Target(app_name=key.app_name, user_id=key.user_id, session_id=key.session_id),
        by="dpo@example.com",
        reason="customer left",
        artifact_service=artifact_store(world.data_dir, keys=world.adk.data_keys),
    )
    assert entry.runs_cancelled == [workflow_id_for(key)]
    description = await world.adk.client.get_workflow_handle(workflow_id_for(key)).describe()
    assert description.status == WorkflowExecutionStatus.CANCELED
    with pytest.raises(SessionNotFoundError):
        assert world.adk.data_keys is not None
        await session_store(world.data_dir, keys=world.adk.data_keys).get(key)
    payloads = await _history_payloads(world, key)
    with pytest.raises(ForgottenError):
        await world.codec().decode([payloads[0][1]])


async def _old_session(world: World, session_id: str, days_ago: float) -> SessionKey:
    """A session last updated ``days_ago`` days ago, with one event, in the worker's store."""
    codec = world.codec()
    assert codec.data_keys is not None
    then = time.time() - days_ago * 86400
    store = SqliteSessionService(
        world.data_dir / "sessions.db", clock=lambda: then, sealer=StoreSealer(codec.data_keys)
    )
    key = SessionKey(world.app_name, "ret-user", session_id)
    try:
        await store.create(key)
        event = Event(
            id=f"e-{session_id}",
            invocation_id="e-old",
            author="user",
            timestamp=then,
            content=types.Content(role="user", parts=[types.Part(text=f"old {session_id}")]),
        )
        await store.append_events(key, [event])
    finally:
        await store.close()
    return key


async def test_retention_schedule_forgets_exactly_the_sessions_past_the_limit(world: World) -> None:
    """With 30 days' retention, the schedule's sweep forgets the 40- and 31-day-old sessions
    (a dry run lists them first) and keeps the 5-day-old one and the fresh ones."""
    tag = uuid.uuid4().hex[:6]
    old = [await _old_session(world, f"old-{tag}-{d}", d) for d in (40, 31)]
    recent = await _old_session(world, f"recent-{tag}", 5)
    listed = await world.adk.sweep_retention(world.app_name, dry_run=True)
    assert [s.session for s in listed.sessions] == [str(k) for k in old]
    assert {s.outcome for s in listed.sessions} == {"would_forget"}
    schedule_id = await world.adk.schedule_retention(world.app_name, every=timedelta(days=1))
    schedule = world.adk.client.get_schedule_handle(schedule_id)
    await schedule.trigger()
    async with asyncio.timeout(60):
        while not (await schedule.describe()).info.recent_actions:
            await asyncio.sleep(0.2)
    action = (await schedule.describe()).info.recent_actions[0].action
    assert isinstance(action, ScheduleActionExecutionStartWorkflow)
    run = world.adk.client.get_workflow_handle(
        action.workflow_id, run_id=action.first_execution_run_id
    )
    report = await run.result()
    await schedule.delete()
    assert report["sessions"] and [s["session"] for s in report["sessions"]] == [
        str(k) for k in old
    ]
    keys = world.adk.data_keys
    assert keys is not None
    store = session_store(world.data_dir, keys=keys)
    try:
        for key in old:
            with pytest.raises(SessionNotFoundError):
                await store.get(key)
        assert (await store.get(recent)).events
        assert (await store.get(world.sessions["s2"])).events
    finally:
        await store.close()
    logged = [e for e in keys.store.entries(world.app_name) if e.channel == "retention"]
    assert sorted(e.target for e in logged) == sorted(str(k) for k in old)
    assert all(e.by == "retention" and "30 days" in e.reason for e in logged)


@asynccontextmanager
async def _serving(world: World) -> AsyncIterator[str]:
    """The gateway's ASGI app over the worker's client and stores, on a free port."""
    served = Gateway(adk=world.adk, sessions=world.adk_sessions, artifacts=world.artifacts)
    app = create_app(served, TokenBook.parse(f"{API_TOKEN} {world.app_name}", "tokens"))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(30):
            while not server.started:
                await asyncio.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def _post(where: str, path: str, body: dict[str, object]) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(where, timeout=60)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {API_TOKEN}"},
        )
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        conn.close()


async def test_the_gateway_forgets_a_user_logged_with_its_token(world: World) -> None:
    """POST {user}/forget needs "all": true; a dry run of the session changes nothing; the
    forget is logged by the token (never a name in the body) through the gateway."""
    key = SessionKey(world.app_name, "api-user", f"s4-{uuid.uuid4().hex[:6]}")
    await _buy(world.adk, world.app_name, key, world.cities["s2"], "update")
    user = f"/v1/apps/{world.app_name}/users/{key.user_id}"
    async with _serving(world) as where:
        status, _ = await asyncio.to_thread(_post, where, f"{user}/forget", {"reason": "gdpr"})
        assert status == 422
        status, dry = await asyncio.to_thread(
            _post,
            where,
            f"{user}/sessions/{key.session_id}/forget",
            {"reason": "gdpr", "dry_run": True},
        )
        assert status == 200 and dry["outcome"] == "dry_run"
        assert (await world.adk_sessions.get(key)).events
        status, entry = await asyncio.to_thread(
            _post, where, f"{user}/forget", {"reason": "gdpr art. 17", "all": True}
        )
    assert status == 200, entry
    assert entry["sessions"] == [str(key)] and entry["channel"] == "gateway"
    assert entry["by"].startswith("token:") and entry["level"] == "user"
    with pytest.raises(SessionNotFoundError):
        await world.adk_sessions.get(key)
    payloads = await _history_payloads(world, key)
    with pytest.raises(ForgottenError):
        await world.codec().decode([payloads[0][1]])


async def test_a_run_no_worker_takes_is_terminated_after_the_grace(world: World) -> None:
    """No worker serves the session's run: the cancel is never taken, so after the grace
    the forget terminates the run and still deletes everything."""
    orphan = f"orphan-{uuid.uuid4().hex[:6]}"
    adk = AdkClient(
        world.adk.client, task_queue=f"nobody-{orphan}", session_service=world.adk_sessions
    )
    key = SessionKey(orphan, USER, "s5")
    await adk.start(*key, "weather_agent", "hello")
    entry = await adk.forget(
        Target(app_name=key.app_name, user_id=key.user_id, session_id=key.session_id),
        by="ops",
        reason="orphaned run",
        grace=timedelta(seconds=1),
    )
    assert entry.runs_cancelled == [workflow_id_for(key)]
    description = await adk.client.get_workflow_handle(workflow_id_for(key)).describe()
    assert description.status == WorkflowExecutionStatus.TERMINATED
    payloads = await _history_payloads(world, key)
    with pytest.raises(ForgottenError):
        await world.codec().decode([payloads[0][1]])
