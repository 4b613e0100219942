"""Backend fixtures for the artifact contract suite.

``artifact_service`` is parametrised over the three backends; tests that must know where a
backend truly differs ask for a capability fixture (``canonical_uri_scheme``) instead of
branching on the backend's name. The GCS backend runs against one real fake-gcs-server
process per test session, with a fresh bucket per test.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.cloud import storage

from adk_temporal.artifacts import (
    ArtifactService,
    FileArtifactService,
    GcsArtifactService,
    InMemoryArtifactService,
)
from adk_temporal.testing.fake_gcs import FakeGcsServer

ARTIFACT_BACKENDS = ("memory", "file", "gcs")


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
    return {"memory": "", "file": "file", "gcs": "gs"}[artifact_backend]
