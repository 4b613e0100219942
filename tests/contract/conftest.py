"""Backend fixtures for the contract suites.

``open_service`` / ``service`` are parametrised over the three session backends (memory,
SQLite, a real PostgreSQL cluster), the two SQL ones also with their rows sealed by
per-session data keys kept in the same database. ``artifact_service`` is parametrised over
the three artifact backends, and the file backend behind ``SealedArtifactService``; tests
that must know where a backend truly differs ask for a capability fixture
(``canonical_uri_scheme``) instead of branching on the backend's name. The GCS backend
runs against one real fake-gcs-server process per test session, with a fresh bucket per
test.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path

import pytest
from google.cloud import storage
from google.genai import types

from adk_temporal.artifacts import (
    ArtifactService,
    FileArtifactService,
    GcsArtifactService,
    InMemoryArtifactService,
)
from adk_temporal.codec import EncryptionCodec, EncryptionKeys
from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation
from adk_temporal.keys import (
    FileKeyStore,
    KeyStore,
    PostgresKeyStore,
    SealedArtifactService,
    SqliteKeyStore,
    StoreSealer,
)
from adk_temporal.sessions import (
    InMemorySessionService,
    PostgresSessionService,
    SessionService,
    SqliteSessionService,
)
from adk_temporal.testing.fake_gcs import FakeGcsServer

ARTIFACT_BACKENDS = ("memory", "file", "gcs", "sealed-file")

RICH_BLOB = bytes(range(256)) * 3
"""The inline bytes of :func:`rich_event`."""


def rich_event() -> Event:
    """An event with every field set, and a changeable object in each that can hold one:
    calls, bytes, nested arguments and responses, confirmations, input requests, usage."""
    return Event(
        id="e-rich",
        invocation_id="e-42",
        author="report_agent",
        branch="root.report",
        isolation_scope="scope-1",
        timestamp=1_700_000_000.25,
        long_running_tool_ids=["adk-confirm-1"],
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="Let me check."),
                types.Part(
                    function_call=types.FunctionCall(
                        id="call-1",
                        name="buy_report",
                        args={"city": "Hangzhou", "pages": [1, {"n": 2}], "rush": None},
                    )
                ),
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call-0", name="get_weather", response={"temp": {"c": [21.5]}}
                    )
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=RICH_BLOB)),
            ],
        ),
        actions=EventActions(
            state_delta={"user:plan": "pro", "nested": {"x": [1, {"y": None}]}},
            artifact_delta={"report.txt": 3},
            requested_tool_confirmations={
                "call-1": ToolConfirmation(hint="Approve $5?", payload={"amount": [5]})
            },
            requested_inputs={
                "adk-input-1": InputRequest(
                    interrupt_id="adk-input-1",
                    function_call_id="call-2",
                    input_schema={"type": "object", "required": ["x"]},
                )
            },
            skip_summarization=True,
            transfer_to_agent="billing",
        ),
        usage_metadata=types.GenerateContentResponseUsageMetadata(total_token_count=15),
        error_code="E1",
        error_message="partial",
    )


class StepClock:
    """A clock that advances one second per reading, so times are predictable."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def sealer(store: KeyStore) -> StoreSealer:
    """Seals rows with per-session keys kept in ``store``, wrapped by a fresh master key."""
    codec = EncryptionCodec(EncryptionKeys.generate(), key_store=store)
    assert codec.data_keys is not None
    return StoreSealer(codec.data_keys)


# A sync fixture: starting the cluster and creating a database block, and pytest runs sync
# fixtures outside the event loop.
@pytest.fixture(params=["memory", "sqlite", "postgres", "sqlite-sealed", "postgres-sealed"])
def open_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[[], AbstractAsyncContextManager[SessionService]]:
    """Opens a session service of each backend over the test's own, empty storage."""
    if request.param == "memory":
        memory = InMemorySessionService(clock=StepClock())
        return lambda: nullcontext(memory)
    path = tmp_path / "sessions.db"
    if request.param == "sqlite":
        return lambda: SqliteSessionService(path, clock=StepClock())
    if request.param == "sqlite-sealed":
        rows = sealer(SqliteKeyStore(path))
        return lambda: SqliteSessionService(path, clock=StepClock(), sealer=rows)
    dsn: str = request.getfixturevalue("postgres_dsn")
    if request.param == "postgres-sealed":
        sealed = sealer(PostgresKeyStore(dsn))
        return lambda: PostgresSessionService(dsn, clock=StepClock(), sealer=sealed)
    return lambda: PostgresSessionService(dsn, clock=StepClock())


@pytest.fixture
async def service(
    open_service: Callable[[], AbstractAsyncContextManager[SessionService]],
) -> AsyncIterator[SessionService]:
    """A fresh, empty session service of each backend, closed after the test."""
    async with open_service() as opened:
        yield opened


@pytest.fixture(scope="session")
def fake_gcs_server() -> Iterator[FakeGcsServer]:
    """One fake-gcs-server for the whole session; started only if a GCS test runs."""
    with FakeGcsServer() as server:
        yield server


@pytest.fixture(scope="session")
def gcs_client(fake_gcs_server: FakeGcsServer) -> storage.Client:
    """A storage client talking to the session's fake-gcs-server."""
    return fake_gcs_server.client()


@pytest.fixture
def gcs_bucket(gcs_client: storage.Client) -> str:
    """The name of a new, empty bucket on the fake server."""
    name = f"artifacts-{uuid.uuid4().hex[:16]}"
    gcs_client.create_bucket(name)
    return name


@pytest.fixture(params=ARTIFACT_BACKENDS)
def artifact_backend(request: pytest.FixtureRequest) -> str:
    """The name of the backend under test."""
    backend: str = request.param
    return backend


@pytest.fixture
def reopen_artifact_service(
    artifact_backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[[], ArtifactService]:
    """Builds a service over the test's storage; each call is a "restarted process".

    The in-memory backend has no storage outside the instance, so it returns the same one.
    """
    if artifact_backend == "memory":
        memory = InMemoryArtifactService()
        return lambda: memory
    if artifact_backend == "file":
        root = tmp_path / "artifacts"
        return lambda: FileArtifactService(root)
    if artifact_backend == "sealed-file":
        keys = sealer(FileKeyStore(tmp_path / "keys")).keys
        return lambda: SealedArtifactService(FileArtifactService(tmp_path / "artifacts"), keys)
    client: storage.Client = request.getfixturevalue("gcs_client")
    bucket: str = request.getfixturevalue("gcs_bucket")
    return lambda: GcsArtifactService(bucket, client=client)


@pytest.fixture
def artifact_service(reopen_artifact_service: Callable[[], ArtifactService]) -> ArtifactService:
    """A fresh, empty artifact service of each backend."""
    return reopen_artifact_service()


@pytest.fixture
def canonical_uri_scheme(artifact_backend: str) -> str:
    """The scheme of the backend's canonical URIs; ``""`` when it has none."""
    return {"memory": "", "file": "file", "gcs": "gs", "sealed-file": "file"}[artifact_backend]
