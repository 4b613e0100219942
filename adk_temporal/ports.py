"""Picking loopback ports for local servers (dev server, fake GCS, PostgreSQL, gateways), and
telling loopback addresses from others.

A port checked free can still be taken before the server meant for it binds it. Two things
take it on a busy machine: the kernel, handing it to some outgoing connection, and another
picker on the same machine that checked the same port a moment earlier and has not bound it
yet either. Picks come from below the kernel's range, and each pick is marked in a shared
directory for a while, so pickers in different processes never hand out the same port.
"""

from __future__ import annotations

import ipaddress
import os
import random
import socket
import tempfile
import time
from pathlib import Path

__all__ = ["free_port", "is_loopback"]

_PICKED_FROM = 15000
"""The lowest port :func:`free_port` picks."""

HELD_FOR_SECONDS = 600.0
"""How long a picked port stays marked: well past the slowest server start."""

_TRIES = 50


def is_loopback(host: str) -> bool:
    """Whether ``host`` (``localhost`` or an address, IPv6 bracketed or not) reaches this
    machine only; any other name may resolve to any address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _ephemeral_ports() -> range:
    """The ports the kernel hands to outgoing connections (Linux; the IANA range elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(49152, 65536)


def marks_directory() -> Path:
    """Where picks are marked; one per user, so nobody else's marks block or fail ours."""
    return Path(tempfile.gettempdir()) / f"adk-temporal-ports-{os.getuid()}"


def _mark(port: int) -> bool:
    """Mark ``port`` as ours; False while another pick's mark on it is recent.

    A stale mark is removed rather than taken over, so two pickers that both find it stale
    cannot both win: the port is skipped this time and is free to mark on a later pick.
    """
    directory = marks_directory()
    mark = directory / str(port)
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        mark_fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        if not directory.is_dir():
            return True
        try:
            if time.time() - mark.stat().st_mtime >= HELD_FOR_SECONDS:
                mark.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
        return False
    except OSError:
        # Where no mark can be written, the bind check is all there is; it still works.
        return True
    os.close(mark_fd)
    return True


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that was free when checked and that no other pick holds.

    Picked below the ephemeral range when there is room (a port the kernel chose can be
    handed to an outgoing connection before its server binds it), and marked for
    :data:`HELD_FOR_SECONDS` so concurrent pickers on this machine never share one.
    """
    ephemeral = _ephemeral_ports()
    if ephemeral.start - _PICKED_FROM >= 1000:
        for _ in range(_TRIES):
            port = random.randrange(_PICKED_FROM, ephemeral.start)
            if _bindable(host, port) and _mark(port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
