"""Fixtures shared by every test tier: real local servers started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_temporal.testing.postgres import PostgresNotInstalledError, PostgresServer


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a run that included the doc tests: the blocks they run and those they skip."""
    reports = [r for kind in terminalreporter.stats.values() for r in kind]
    if any(getattr(r, "nodeid", "").startswith("tests/docs/") for r in reports):
        from .docs.blocks import tally

        for line in tally():
            terminalreporter.write_line(line)


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
