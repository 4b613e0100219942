"""Real MCP servers for the tests, and helpers that start them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from adk_temporal.mcp import McpToolset

__all__ = ["REPO", "HttpToolServer", "calls", "raw_stdio_toolset", "stdio_toolset"]

REPO = Path(__file__).resolve().parents[2]
MODULE = "tests.mcp_servers.tool_server"
RAW_MODULE = "tests.mcp_servers.raw_server"


def stdio_toolset(log: Path, **kwargs: Any) -> McpToolset:
    """A toolset over the test server as a stdio subprocess, logging calls to ``log``."""
    return McpToolset(
        command=sys.executable,
        args=["-m", MODULE, "stdio"],
        cwd=str(REPO),
        env={"MCP_TEST_LOG": str(log)},
        **kwargs,
    )


def raw_stdio_toolset(listing: str, log: Path, **kwargs: Any) -> McpToolset:
    """A toolset over the hand-written server listing ``listing`` (see ``raw_server``)."""
    return McpToolset(
        command=sys.executable,
        args=["-m", RAW_MODULE, "stdio", listing],
        cwd=str(REPO),
        env={"MCP_TEST_LOG": str(log)},
        **kwargs,
    )


def calls(log: Path) -> list[dict[str, Any]]:
    """The calls the server logged, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


class HttpToolServer:
    """The test server over streamable HTTP in a subprocess, on a fixed free loopback port.

    ``start`` may be called again after ``kill``: same port, a new process. With
    ``raw_listing`` it is the hand-written server (``raw_server``) listing that listing.
    """

    def __init__(self, log: Path, *, raw_listing: str | None = None) -> None:
        self.log = log
        self.raw_listing = raw_listing
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, block: bool = False) -> None:
        """Start the server and return once it accepts connections."""
        env = {**os.environ, "MCP_TEST_LOG": str(self.log)}
        env.pop("MCP_TEST_BLOCK", None)
        if block:
            env["MCP_TEST_BLOCK"] = "1"
        command = [sys.executable, "-m", MODULE, "http", str(self.port)]
        if self.raw_listing is not None:
            command = [sys.executable, "-m", RAW_MODULE, "http", str(self.port), self.raw_listing]
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"MCP test server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("MCP test server did not start listening")

    def kill(self) -> None:
        """SIGKILL the server and wait for it to be gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def toolset(self, **kwargs: Any) -> McpToolset:
        """A toolset over this server."""
        return McpToolset(url=self.url, headers={"x-test": "1"}, **kwargs)
