"""``run`` and ``withdraw``: starting invocations (or queuing them in a busy session), and
taking a queued one back."""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path

import click
from rich.markup import escape
from rich.text import Text
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from ..app import App, Stores
from ..client import AdkClient, InvocationHandle
from ..double_texting import POLICIES, DoubleTexting
from ..errors import SessionBusyError, SessionNotFoundError
from ..events import Event
from ..flow.messages import InvocationStatus
from ..ids import SessionKey, workflow_id_for
from ..render import StreamPrinter, event_json, request_lines
from ..run_config import RunConfig
from ..runner import Runner
from ..sessions import SessionService
from ..terminal import NoAnswerError, answer_on_terminal
from ..worker import artifact_store, served_apps, session_store
from ..workflows.messages import ADK_AGENT
from .common import (
    EXIT_FAILED,
    EXIT_PAUSED,
    CliError,
    agent_option,
    connect,
    connection_options,
    console,
    data_dir_option,
    err_console,
    json_option,
    local_agents,
    local_app_option,
    postgres_option,
    print_json,
    request_json,
    require_path,
    run_command,
    session_options,
    store_keys,
)

# ---------------------------------------------------------------- invocations


@click.command()
@connection_options
@data_dir_option
@postgres_option
@session_options
@agent_option
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=RunConfig.model_fields["max_steps"].default,
    show_default=True,
    help="Step limit.",
)
@click.option(
    "--token-budget",
    type=click.IntRange(min=1),
    help="Most model tokens the invocation may use; past it, it fails.",
)
@click.option(
    "--priority",
    type=click.IntRange(1, 5),
    help="Temporal task priority, 1 (first) to 5 (last; Temporal's default 3).",
)
@click.option("--fairness-key", help="Share busy queues fairly between keys (a tenant, a user).")
@click.option(
    "--pin-agent",
    is_flag=True,
    help="Run exactly --agent: a root agent otherwise hands the message to the sub-agent "
    "the conversation is with.",
)
@click.option(
    "--double-texting",
    type=click.Choice(POLICIES),
    help="When the session is busy: refuse (reject), queue the message (enqueue), stop the "
    "running invocation at its next step (interrupt), or cancel and rewind it (rollback); "
    "default: the app's policy.",
)
@click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="Who starts the invocation (and, with --local, answers its requests), as approval "
    "policies and the audit see them [default: your login name].",
)
@click.option("--no-wait", is_flag=True, help="Print the workflow id and return at once.")
@click.option(
    "--no-stream",
    is_flag=True,
    help="Print each model reply once stored instead of as the model writes it.",
)
@click.option(
    "--local",
    is_flag=True,
    help="Run in this process without Temporal (the same flow); answer requests here.",
)
@local_app_option("--local")
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
    token_budget: int | None,
    priority: int | None,
    fairness_key: str | None,
    pin_agent: bool,
    double_texting: DoubleTexting | None,
    as_name: str | None,
    no_wait: bool,
    no_stream: bool,
    local: bool,
    local_app: str | None,
    as_json: bool,
    message: str,
) -> None:
    """Start an invocation with MESSAGE and print its events as they are appended.

    Model replies print as the model writes them (through the session store, never through
    Temporal history), unless --no-stream, --json or --no-wait.

    Exits 0 when it completes, 3 when it pauses for an approval or input (the commands
    that answer are printed), 4 when it fails. Following the events needs the worker's
    session store (--data-dir).

    With --local the invocation runs in this process, on the sessions and artifacts of
    --data-dir, and every approval or input it asks for is asked on the terminal.

    When an invocation of the session runs, --double-texting decides what MESSAGE does; a
    queued one is followed from the queue to its own end (`adk-temporal withdraw` takes it
    back meanwhile).
    """
    key = SessionKey(app_name, user_id, session_id)
    streamed = not (no_stream or no_wait or as_json)
    config = RunConfig(
        max_steps=max_steps,
        token_budget=token_budget,
        priority=priority,
        stream=streamed,
        fairness_key=fairness_key,
        pin_agent=pin_agent,
    )
    starter = as_name or getpass.getuser()
    if local or local_app:
        if no_wait:
            raise click.UsageError("--local runs in this process; it cannot --no-wait")
        ask = _Ask(key, agent, message, starter)
        run_command(
            _run_local(local_agents(local_app), data_dir, postgres_dsn, ask, config, as_json)
        )

    async def body() -> int:
        sessions = None if no_wait else _follower_store(data_dir, postgres_dsn)
        client = await connect(address, namespace)
        adk = AdkClient(client, task_queue=task_queue, session_service=sessions)
        try:
            handle = await start_invocation(
                adk, key, agent, message, config, double_texting, started_by=starter
            )
            if no_wait:
                return _print_started(handle, as_json)
            code, ran = await _follow(handle, address, namespace, task_queue, as_json, streamed)
            if sessions is not None:
                await warn_if_stored_elsewhere(ran, key, sessions, postgres_dsn, data_dir)
            return code
        finally:
            if sessions is not None:
                await sessions.close()

    run_command(body())


def _follower_store(data_dir: Path, postgres_dsn: str | None) -> SessionService:
    """The workers' session store, which ``run`` follows the events in."""
    if not postgres_dsn:
        # The worker creates sessions.db on first use; its directory is there from the
        # worker's start, so a first `run` against a fresh worker finds it.
        require_path(data_dir, "data directory")
    return session_store(data_dir, postgres_dsn, keys=store_keys())


def _print_started(handle: InvocationHandle, as_json: bool) -> int:
    """``run --no-wait``: the started run's ids, and exit status 0."""
    if as_json:
        print_json(
            {
                "workflow_id": handle.workflow_id,
                "run_id": handle.run_id,
                "invocation_id": handle.invocation_id,
            }
        )
    else:
        console.print(handle.workflow_id)
    return 0


async def warn_if_stored_elsewhere(
    invocation_id: str,
    key: SessionKey,
    sessions: SessionService,
    postgres_dsn: str | None,
    data_dir: Path,
) -> None:
    """Warn when the invocation ran but this client's store has none of its events: the
    worker writes to another store (every invocation stores at least its user message).

    Takes the id from the status already read: asking the closed run again is a query a
    worker must replay it for, which can time out on a busy worker after the run is done.
    """
    if not invocation_id:
        return  # a run closed without a result: which invocation it was is not known here
    try:
        session = await sessions.get(key)
    except SessionNotFoundError:
        session = None
    if session is not None and any(e.invocation_id == invocation_id for e in session.events):
        return
    mine = "the PostgreSQL database of --postgres-dsn" if postgres_dsn else str(data_dir)
    err_console.print(
        f"[yellow]warning:[/] the invocation ran, but its events are not in {escape(mine)}: "
        "the worker stores sessions elsewhere; pass the worker's --data-dir (or "
        "--postgres-dsn) to see them, here and with `adk-temporal events`"
    )


async def start_invocation(
    adk: AdkClient,
    key: SessionKey,
    agent: str,
    message: str,
    config: RunConfig,
    double_texting: DoubleTexting | None = None,
    *,
    started_by: str | None = None,
) -> InvocationHandle:
    """Start the invocation as ``started_by``, saying so when no worker is there to run it.

    Raises:
        CliError: No worker of the task queue serves the app, or the session is busy (and
            the message was refused, or no worker runs to take it).
    """
    workers = await _check_workers(adk, key.app_name)
    try:
        handle = await adk.start(
            *key,
            agent,
            message,
            config=config,
            double_texting=double_texting,
            started_by=started_by,
        )
    except SessionBusyError as err:
        raise CliError(
            str(err),
            f"see what it waits for: `adk-temporal pending --workflow-id {workflow_id_for(key)}`"
            "; or queue the message: `--double-texting enqueue`",
        ) from err
    queued = [q for q in await handle.queued() if q.invocation_id == handle.invocation_id]
    for waiting in queued:
        err_console.print(
            f"[yellow]queued:[/] the session is busy; invocation {waiting.invocation_id} "
            f"waits at position {waiting.position} ({waiting.policy}); take it back with "
            f"`adk-temporal withdraw {handle.workflow_id} {waiting.invocation_id}`"
        )
    if not workers:
        err_console.print(
            f"[yellow]warning:[/] no worker polls task queue {adk.task_queue!r}: the "
            "invocation waits until one starts (`adk-temporal worker --app "
            f"package.module:app --task-queue {adk.task_queue}`)"
        )
    return handle


async def _check_workers(adk: AdkClient, app_name: str) -> list[str]:
    """The identities of the task queue's workers; refuses an app none of them serves.

    Raises:
        CliError: Every worker serves a named app and none of them is ``app_name``: the
            run would wait for a worker that never comes.
    """
    identities = await adk.worker_identities()
    apps = served_apps(identities) if identities else None
    if apps is not None and app_name not in apps:
        raise CliError(
            f"no worker on task queue {adk.task_queue!r} serves app {app_name!r}; "
            f"they serve: {', '.join(sorted(apps))}",
            "pass --app with one of those names, or start a worker for this app",
        )
    return identities


@dataclass(frozen=True)
class _Ask:
    """What ``run`` starts: the session, the agent, the message, and who starts it."""

    key: SessionKey
    agent: str
    message: str
    starter: str


async def _run_local(
    app: App,
    data_dir: Path,
    postgres_dsn: str | None,
    ask: _Ask,
    config: RunConfig,
    as_json: bool,
) -> int:
    """``run --local``: the invocation in this process, started (and its requests answered
    here) as ``ask.starter``."""
    key, agent, message, starter = ask.key, ask.agent, ask.message, ask.starter
    sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
    runner = Runner(app, stores=Stores(sessions, artifact_store(data_dir, keys=store_keys())))
    events: list[Event] = []
    printer = StreamPrinter(console)
    try:
        invocation = await runner.start(*key, agent, message, config=config, started_by=starter)
        try:
            status = await answer_on_terminal(
                invocation,
                events.append if as_json else printer.feed,
                err_console,
                starter,
            )
            printer.close()
        except NoAnswerError:
            # Nothing in this process can wait for a later answer: the run is cancelled,
            # which closes its requests and records the cancellation in the session.
            await invocation.cancel()
            err_console.print("[yellow]no answer:[/] input ended; the in-process run is cancelled")
            return EXIT_PAUSED
    finally:
        await sessions.close()
    if as_json:
        print_json(
            {
                **status.model_dump(
                    mode="json", include={"status", "invocation_id", "error", "usage"}
                ),
                "final_text": status.final_text,
                "events": [event_json(e) for e in events],
            }
        )
    elif status.status == "failed":
        err_console.print(f"[bold red]failed:[/] {escape(status.error or 'unknown error')}")
    else:
        console.print(Text(_completed(status), style="bold green"))
    return EXIT_FAILED if status.status == "failed" else 0


_REPORTED = {"status", "invocation_id", "error", "usage"}
"""The status fields ``run --json`` reports."""


def _completed(status: InvocationStatus) -> str:
    """The line a completed run ends with: steps, and tokens when the models reported any."""
    line = f"completed after {status.step} step(s)"
    used = status.usage
    if used.total_tokens:
        line += f", {used.total_tokens} tokens ({used.prompt_tokens} prompt, "
        line += f"{used.candidates_tokens} candidates)"
    return line


async def settled_status(handle: InvocationHandle) -> InvocationStatus:
    """The status ``run`` reports once the event stream ended.

    A run still open (paused for an answer) is asked (``adk_status``). A closed one is read
    from its result, which Temporal serves from history: a query would need a worker to
    replay the closed run, and times out on a busy one after the run is done. A run closed
    without a result (terminated, timed out, a workflow-level error) is failed, with
    Temporal's reason.
    """
    description = await handle.describe()
    if description.status == WorkflowExecutionStatus.RUNNING:
        status = await handle.status()
        if status.status != "running":
            return status
    agent = description.typed_search_attributes.get(ADK_AGENT) or ""
    try:
        result = await handle.result()
    except WorkflowFailureError as err:
        return InvocationStatus(
            status="failed", invocation_id="", agent=agent, step=0, error=str(err.cause or err)
        )
    return InvocationStatus(
        status=result.status,
        invocation_id=result.invocation_id,
        agent=agent,
        step=result.steps,
        final_text=result.final_text,
        error=result.error,
        usage=result.usage,
    )


async def _follow(
    handle: InvocationHandle,
    address: str,
    namespace: str,
    task_queue: str,
    as_json: bool,
    streamed: bool,
) -> tuple[int, str]:
    """Print the invocation's events until it stops; return the exit status and the
    invocation's id."""
    if not as_json:
        console.print(Text.assemble(("started ", "bold"), handle.workflow_id))
    events: list[Event] = []
    printer = StreamPrinter(console)
    spinner = err_console.status(f"running · waiting on workers of task queue {task_queue}…")
    spinner.start()
    try:
        async for event in handle.stream() if streamed else handle.events():
            # A redrawn spinner would cut through a line that pieces are still growing.
            spinner.stop()
            if as_json:
                events.append(event)
            else:
                printer.feed(event)
        printer.close()
        status = await settled_status(handle)
        waiting = status.status in ("awaiting_confirmation", "awaiting_input")
        pending = await handle.pending() if waiting else []
    finally:
        spinner.stop()
    wid = handle.workflow_id
    if as_json:
        print_json(
            {
                "workflow_id": wid,
                "run_id": handle.run_id,
                **status.model_dump(
                    mode="json", include={"status", "invocation_id", "error", "usage"}
                ),
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
        console.print(Text(_completed(status), style="bold green"))
    if waiting:
        return EXIT_PAUSED, status.invocation_id
    return EXIT_FAILED if status.status == "failed" else 0, status.invocation_id


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("invocation_id")
@json_option
def withdraw(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    invocation_id: str,
    as_json: bool,
) -> None:
    """Take the queued message of INVOCATION_ID out of WORKFLOW_ID's queue before it runs
    (`adk-temporal show WORKFLOW_ID` lists the queue)."""

    async def body() -> int:
        client = await connect(address, namespace)
        withdrawn = await AdkClient(client).withdraw(workflow_id, invocation_id)
        if as_json:
            print_json(withdrawn.model_dump(mode="json"))
        else:
            console.print(f"withdrew {invocation_id}: {withdrawn.preview!r}")
        return 0

    run_command(body())
