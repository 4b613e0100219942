"""``demo``, ``dev``, ``server``, ``worker``: starting Temporal and workers."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from datetime import timedelta
from pathlib import Path

import click

from ..app import App, Stores
from ..client import DEFAULT_TASK_QUEUE
from ..demo import DemoError, run_demo
from ..devserver import DevServer
from ..model_limits import ModelLimitError, model_queue, parse_model_limit
from ..worker import (
    MAX_CACHED_WORKFLOWS,
    artifact_store,
    build_worker,
    freeze_heap,
    serve,
    session_store,
)
from .common import (
    CliError,
    connect,
    connection_options,
    console,
    data_dir_option,
    encryption_option,
    err_console,
    gcs_bucket_option,
    payload_codec,
    postgres_option,
    resolve_app,
    run_command,
    stop_on_signals,
    store_keys,
)

# ---------------------------------------------------------------- servers and workers


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


@click.command()
@connection_options
@data_dir_option
@click.option("--app", "app_spec", help="Agents to serve, as package.module:attribute.")
@click.option("--examples", is_flag=True, help="Serve the bundled example agents.")
@gcs_bucket_option
@postgres_option
@click.option(
    "--max-cached-workflows",
    type=int,
    default=MAX_CACHED_WORKFLOWS,
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
@click.option(
    "--model-limit",
    "model_limits",
    multiple=True,
    metavar="PATTERN=RATE/s[,CONCURRENCY][@NAME]",
    help="Limit the models matching PATTERN to RATE calls per second across every worker "
    "(and CONCURRENCY at once on this one), e.g. 'gemini-*=5/s,4'; repeatable. Added to the "
    "app's own limits; give every worker of the task queue the same.",
)
@click.option(
    "--max-retry-after",
    type=float,
    default=None,
    help="The longest wait, in seconds, a model's Retry-After may impose on a step's next "
    "attempt [default: the app's, 300].",
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
    model_limits: tuple[str, ...],
    max_retry_after: float | None,
) -> None:
    """Run a worker for an app's agents until Ctrl-C."""
    app = with_traffic_options(resolve_app(app_spec, examples), model_limits, max_retry_after)

    async def body() -> None:
        client = await connect(address, namespace)
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        w = build_worker(
            client,
            app,
            task_queue=task_queue,
            stores=Stores(sessions, artifact_store(data_dir, gcs_bucket, keys=store_keys())),
            max_cached_workflows=max_cached_workflows,
            sticky_timeout=timedelta(seconds=sticky_timeout),
        )
        freeze_heap()
        stop = stop_on_signals()
        names = ", ".join(a.name for a in app.agents)
        console.print(f"worker ready · agents {names} · task queue {task_queue} · {address}")
        for limit in app.model_limits:
            rate = f"{limit.requests_per_second:g}/s" if limit.requests_per_second else "no rate"
            console.print(
                f"  models {limit.models}: {rate}, {limit.concurrency or 'default'} at once "
                f"here · queue {model_queue(task_queue, limit.group)}"
            )
        try:
            await serve(w, stop)
        finally:
            await sessions.close()

    run_command(body())


@click.command()
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
    """Run Temporal's dev server with the Adk* search attributes, until Ctrl-C.

    Exits with the server's own status if the server process ends by itself.
    """

    async def body() -> int:
        # The server's log goes to the data directory, whichever --db-file is used.
        data_dir.mkdir(parents=True, exist_ok=True)
        dev = _dev_server(data_dir, port, ui_port, ip, db_file)
        stop = stop_on_signals()
        with err_console.status("starting Temporal's dev server…"):
            await asyncio.to_thread(dev.start)
        console.print(f"Temporal dev server on {dev.address} · UI {dev.ui_url}")
        console.print(
            f"next, in another terminal: adk-temporal worker --app package.module:app "
            f"--address {dev.address} --data-dir {data_dir}"
        )
        try:
            while not stop.is_set():
                if dev.exit_code is not None:
                    err_console.print(
                        f"[bold red]error:[/] the Temporal server exited with status "
                        f"{dev.exit_code}; see {data_dir / 'temporal.log'}"
                    )
                    return dev.exit_code or 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
            return 0
        finally:
            await asyncio.to_thread(dev.stop)

    run_command(body())


@click.command()
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
@encryption_option
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
        sessions = session_store(data_dir, keys=store_keys())
        try:
            client = await connect(dev_server.address, "default")
            w = build_worker(
                client,
                app,
                task_queue=task_queue,
                stores=Stores(sessions, artifact_store(data_dir, gcs_bucket, keys=store_keys())),
            )
            freeze_heap()
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


@click.command()
@click.option("--port", type=int, help="Frontend port (default: a free one).")
@click.option("--ui-port", type=int, help="Web UI port (default: a free one).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep sessions and artifacts here (default: a temporary directory).",
)
@click.option("--keep", is_flag=True, help="Keep the server and worker running until Ctrl-C.")
@encryption_option
def demo(port: int | None, ui_port: int | None, data_dir: Path | None, keep: bool) -> None:
    """Run the weather scenario end to end on an embedded server, offline, then exit.

    A forecast (state), a paid report that waits for approval (approved here through the
    client), and an update of the report (a second artifact version).
    """

    async def body() -> None:
        stop = stop_on_signals() if keep else None
        try:
            await run_demo(
                console,
                port=port,
                ui_port=ui_port,
                data_dir=data_dir,
                keep=stop,
                payload_codec=payload_codec(),
            )
        except DemoError as err:
            raise CliError(
                str(err), "run `adk-temporal demo` again; report it if it repeats"
            ) from err

    run_command(body())


def with_traffic_options(app: App, specs: tuple[str, ...], max_retry_after: float | None) -> App:
    """``app`` with the worker CLI's ``--model-limit`` and ``--max-retry-after`` applied.

    Raises:
        click.BadParameter: A limit is malformed or the wait is not positive.
    """
    try:
        limits = [parse_model_limit(spec) for spec in specs]
    except ModelLimitError as err:
        raise click.BadParameter(str(err), param_hint="--model-limit") from None
    if max_retry_after is not None and max_retry_after <= 0:
        raise click.BadParameter("must be above 0 seconds", param_hint="--max-retry-after")
    wait = timedelta(seconds=max_retry_after) if max_retry_after else app.max_retry_after
    return dataclasses.replace(app, model_limits=[*limits, *app.model_limits], max_retry_after=wait)
