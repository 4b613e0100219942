"""A history recorded with encrypted payloads replays with its key, and only with it.

``encrypted/approve.json`` was recorded from a real run (a paid report, approved with a
payload) whose client and worker shared ``encrypted/keys.json``. That key is committed for
this test only: it protects nothing and must never be used for anything else. Like the
histories in ``histories/``, the recording stands for runs in flight and is never
re-recorded; ``ADK_RECORD_HISTORIES=1 pytest -n0 tests/replay/test_encrypted_replay.py``
records it when it is missing.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.converter import PayloadCodec
from temporalio.worker import Replayer

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.codec import EncryptionCodec, EncryptionKeys, rotate_key_file
from adk_temporal.converter import adk_data_converter
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.keys import FileKeyStore
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.worker import artifact_store, build_worker, session_store

ENCRYPTED = Path(__file__).parent / "encrypted"
KEY_FILE = ENCRYPTED / "keys.json"
HISTORY = ENCRYPTED / "approve.json"
RECORD = os.environ.get("ADK_RECORD_HISTORIES") == "1"
CITY = "Oslo"
APPROVAL_NOTE = "approved by the replay test"


def _replayer(codec: PayloadCodec | None) -> Replayer:
    # The plugin configures the replayer as it configures workers; it keeps the codec of
    # the converter it is given, exactly as a worker keeps its client's.
    return Replayer(
        workflows=[],
        plugins=[AdkPlugin(App([]), stores=Stores(InMemorySessionService()))],
        data_converter=adk_data_converter(codec=codec),
    )


def _history() -> WorkflowHistory:
    data = json.loads(HISTORY.read_text())
    return WorkflowHistory.from_json(data["workflow_id"], data["history"])


def _encodings(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        metadata = node.get("metadata")
        if isinstance(metadata, dict) and "encoding" in metadata:
            yield path, base64.b64decode(metadata["encoding"]).decode()
        for key, value in node.items():
            yield from _encodings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for value in node:
            yield from _encodings(value, path)


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
def test_the_recorded_history_holds_only_sealed_payloads() -> None:
    """The committed history itself carries no plaintext of the run."""
    text = HISTORY.read_text()
    assert CITY not in text and APPROVAL_NOTE not in text
    encodings = {
        encoding
        for path, encoding in _encodings(json.loads(text))
        # Plaintext by design: search attributes stay queryable, patch markers hold ids.
        if "searchAttributes" not in path and "markerRecordedEventAttributes" not in path
    }
    assert encodings == {"binary/encrypted"}


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
async def test_the_encrypted_history_replays_with_the_key() -> None:
    """Replayed with the key file's codec, the history matches today's workflow code."""
    result = await _replayer(EncryptionCodec.from_file(KEY_FILE)).replay_workflow(
        _history(), raise_on_replay_failure=False
    )
    assert result.replay_failure is None, result.replay_failure


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
async def test_the_encrypted_history_replays_once_data_keys_are_turned_on(
    tmp_path: Path,
) -> None:
    """Turning on per-session data keys leaves a history sealed with the master key readable:
    its replay, which re-encodes the run's commands with the session's key, still matches."""
    ring = EncryptionKeys.from_json(KEY_FILE.read_text())
    codec = EncryptionCodec(ring, key_store=FileKeyStore(tmp_path / "data-keys"))
    result = await _replayer(codec).replay_workflow(_history(), raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
    assert codec.data_keys is not None and codec.data_keys.store.scopes("weather")


@pytest.mark.skipif(RECORD, reason="histories are being recorded")
async def test_without_the_key_the_history_does_not_decode() -> None:
    """Without a codec, or with another key under the same id, replay fails on decoding."""
    without = await _replayer(None).replay_workflow(_history(), raise_on_replay_failure=False)
    assert without.replay_failure is not None
    assert "has no key file" in str(without.replay_failure)
    impostor = EncryptionCodec(
        EncryptionKeys.generate(EncryptionKeys.from_json(KEY_FILE.read_text()).current)
    )
    wrong = await _replayer(impostor).replay_workflow(_history(), raise_on_replay_failure=False)
    assert wrong.replay_failure is not None
    # The task failure is itself sealed (with the impostor key); its type stays readable.
    assert "PayloadAuthenticationError" in str(wrong.replay_failure)


@pytest.mark.skipif(
    not RECORD or HISTORY.exists(), reason="set ADK_RECORD_HISTORIES=1 to record a missing history"
)
async def test_record_the_encrypted_history(dev_server: DevServer, tmp_path: Path) -> None:
    """Record the approval scenario with the test-only key, then check it replays."""
    if not KEY_FILE.exists():
        rotate_key_file(KEY_FILE)
    codec = EncryptionCodec.from_file(KEY_FILE)
    sessions = session_store(tmp_path / "data")
    task_queue = f"enc-replay-{uuid.uuid4().hex[:8]}"
    adk = await AdkClient.connect(
        dev_server.address, task_queue=task_queue, session_service=sessions, payload_codec=codec
    )
    worker = build_worker(
        adk.client,
        App(agents=[build_weather_agent("scripted:weather")]),
        task_queue=task_queue,
        stores=Stores(sessions, artifact_store(tmp_path / "data")),
        max_cached_workflows=0,
    )
    async with worker:
        handle = await adk.start(
            APP_NAME,
            "u-replay",
            f"replay-encrypted-{uuid.uuid4().hex[:6]}",
            "weather_agent",
            f"Buy a weather report for {CITY}",
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True, {"note": APPROVAL_NOTE})
        await handle.result()
    await sessions.close()
    history = await adk.client.get_workflow_handle(
        handle.workflow_id, run_id=handle.run_id
    ).fetch_history()
    body = {"workflow_id": handle.workflow_id, "history": history.to_json_dict()}
    HISTORY.write_text(json.dumps(body, indent=1) + "\n")
    await _replayer(codec).replay_workflow(_history())
