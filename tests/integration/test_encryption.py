"""Encrypted payloads end to end on the dev server.

A weather invocation runs through a client and a worker that share one key file. Temporal's
own history (``temporal workflow show``) then holds none of its message, tool arguments,
results or approval payload; the ``adk-temporal codec-server`` command decodes all of it
for the ``temporal`` CLI and refuses a wrong or missing token; after ``adk-temporal
rotate-key`` the next run is sealed with the new key while the old run stays readable,
through the codec server, ``adk-temporal show`` and ``adk-temporal events``. The same holds
for the CLI's own worker, run, pending and confirm given ``--encryption-key-file`` or
``ADK_ENCRYPTION_KEY_FILE``, and for ``adk-temporal demo``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import http.client
import json
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.codec import KEY_FILE_ENV, EncryptionCodec
from adk_temporal.converter import adk_data_converter
from adk_temporal.devserver import DevServer, find_temporal_binary
from adk_temporal.examples.weather import APP_NAME, _forecast, build_weather_agent
from adk_temporal.flow.messages import InvocationResult, PendingConfirmation
from adk_temporal.ports import free_port
from adk_temporal.worker import artifact_store, build_worker, session_store

from ..commands import adk_command, new_key_file, offline_env
from .workers import Deployment as WorkerDeployment
from .workers import worker_process

pytestmark = pytest.mark.integration

USER = "enc-user"
TOKEN = "integration-codec-token-5b1f0c"
# Payload paths Temporal writes in plaintext by design: search attributes must stay
# queryable, and patch markers carry only the patch ids of the workflow code.
PLAINTEXT_BY_DESIGN = ("searchAttributes", "markerRecordedEventAttributes")


@dataclass(frozen=True)
class Markers:
    """Distinctive strings that may only ever appear decrypted."""

    city: str  # the message, the tool arguments and results, the approval request
    note: str  # the message only
    forecast: str  # the tool's result and the final answer only
    approval: str  # the approval's payload only

    def all(self) -> list[str]:
        """Every marker."""
        return [self.city, self.note, self.forecast, self.approval]


def _markers() -> Markers:
    tag = uuid.uuid4().hex[:8]
    city = f"Qx{tag}ville"
    return Markers(
        city=city,
        note=f"note{tag}msg",
        forecast=_forecast(city)["forecast"],
        approval=f"approved-{tag}-by-ops",
    )


@dataclass(frozen=True)
class Run:
    """One invocation: a run of its session's workflow."""

    workflow_id: str
    run_id: str


@dataclass
class Deployment:
    """A key file, a data directory, and the codec server's address."""

    server: DevServer
    root: Path
    key_file: Path
    data_dir: Path
    codec_url: str

    def env(self, **extra: str) -> dict[str, str]:
        """The CLI's environment: offline, with no key file unless one is passed."""
        env = offline_env()
        for name in ("ADK_ENCRYPTION_KEY_FILE", "ADK_CODEC_TOKEN", "ADK_CODEC_TOKEN_FILE"):
            env.pop(name, None)
        env.pop("TEMPORAL_CODEC_AUTH", None)
        return {**env, **extra}

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """Run one ``adk-temporal`` command to completion."""
        return subprocess.run(
            [*adk_command(), *args],
            capture_output=True,
            text=True,
            timeout=90,
            env=self.env(**env),
            stdin=subprocess.DEVNULL,
        )

    def history(self, run: Run, auth: str | None = None) -> tuple[int, str]:
        """``temporal workflow show --output json``: raw, or through the codec server."""
        cmd = [
            find_temporal_binary(),
            "workflow",
            "show",
            "--output",
            "json",
            "--workflow-id",
            run.workflow_id,
            "--run-id",
            run.run_id,
            "--address",
            self.server.address,
        ]
        env = self.env()
        if auth is not None:
            cmd += ["--codec-endpoint", self.codec_url]
            # The token travels in the environment, never on the command line.
            env["TEMPORAL_CODEC_AUTH"] = auth
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        return done.returncode, done.stdout + done.stderr


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _readable(text: str) -> str:
    """The text plus every base64 string in it decoded: payload data is base64 in JSON."""
    parts = [text]
    for value in _strings(json.loads(text)):
        try:
            parts.append(base64.b64decode(value, validate=True).decode("utf-8", "replace"))
        except (binascii.Error, ValueError):
            continue
    return "\n".join(parts)


def _payload_encodings(node: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(path, encoding, key id) of every payload in a history's JSON."""
    if isinstance(node, dict):
        metadata = node.get("metadata")
        if isinstance(metadata, dict) and "encoding" in metadata:
            key_id = metadata.get("encryption-key-id")
            yield (
                path,
                base64.b64decode(metadata["encoding"]).decode(),
                base64.b64decode(key_id).decode() if key_id else "",
            )
        for key, value in node.items():
            yield from _payload_encodings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _payload_encodings(value, f"{path}[{index}]")


def _sealed_payload(raw_history: str) -> dict[str, Any]:
    """The first encrypted payload of a raw history, in protocol JSON."""
    events = json.loads(raw_history)["events"]
    payload: dict[str, Any] = events[0]["workflowExecutionStartedEventAttributes"]["input"][
        "payloads"
    ][0]
    return payload


def _post_decode(url: str, payloads: list[dict[str, Any]], token: str | None) -> int:
    host, port = url.removeprefix("http://").split(":")
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("POST", "/decode", body=json.dumps({"payloads": payloads}), headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


async def _wait_listening(port: int, process: subprocess.Popen[str]) -> None:
    async with asyncio.timeout(30):
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return
            except OSError:
                await asyncio.sleep(0.05)


async def _invoke(deployment: Deployment, session_id: str, markers: Markers) -> list[Run]:
    """A forecast, then a paid report approved with a payload, in one session."""
    codec = EncryptionCodec.from_file(deployment.key_file)
    sessions = session_store(deployment.data_dir)
    task_queue = f"enc-{uuid.uuid4().hex[:8]}"
    adk = await AdkClient.connect(
        deployment.server.address,
        task_queue=task_queue,
        session_service=sessions,
        payload_codec=codec,
    )
    worker = build_worker(
        adk.client,
        App(agents=[build_weather_agent("scripted:weather")]),
        task_queue=task_queue,
        stores=Stores(sessions, artifact_store(deployment.data_dir)),
        max_cached_workflows=0,
    )
    # AdkPlugin configures the worker from the client's converter: the codec carries over.
    assert worker.client.data_converter.payload_codec is codec
    ids = []
    try:
        async with worker:
            forecast = await adk.start(
                APP_NAME,
                USER,
                session_id,
                "weather_agent",
                f"What's the weather in {markers.city}? {markers.note}",
            )
            result: InvocationResult = await forecast.result()
            assert result.status == "completed" and markers.forecast in result.final_text
            paid = await adk.start(
                APP_NAME,
                USER,
                session_id,
                "weather_agent",
                f"Buy a weather report for {markers.city}! {markers.note}",
            )
            await paid.wait_for_status("awaiting_confirmation", timeout=30)
            [request] = await paid.pending()
            assert isinstance(request, PendingConfirmation)
            assert request.payload == {"city": markers.city, "price_usd": 2.0}
            await paid.confirm(request.id, True, {"note": markers.approval})
            assert (await paid.result()).status == "completed"
            ids = [Run(h.workflow_id, h.run_id or "") for h in (forecast, paid)]
    finally:
        await sessions.close()
    return ids


@pytest.fixture(scope="module")
async def deployment(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Deployment]:
    """A key file with one key and `adk-temporal codec-server` serving it."""
    root = tmp_path_factory.mktemp("encryption")
    key_file = new_key_file(root / "keys.json")
    token_file = root / "codec-token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    port = free_port()
    process = subprocess.Popen(
        [
            *adk_command(),
            "codec-server",
            "--encryption-key-file",
            str(key_file),
            "--token-file",
            str(token_file),
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=offline_env(),
    )
    try:
        await _wait_listening(port, process)
        yield Deployment(dev_server, root, key_file, root / "data", f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
        # Started with the token in a file: it must appear in none of the server's output.
        assert TOKEN not in out + err


@dataclass
class FirstRun:
    """The invocations sealed with the first key."""

    session_id: str
    runs: list[Run]
    markers: Markers


@pytest.fixture(scope="module")
async def first_run(deployment: Deployment) -> FirstRun:
    """Two invocations of one session, sealed with key k1."""
    markers = _markers()
    session_id = f"enc-{uuid.uuid4().hex[:6]}"
    return FirstRun(session_id, await _invoke(deployment, session_id, markers), markers)


async def test_history_holds_no_plaintext(deployment: Deployment, first_run: FirstRun) -> None:
    """Raw history: no message, argument, result or approval; every payload sealed with k1."""
    for run in first_run.runs:
        code, raw = deployment.history(run)
        assert code == 0, raw
        readable = _readable(raw)
        for marker in first_run.markers.all():
            assert marker not in readable, f"{marker!r} in the history of {run}"
        payloads = list(_payload_encodings(json.loads(raw)))
        sealed = [p for p in payloads if not any(part in p[0] for part in PLAINTEXT_BY_DESIGN)]
        assert len(sealed) > 5
        assert {(encoding, key) for _, encoding, key in sealed} == {("binary/encrypted", "k1")}
        if run == first_run.runs[1]:
            # The approval crossed as a checked update: its input is one of them.
            assert any("acceptedRequest.input" in path for path, _, _ in sealed)


async def test_the_codec_server_decodes_history_for_the_temporal_cli(
    deployment: Deployment, first_run: FirstRun
) -> None:
    """With the bearer token every marker reads back; a wrong or missing token is refused."""
    forecast_id, paid_id = first_run.runs
    code, decoded = deployment.history(paid_id, auth=f"Bearer {TOKEN}")
    assert code == 0, decoded
    readable = _readable(decoded)
    for marker in (first_run.markers.city, first_run.markers.note, first_run.markers.approval):
        assert marker in readable
    code, decoded = deployment.history(forecast_id, auth=f"Bearer {TOKEN}")
    assert first_run.markers.forecast in _readable(decoded)

    _, raw = deployment.history(paid_id)
    payload = _sealed_payload(raw)
    assert _post_decode(deployment.codec_url, [payload], TOKEN) == 200
    assert _post_decode(deployment.codec_url, [payload], "wrong-" + TOKEN) == 403
    assert _post_decode(deployment.codec_url, [payload], None) == 401


async def test_the_cli_runs_encrypted_end_to_end(deployment: Deployment, tmp_path: Path) -> None:
    """worker, run, pending and confirm given the key file: the run completes, sealed."""
    markers = _markers()
    key = str(deployment.key_file)
    current = EncryptionCodec.from_file(key).current_key_id
    task_queue = f"enc-cli-{uuid.uuid4().hex[:8]}"
    data_dir = tmp_path / "cli-data"
    session_id = f"enc-{uuid.uuid4().hex[:6]}"
    workflow_id = f"adk/{APP_NAME}/{USER}/{session_id}"
    connection = ["--address", deployment.server.address, "--task-queue", task_queue]
    workers = WorkerDeployment(deployment.server.address, task_queue, data_dir)
    with worker_process(workers, env={KEY_FILE_ENV: key}):
        paused = deployment.cli(
            "run",
            *connection,
            "--data-dir",
            str(data_dir),
            "--app",
            APP_NAME,
            "--user",
            USER,
            "--session",
            session_id,
            "--agent",
            "weather_agent",
            f"Buy a weather report for {markers.city}! {markers.note}",
            "--encryption-key-file",
            key,
        )
        assert paused.returncode == 3, paused.stdout + paused.stderr
        pending = deployment.cli(
            "pending",
            *connection,
            "--json",
            "--workflow-id",
            workflow_id,
            "--encryption-key-file",
            key,
        )
        assert pending.returncode == 0, pending.stderr
        [request] = json.loads(pending.stdout)
        approved = deployment.cli(
            "confirm",
            workflow_id,
            request["id"],
            "--approve",
            "--payload",
            json.dumps({"note": markers.approval}),
            "--checked",
            *connection,
            "--encryption-key-file",
            key,
        )
        assert approved.returncode == 0, approved.stderr
        client = await Client.connect(
            deployment.server.address,
            data_converter=adk_data_converter(codec=EncryptionCodec.from_file(key)),
        )
        handle = client.get_workflow_handle(workflow_id, result_type=InvocationResult)
        assert (await handle.result()).status == "completed"
    _, raw = deployment.history(Run(workflow_id, handle.result_run_id or ""))
    readable = _readable(raw)
    for marker in (markers.city, markers.note, markers.approval):
        assert marker not in readable
    sealed = {
        (encoding, key_id)
        for path, encoding, key_id in _payload_encodings(json.loads(raw))
        if not any(part in path for part in PLAINTEXT_BY_DESIGN)
    }
    assert sealed == {("binary/encrypted", current)}


def test_the_demo_runs_encrypted(deployment: Deployment) -> None:
    """`adk-temporal demo --encryption-key-file` runs the whole scenario sealed."""
    demo = deployment.cli("demo", "--encryption-key-file", str(deployment.key_file))
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "encoded by EncryptionCodec" in demo.stdout
    assert "demo finished" in demo.stdout


async def test_after_rotation_old_runs_stay_readable(
    deployment: Deployment, first_run: FirstRun
) -> None:
    """rotate-key: new runs use k2; old runs decode via the codec server, show and events."""
    rotated = deployment.cli("rotate-key", "--encryption-key-file", str(deployment.key_file))
    assert rotated.returncode == 0, rotated.stderr
    assert "current key k2" in rotated.stdout and "k1, k2" in rotated.stdout
    assert "=" not in rotated.stdout  # ids only, never base64 key material

    markers = _markers()
    session_id = f"enc-{uuid.uuid4().hex[:6]}"
    new_ids = await _invoke(deployment, session_id, markers)
    _, raw = deployment.history(new_ids[1])
    sealed = [
        (enc, key)
        for path, enc, key in _payload_encodings(json.loads(raw))
        if not any(part in path for part in PLAINTEXT_BY_DESIGN)
    ]
    assert set(sealed) == {("binary/encrypted", "k2")}

    # The codec server started before the rotation: it reads the new key from the file.
    _, decoded_new = deployment.history(new_ids[1], auth=f"Bearer {TOKEN}")
    assert markers.approval in _readable(decoded_new)
    _, decoded_old = deployment.history(first_run.runs[1], auth=f"Bearer {TOKEN}")
    assert first_run.markers.approval in _readable(decoded_old)

    old_id = first_run.runs[1].workflow_id
    address = deployment.server.address
    key = str(deployment.key_file)
    shown = deployment.cli("show", old_id, "--address", address, "--json")
    assert shown.returncode == 1
    assert "encrypted" in shown.stderr and "--encryption-key-file" in shown.stderr
    shown = deployment.cli(
        "show", old_id, "--address", address, "--json", "--encryption-key-file", key
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "completed"
    by_env = deployment.cli("list", "--address", address, "--json", ADK_ENCRYPTION_KEY_FILE=key)
    assert by_env.returncode == 0, by_env.stderr
    assert old_id in by_env.stdout

    events = deployment.cli(
        "events",
        "--data-dir",
        str(deployment.data_dir),
        "--app",
        APP_NAME,
        "--user",
        USER,
        "--session",
        first_run.session_id,
        "--json",
    )
    assert events.returncode == 0, events.stderr
    assert first_run.markers.city in events.stdout
