"""``list``, ``show``, ``cancel``: finding runs, reading one, stopping one.

``list`` and ``show`` read what Temporal serves itself — visibility, search attributes, the
memo a run publishes, pending activities, a completed run's result — so they work while no
worker runs; for a running invocation ``show`` adds the step count when a worker answers the
``adk_status`` query in time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.text import Text
from temporalio.api.failure.v1 import Failure
from temporalio.client import (
    Client,
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.service import RPCError

from ..answers import TASK_STARTED, RunAnswers, read_answers
from ..client import AdkClient, InvocationHandle
from ..errors import InvocationClosedError
from ..flow.messages import InvocationStatus
from ..ids import id_problem
from ..queues import unpolled_waits
from ..visibility import (
    MAX_PAGE_SIZE,
    invocations_query,
    list_page,
    published_or_unreadable,
    quote_problem,
    run_status,
)
from ..workflow._render import GraphView, graph_view
from ..workflows.messages import ADK_AGENT, Published
from .answers import published_or_fail
from .common import (
    EXIT_ERROR,
    CliError,
    connect,
    connection_options,
    console,
    data_dir_option,
    err_console,
    json_option,
    postgres_option,
    print_json,
    run_command,
)
from .compactions import compaction_checks, print_compactions
from .paging import echo_json_stream, page_options, paging_of, print_next_token
from .unpolled import print_waits

__all__ = ["cancel", "list_runs", "show"]

_STATUS_QUERY_SECONDS = 2.0


def _time(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}" if value else ""


def _waits_for(published: Published) -> str:
    return "; ".join(
        f"{'approval' if r.kind == 'confirmation' else 'input'} of {r.call} ({r.id})"
        for r in published.requests
    )


async def _failure_message(client: Client, failure: Failure) -> str:
    """A failure's message, decoded: with a codec the raw one reads "Encoded failure"."""
    decoded = Failure()
    decoded.CopyFrom(failure)
    try:
        return str(await client.data_converter.decode_failure(decoded))
    except Exception:  # undecodable (no key for it): the raw message is all there is
        return failure.message


def _filter(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A ``list`` filter, refused as a usage error unless it is an id a query can hold."""
    if value:
        # The parameter names are the id fields themselves: app_name, user_id, session_id.
        name = param.name or "filter"
        problem = id_problem(name, value) or quote_problem(name, value)
        if problem is not None:
            raise click.BadParameter(problem, ctx, param)
    return value


@click.command("list")
@connection_options
@click.option("--app", "app_name", callback=_filter, help="Only this app's runs.")
@click.option("--user", "user_id", callback=_filter, help="Only this user's runs.")
@click.option("--session", "session_id", callback=_filter, help="Only this session's runs.")
@click.option(
    "--schedule", "schedule_id", callback=_filter, help="Only the runs this schedule started."
)
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(
        ["running", "awaiting_confirmation", "awaiting_input", "completed", "failed", "cancelled"]
    ),
    help="Only runs with this AdkStatus (repeatable).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=MAX_PAGE_SIZE),
    default=50,
    show_default=True,
    help="The newest this many (without the paging options).",
)
@page_options
@json_option
def list_runs(
    address: str,
    namespace: str,
    task_queue: str,
    app_name: str | None,
    user_id: str | None,
    session_id: str | None,
    schedule_id: str | None,
    statuses: tuple[str, ...],
    limit: int,
    page_size: int | None,
    page_token: str | None,
    every: bool,
    as_json: bool,
) -> None:
    """List invocations, newest first: status, agent, start, what they wait for.

    Every run is listed — completed, failed and cancelled ones too — from visibility
    queries, a page at a time; no worker is needed. By default the newest --limit runs;
    --page-size / --next-page-token print one page and the next page's token, --all every
    page in turn.
    """
    paging = paging_of(page_size, page_token, every)

    async def body() -> int:
        client = await connect(address, namespace)
        query = invocations_query(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            statuses=statuses,
            schedule_id=schedule_id,
        )
        token = paging.token
        size = paging.page_size or (MAX_PAGE_SIZE if paging.every else limit)

        async def pages() -> AsyncIterator[list[dict[str, Any]]]:
            nonlocal token
            while True:
                page = await list_page(client, query, page_size=size, page_token=token)
                token = page.next_page_token
                yield [await _run_row(wf) for wf in page.executions]
                if token is None or not paging.every:
                    return

        if as_json and paging.every:
            await echo_json_stream(_for_json(rows) async for rows in pages())
        elif as_json:
            rows = [_for_json(page) async for page in pages()]
            runs = [row for page in rows for row in page]
            print_json({"runs": runs, "next_page_token": token} if paging.one_page else runs)
        else:
            shown = 0
            async for page in pages():
                shown += len(page)
                _print_rows(page)
            if not shown:
                console.print("no invocations")
            if paging.one_page:
                print_next_token(token)
        return 0

    run_command(body())


async def _run_row(wf: WorkflowExecution) -> dict[str, Any]:
    published, unreadable = await published_or_unreadable(wf)
    return {
        "workflow_id": wf.id,
        "run_id": wf.run_id,
        "status": run_status(wf),
        "agent": wf.typed_search_attributes.get(ADK_AGENT) or "",
        "start_time": wf.start_time.isoformat() if wf.start_time else None,
        "close_time": wf.close_time.isoformat() if wf.close_time else None,
        "waiting_for": [r.model_dump(mode="json") for r in published.requests],
        "unreadable": unreadable,
        "text": f"(unreadable: {unreadable})" if unreadable else _waits_for(published),
        "started": _time(wf.start_time),
    }


def _for_json(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("text", "started")} for r in rows]


def _print_rows(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        # One line per run, the id whole: the console never wraps it.
        waits = f"  waits for {row['text']}" if row["waiting_for"] else ""
        waits = f"  {row['text']}" if row["unreadable"] else waits
        console.print(
            f"{row['workflow_id']}  {row['status']}  {row['agent']}  {row['started']}{waits}"
        )


@click.command()
@connection_options
@click.argument("workflow_id")
@json_option
@click.option(
    "--mermaid",
    "as_mermaid",
    is_flag=True,
    help="Print only the graph of a graph workflow run, as a Mermaid flowchart coloured by "
    "each node's status.",
)
@click.option(
    "--compactions",
    is_flag=True,
    help="Also list the session's compactions with their receipts, each checked against "
    "the stored events (reads the session store).",
)
@data_dir_option
@postgres_option
def show(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    as_json: bool,
    as_mermaid: bool,
    compactions: bool,
    data_dir: Path,
    postgres_dsn: str | None,
) -> None:
    """Show one invocation: status, open and refused requests, steps, tokens, last error,
    any step waiting on a task queue no worker polls (with what to start), for a graph
    workflow each node's status; with --compactions, the session's compactions and their
    receipts."""

    async def body() -> int:
        checks = (
            await compaction_checks(workflow_id, data_dir, postgres_dsn) if compactions else None
        )
        client = await connect(address, namespace)
        adk = AdkClient(client)
        handle = adk.handle(workflow_id)
        published = await published_or_fail(adk, workflow_id)
        description = await handle.describe()
        last_error = await _last_error(client, workflow_id, description)
        status = await _status(handle, description, published)
        answered = await read_answers(client, workflow_id)
        held = _held(answered, description, published)
        waits = await unpolled_waits(client, description)
        graph = graph_view(published.graph, published.nodes) if published.graph else None
        shown = _shown(workflow_id, description, status, published, held, last_error)
        shown["answers"] = [{"request_id": rid, **a.as_json()} for rid, a in answered.every]
        shown["unpolled_waits"] = [w.model_dump(mode="json") for w in waits]
        shown["graph"] = graph.model_dump() if graph is not None else None
        if as_mermaid:
            if graph is None:
                raise CliError(
                    f"{workflow_id} runs no graph workflow (or published none yet)",
                    "`adk-temporal show` without --mermaid shows the run",
                )
            click.echo(graph.mermaid)
            return 0
        if checks is not None:
            shown["compactions"] = [c.model_dump(mode="json") for c in checks]
        if as_json:
            print_json(shown)
            return 0
        _print_shown(shown, description, status, published, held)
        print_waits(waits, "  stalled  ")
        if checks is not None:
            console.print("compactions")
            print_compactions(checks)
        return 0

    run_command(body())


async def _status(
    handle: InvocationHandle, description: WorkflowExecutionDescription, published: Published
) -> InvocationStatus | None:
    """Where the run stands; ``None`` when it runs and no worker answers in time.

    A completed run's result says it, from Temporal alone: a query would need a worker to
    replay the closed run, which on a busy machine outlasts the wait, and the same ``show``
    would print steps one time and ``?`` the next. Its refused answers are then the memo's,
    the latest :data:`~adk_temporal.workflows.messages.REFUSED_IN_MEMO`.
    """
    if description.status == WorkflowExecutionStatus.COMPLETED:
        result = await handle.result()
        return InvocationStatus(
            status=result.status,
            invocation_id=result.invocation_id,
            agent=description.typed_search_attributes.get(ADK_AGENT) or "",
            step=result.steps,
            final_text=result.final_text,
            error=result.error,
            ignored_signals=published.refused,
            usage=result.usage,
        )
    try:
        async with asyncio.timeout(_STATUS_QUERY_SECONDS):
            return await handle.status()
    except (RPCError, TimeoutError):
        return None  # no worker: everything else came from Temporal itself


async def _last_error(
    client: Client, workflow_id: str, description: WorkflowExecutionDescription
) -> str | None:
    """The latest failure of a pending step (and when it is retried), or the run's own."""
    last_error: str | None = None
    for activity in description.raw_description.pending_activities:
        if activity.HasField("last_failure"):
            message = await _failure_message(client, activity.last_failure)
            last_error = f"{activity.activity_type.name}: {message}"
            if activity.HasField("next_attempt_schedule_time"):
                when = activity.next_attempt_schedule_time.ToDatetime(UTC)
                limited = "rate limited by the model, " if "(HTTP 429)" in message else ""
                last_error += f" ({limited}retrying at {when:%H:%M:%S} UTC)"
    if description.status == WorkflowExecutionStatus.FAILED:
        try:
            await client.get_workflow_handle(workflow_id).result()
        except WorkflowFailureError as err:
            last_error = str(err.cause or err)
    return last_error


def _shown(
    workflow_id: str,
    description: WorkflowExecutionDescription,
    status: InvocationStatus | None,
    published: Published,
    held: dict[str, str],
    last_error: str | None,
) -> dict[str, Any]:
    """What ``show --json`` prints of the run itself."""
    refused = status.ignored_signals if status else published.refused
    return {
        "workflow_id": workflow_id,
        "run_id": description.run_id,
        "status": run_status(description),
        "temporal_status": description.status.name.lower() if description.status else None,
        "agent": description.typed_search_attributes.get(ADK_AGENT) or "",
        "start_time": description.start_time.isoformat() if description.start_time else None,
        "close_time": description.close_time.isoformat() if description.close_time else None,
        "steps": status.step if status else None,
        "usage": status.usage.model_dump() if status else None,
        "open_requests": [
            {**r.model_dump(mode="json"), "held_answer": held.get(r.id)} for r in published.requests
        ],
        "refused_answers": refused,
        "queued": [q.model_dump(mode="json") for q in published.queued],
        "schedule_id": published.schedule_id,
        "last_error": last_error,
        "workflow_task": _workflow_task(description),
    }


def _workflow_task(description: WorkflowExecutionDescription) -> dict[str, Any] | None:
    """The run's pending workflow task: ``scheduled`` or ``started``, its attempt, since when.

    A task started long ago, or at an attempt over 1, is a worker that hung or died holding
    it: Temporal writes the signals that came meanwhile only once the task ends.
    """
    raw = description.raw_description
    if not raw.HasField("pending_workflow_task"):
        return None
    task = raw.pending_workflow_task
    started = task.state == TASK_STARTED
    since = task.started_time if started else task.scheduled_time
    return {
        "state": "started" if started else "scheduled",
        "attempt": task.attempt,
        "since": since.ToDatetime(UTC).isoformat(),
    }


def _held(
    answered: RunAnswers, description: WorkflowExecutionDescription, published: Published
) -> dict[str, str]:
    """The open requests Temporal already holds an answer for, by id: ``approved``,
    ``rejected`` or ``answered``; the run applies them once a worker picks it up."""
    if not published.requests or description.status != WorkflowExecutionStatus.RUNNING:
        return {}
    return {request_id: earlier.decision for request_id, earlier in answered.held.items()}


def _print_queue_and_answers(shown: dict[str, Any], published: Published) -> None:
    """``show``'s lines for the messages queued behind the run, its schedule, and every
    answer it took (who, through which channel, when)."""
    for queued in published.queued:
        # Escaped: "[id]" would otherwise be read as markup and vanish.
        console.print(
            escape(
                f"  queued   {queued.position}. {queued.preview!r} ({queued.policy}, "
                f"{queued.agent})  [{queued.invocation_id}]"
            )
        )
    if published.schedule_id:
        console.print(f"  schedule {published.schedule_id}")
    for answer in shown["answers"]:
        who = answer["answered_by"] or "(not recorded)"
        when = f"{datetime.fromisoformat(answer['at']):%Y-%m-%d %H:%M:%S} UTC"
        console.print(
            escape(
                f"  answer   {answer['decision']} by {who} via {answer['channel']} at {when}"
                f"  [{answer['request_id']}]"
            )
        )


def _print_shown(
    shown: dict[str, Any],
    description: WorkflowExecutionDescription,
    status: InvocationStatus | None,
    published: Published,
    held: dict[str, str],
) -> None:
    """``show`` for people: what ``--json`` prints, one line a fact."""
    console.print(Text.assemble((shown["workflow_id"], "bold"), f"  {shown['status']}"))
    console.print(f"  agent    {shown['agent']}")
    console.print(f"  started  {_time(description.start_time)}")
    if description.close_time:
        console.print(f"  closed   {_time(description.close_time)}")
    steps = shown["steps"]
    console.print(f"  steps    {steps if steps is not None else '? (no worker answered)'}")
    if status is not None:
        used = status.usage
        console.print(
            f"  tokens   {used.total_tokens} ({used.prompt_tokens} prompt, "
            f"{used.candidates_tokens} candidates)"
        )
    for request in published.requests:
        kind = "approval" if request.kind == "confirmation" else "input"
        asks = request.hint if request.kind == "confirmation" else request.message
        if request.id in held:
            # Not "waits": an operator reading that would answer again, and be refused.
            console.print(
                escape(
                    f"  answered {held[request.id]} {kind} of {request.call}: waiting for a "
                    f"worker to resume  [{request.id}]"
                )
            )
            continue
        # Escaped: "[id]" would otherwise be read as markup and vanish.
        console.print(escape(f"  waits    {kind} of {request.call}: {asks}  [{request.id}]"))
    for refusal in shown["refused_answers"]:
        console.print(f"  refused  {refusal}")
    _print_queue_and_answers(shown, published)
    task = shown["workflow_task"]
    if task is not None:
        since = f"{datetime.fromisoformat(task['since']):%H:%M:%S} UTC"
        held_by = (
            f"started {since} and not completed: a worker holds it, and answers sent since "
            "show once it ends"
            if task["state"] == "started"
            else f"scheduled {since}: waiting for a worker to pick it up"
        )
        console.print(f"  task     attempt {task['attempt']}, {held_by}")
    if shown["last_error"]:
        console.print(f"  error    {shown['last_error']}")
    if shown["graph"] is not None:
        _print_graph(GraphView.model_validate(shown["graph"]))


def _print_graph(graph: GraphView) -> None:
    """Each node of a graph run with its status, the counts first."""
    counts: dict[str, int] = {}
    for node in graph.nodes:
        counts[node.status] = counts.get(node.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    console.print(escape(f"  graph    {graph.name}: {summary}"))
    width = max(len(node.name) for node in graph.nodes)
    for node in graph.nodes:
        console.print(escape(f"  node     {node.name:<{width}}  {node.status}  ({node.kind})"))


async def _closed_status(handle: InvocationHandle, wait: float) -> str | None:
    """How the run ended, once it closed within ``wait`` seconds; ``None`` while it runs."""
    try:
        async with asyncio.timeout(wait):
            while True:
                description = await handle.describe()
                if description.status != WorkflowExecutionStatus.RUNNING:
                    return run_status(description)
                await asyncio.sleep(0.2)
    except TimeoutError:
        return None


@click.command()
@connection_options
@click.argument("workflow_id")
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds to wait for the run to close.",
)
@json_option
def cancel(
    address: str, namespace: str, task_queue: str, workflow_id: str, wait: float, as_json: bool
) -> None:
    """Cancel an invocation: running steps are told through heartbeats, open requests close,
    one cancellation event is stored and the session takes the next message.

    A run that is no longer running (completed, failed, cancelled, terminated) is not
    cancelled: the error names its state and the command exits 1, as it does when the run
    ends some other way before the cancellation takes effect.
    """

    async def body() -> int:
        client = await connect(address, namespace)
        adk = AdkClient(client)
        await published_or_fail(adk, workflow_id)
        handle = adk.handle(workflow_id)
        try:
            await handle.cancel()
        except InvocationClosedError as err:
            raise CliError(
                str(err), f"`adk-temporal show {workflow_id}` shows how it ended"
            ) from None
        ended = await _closed_status(handle, wait)
        closed, status = ended is not None, ended or "running"
        cancelled = ended == "cancelled"
        if as_json:
            print_json({"workflow_id": workflow_id, "closed": closed, "status": status})
            return EXIT_ERROR if closed and not cancelled else 0
        if closed and not cancelled:
            raise CliError(
                f"{workflow_id} is {status}: it ended before the cancellation took effect",
                f"`adk-temporal show {workflow_id}` shows how it ended",
            )
        if closed:
            console.print(f"cancelled {workflow_id}")
        else:
            err_console.print(
                f"cancel requested for {workflow_id}; it ends when a worker picks the run up"
            )
        return 0

    run_command(body())
