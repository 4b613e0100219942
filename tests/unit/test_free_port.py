"""Ports picked for local servers stay clear of the kernel's outgoing-connection ports."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from adk_temporal.devserver import free_port

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


@pytest.mark.skipif(not RANGE_FILE.exists(), reason="the ephemeral range is read from Linux /proc")
def test_picked_ports_are_free_and_below_the_ephemeral_range() -> None:
    low = int(RANGE_FILE.read_text().split()[0])
    ports = [free_port() for _ in range(50)]
    assert all(1024 <= port < low for port in ports)
    for port in ports[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))
