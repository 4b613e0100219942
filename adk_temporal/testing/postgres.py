"""A throwaway PostgreSQL cluster on a free loopback port, for tests, benchmarks and demos.

The cluster lives in a temporary directory: ``initdb`` creates it, ``postgres`` serves it on
127.0.0.1 with trust authentication and durability switched off (``fsync``, synchronous
commit and full-page writes: nothing here must survive a crash of the machine), and
:meth:`PostgresServer.stop` removes every file. PostgreSQL refuses to run as root, so under
root the server runs as the ``postgres`` system user (``nobody`` when there is none), which
then owns the directory.

The server binaries come from the machine (Debian: ``apt-get install postgresql``; see
``.ci/postgres.sh``). Without them :class:`PostgresNotInstalledError` says so, which test
fixtures turn into a skip.

Usage::

    with PostgresServer() as server:
        dsn = server.create_database()
        service = PostgresSessionService(dsn)
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
import types
import uuid
from pathlib import Path
from typing import TypedDict

from adk_temporal.ports import free_port

__all__ = ["PostgresNotInstalledError", "PostgresServer", "postgres_bin_dir"]

# Where distributions put versioned server binaries that are not on PATH: Debian/Ubuntu,
# then RHEL/Fedora (PGDG).
_VERSIONED_BIN_DIRS = ("/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin")
_SUPERUSER = "postgres"
_UNPRIVILEGED_USERS = ("postgres", "nobody")


class PostgresNotInstalledError(RuntimeError):
    """The PostgreSQL server binaries (``initdb``, ``postgres``) are not on this machine."""


def postgres_bin_dir() -> Path:
    """The directory holding ``initdb`` and ``postgres``, newest major version first.

    ``PATH`` is searched first, then the versioned directories distributions install to.

    Returns:
        The directory.

    Raises:
        PostgresNotInstalledError: No directory holds both binaries.
    """
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path is not None:
        candidates.append(Path(on_path).resolve().parent)
    for pattern in _VERSIONED_BIN_DIRS:
        found = [Path(directory) for directory in glob.glob(pattern)]
        candidates.extend(sorted(found, key=_major_version, reverse=True))
    for directory in candidates:
        if _holds_server_binaries(directory):
            return directory
    raise PostgresNotInstalledError(
        "PostgreSQL server binaries (initdb, postgres) not found on PATH or in "
        f"{', '.join(_VERSIONED_BIN_DIRS)}; install them with .ci/postgres.sh "
        "(Debian: apt-get install postgresql)"
    )


def _holds_server_binaries(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in ("initdb", "postgres"))


def _major_version(directory: Path) -> int:
    match = re.search(r"(\d+)", directory.parent.name)
    return int(match.group(1)) if match else 0


class PostgresServer:
    """Runs a private PostgreSQL cluster until stopped; its data is deleted on stop.

    Args:
        bin_dir: Where ``initdb`` and ``postgres`` are; ``None`` finds them with
            :func:`postgres_bin_dir`.
        startup_timeout: Seconds to wait for the server to accept connections.
    """

    def __init__(
        self, *, bin_dir: str | os.PathLike[str] | None = None, startup_timeout: float = 30.0
    ) -> None:
        self._requested_bin_dir = Path(bin_dir) if bin_dir is not None else None
        self._bin_dir = Path()
        self._startup_timeout = startup_timeout
        self._root: Path | None = None
        self._identity = _identity(None)
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0

    @property
    def port(self) -> int:
        """The loopback TCP port the server listens on."""
        if self._process is None:
            raise RuntimeError("PostgresServer is not running; call start() first")
        return self._port

    def dsn(self, database: str = "postgres") -> str:
        """A connection URI for one database of this server, as its superuser.

        Args:
            database: The database to connect to.

        Returns:
            A ``postgresql://`` URI.
        """
        return f"postgresql://{_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        """Create the cluster and start the server, waiting until it accepts connections.

        Returns:
            This server, for chaining.

        Raises:
            PostgresNotInstalledError: The server binaries are not installed.
            RuntimeError: ``initdb`` failed, or the server exited early or did not become
                ready in time (the message carries the end of its log).
        """
        if self._process is not None:
            return self
        bin_dir = self._requested_bin_dir or postgres_bin_dir()
        if not _holds_server_binaries(bin_dir):
            raise PostgresNotInstalledError(f"no executable initdb and postgres in {bin_dir}")
        self._bin_dir = bin_dir
        account = _server_account()
        self._identity = _identity(account)
        self._root = Path(tempfile.mkdtemp(prefix="adk-postgres-"))
        try:
            if account is not None:
                os.chown(self._root, account.pw_uid, account.pw_gid)
            self._initdb()
            # The port is chosen before the server binds it, so another process can take it
            # in between; that shows up as an early exit, and a fresh port makes it go away.
            for _ in range(3):
                self._port = free_port()
                self._process = self._spawn()
                if self._wait_until_ready():
                    return self
                self._terminate()
            raise RuntimeError(f"postgres did not start:\n{self._log_tail()}")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server and delete the cluster's files. Safe to call twice."""
        self._terminate()
        root, self._root = self._root, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database.

        Args:
            name: The database name; ``None`` picks a fresh random one.

        Returns:
            The new database's DSN (see :meth:`dsn`).

        Raises:
            RuntimeError: ``createdb`` failed; the message carries its output.
        """
        name = name or f"db_{uuid.uuid4().hex[:16]}"
        completed = subprocess.run(
            [
                str(self._bin_dir / "createdb"),
                "--host=127.0.0.1",
                f"--port={self.port}",
                f"--username={_SUPERUSER}",
                name,
            ],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if completed.returncode != 0:
            output = (completed.stdout + completed.stderr).decode(errors="replace")
            raise RuntimeError(f"createdb {name!r} failed: {output.strip()}")
        return self.dsn(name)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.stop()

    def _initdb(self) -> None:
        assert self._root is not None
        completed = subprocess.run(
            [
                str(self._bin_dir / "initdb"),
                f"--pgdata={self._root / 'data'}",
                f"--username={_SUPERUSER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
            **self._identity,
        )
        if completed.returncode != 0:
            output = (completed.stdout + completed.stderr).decode(errors="replace")
            raise RuntimeError(f"initdb failed: {output.strip()}")

    def _spawn(self) -> subprocess.Popen[bytes]:
        assert self._root is not None
        args = [
            str(self._bin_dir / "postgres"),
            "-D",
            str(self._root / "data"),
            "-p",
            str(self._port),
            "-c",
            "listen_addresses=127.0.0.1",
            # The socket goes into our directory: the system's /var/run/postgresql may be
            # missing or belong to a cluster we must not touch.
            "-c",
            f"unix_socket_directories={self._root}",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
        ]
        with open(self._root / "postgres.log", "ab") as log:
            # The child keeps its own copy of the descriptor; ours can close at once.
            return subprocess.Popen(
                args,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                **self._identity,
            )

    def _wait_until_ready(self) -> bool:
        assert self._process is not None and self._root is not None
        pid_file = self._root / "data" / "postmaster.pid"
        deadline = time.monotonic() + self._startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            # The postmaster writes "ready" as the status line of its pid file once it
            # accepts connections; a bare TCP connect would succeed during recovery too.
            try:
                lines = pid_file.read_text().splitlines()
            except OSError:
                lines = []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return True
            time.sleep(0.02)  # polling a child process: there is nothing to await
        return False

    def _terminate(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        # SIGINT is PostgreSQL's "fast" shutdown: it disconnects clients. SIGTERM ("smart")
        # would wait for every pooled connection a test forgot to close.
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _log_tail(self) -> str:
        assert self._root is not None
        try:
            return "\n".join((self._root / "postgres.log").read_text().splitlines()[-20:])
        except OSError:
            return "(no log)"


def _server_account() -> pwd.struct_passwd | None:
    # PostgreSQL refuses to start as root; any other user runs it as itself.
    if os.geteuid() != 0:
        return None
    for name in _UNPRIVILEGED_USERS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError(
        "running as root, and neither a 'postgres' nor a 'nobody' user exists to run "
        "PostgreSQL as; create one (useradd --system postgres)"
    )


class _Identity(TypedDict):
    user: int | None
    group: int | None
    extra_groups: list[int] | None


def _identity(account: pwd.struct_passwd | None) -> _Identity:
    if account is None:
        return {"user": None, "group": None, "extra_groups": None}
    # extra_groups=[] drops root's supplementary groups along with its uid and gid.
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
