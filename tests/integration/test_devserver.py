"""Starting the embedded dev server when ports are taken, against the real ``temporal`` binary."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_temporal.devserver import DevServer, DevServerError
from adk_temporal.ports import free_port


@pytest.fixture
def bound_port() -> Iterator[int]:
    """A port bound but not listening: a connect probe finds it free, the server's bind fails."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def test_a_picked_port_taken_before_the_server_binds_it_is_picked_again(
    tmp_path: Path, bound_port: int
) -> None:
    server = DevServer(db_filename=tmp_path / "t.db", headless=True, log_path=tmp_path / "log")
    server.http_port = bound_port
    with server:
        assert server.running
        assert server.http_port != bound_port
    assert "address already in use" in (tmp_path / "log").read_text()


def test_a_chosen_port_in_use_is_named_with_the_servers_own_words(
    tmp_path: Path, bound_port: int
) -> None:
    server = DevServer(
        db_filename=tmp_path / "t.db",
        headless=True,
        http_port=bound_port,
        log_path=tmp_path / "log",
    )
    with pytest.raises(
        DevServerError, match=f"(?s)exited with code 1.*{bound_port}.*already in use"
    ):
        server.start(attempts=2)
    assert not server.running
    assert server.http_port == bound_port


def test_a_chosen_port_someone_listens_on_is_refused_before_starting(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", free_port())) as listener:
        port = listener.getsockname()[1]
        server = DevServer(db_filename=tmp_path / "t.db", headless=True, port=port)
        with pytest.raises(DevServerError, match=f"port {port} .* already in use"):
            server.start()
        assert server.exit_code is None
