"""``run``, ``pending``, ``confirm``, ``resume``: starting invocations and answering them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError, RPCStatusCode

from ..app import App
from ..client import AdkClient, InvocationHandle
from ..errors import (
    InvalidResumeInputError,
    SessionBusyError,
    UnknownRequestIdError,
)
from ..events import Event
from ..flow.messages import InvocationStatus, PendingRequest
from ..ids import workflow_id_for
from ..render import request_lines
from ..runner import Runner
from ..terminal import NoAnswerError, answer_on_terminal
from ..worker import artifact_store, session_store
from .common import (
    EXIT_FAILED,
    EXIT_PAUSED,
    JSON,
    CliError,
    connect,
    connection_options,
    console,
    data_dir_option,
    err_console,
    event_json,
    json_option,
    main,
    postgres_option,
    print_event,
    print_json,
    request_json,
    require_path,
    resolve_app,
    run_command,
    session_options,
)

# ---------------------------------------------------------------- invocations

_QUERY_TIMEOUT_SECONDS = 10.0


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
                require_path(data_dir, "data directory")
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
