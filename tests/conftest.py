"""Fixtures shared by every test tier: real local servers started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_temporal.testing.postgres import PostgresNotInstalledError, PostgresServer


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the whole session; started only if a Postgres test runs."""
    try:
        server = PostgresServer().start()
    except PostgresNotInstalledError as exc:
        pytest.skip(str(exc))
    with server:
        yield server


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """The DSN of a new, empty database on the session's cluster."""
    return postgres_server.create_database()
