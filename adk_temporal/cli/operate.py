"""``list``, ``show``, ``cancel``: finding runs, reading one, stopping one.

``list`` and ``show`` read what Temporal serves itself — visibility, search attributes, the
memo a run publishes, pending activities — so they work while no worker runs; ``show`` adds
the step count when a worker answers the ``adk_status`` query in time.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import click
from rich.text import Text
from temporalio.api.failure.v1 import Failure
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.service import RPCError

from ..client import AdkClient
from ..flow.messages import InvocationStatus
from ..ids import id_problem
from ..visibility import invocations_query, published_or_unreadable, quote_problem, run_status
from ..workflows.messages import ADK_AGENT, Published
from .answers import published_or_fail
from .common import (
    EXIT_ERROR,
    CliError,
    connect,
    connection_options,
    console,
    err_console,
    json_option,
    print_json,
    run_command,
)

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
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(
        ["running", "awaiting_confirmation", "awaiting_input", "completed", "failed", "cancelled"]
    ),
    help="Only runs with this AdkStatus (repeatable).",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@json_option
def list_runs(
    address: str,
    namespace: str,
    task_queue: str,
    app_name: str | None,
    user_id: str | None,
    session_id: str | None,
    statuses: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """List invocations, newest first: status, agent, start, what they wait for.

    Every run is listed — completed, failed and cancelled ones too — from one visibility
    query; no worker is needed.
    """

    async def body() -> int:
        client = await connect(address, namespace)
        query = invocations_query(
            app_name=app_name, user_id=user_id, session_id=session_id, statuses=statuses
        )
        rows: list[dict[str, Any]] = []
        async for wf in client.list_workflows(query, limit=limit):
            published, unreadable = await published_or_unreadable(wf)
            rows.append(
                {
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
            )
        if as_json:
            print_json([{k: v for k, v in r.items() if k not in ("text", "started")} for r in rows])
            return 0
        if not rows:
            console.print("no invocations")
            return 0
        for row in rows:
            # One line per run, the id whole: the console never wraps it.
            waits = f"  waits for {row['text']}" if row["waiting_for"] else ""
            waits = f"  {row['text']}" if row["unreadable"] else waits
            console.print(
                f"{row['workflow_id']}  {row['status']}  {row['agent']}  {row['started']}{waits}"
            )
        return 0

    run_command(body())


@click.command()
@connection_options
@click.argument("workflow_id")
@json_option
def show(address: str, namespace: str, task_queue: str, workflow_id: str, as_json: bool) -> None:
    """Show one invocation: status, open and refused requests, steps, tokens, last error."""

    async def body() -> int:
        client = await connect(address, namespace)
        adk = AdkClient(client)
        handle = adk.handle(workflow_id)
        published = await published_or_fail(adk, workflow_id)
        description = await handle.describe()
        last_error = await _last_error(client, workflow_id, description)
        status: InvocationStatus | None = None
        try:
            async with asyncio.timeout(_STATUS_QUERY_SECONDS):
                status = await handle.status()
        except (RPCError, TimeoutError):
            pass  # no worker: everything above came from Temporal itself
        refused = status.ignored_signals if status else published.refused
        shown: dict[str, Any] = {
            "workflow_id": workflow_id,
            "run_id": description.run_id,
            "status": run_status(description),
            "temporal_status": description.status.name.lower() if description.status else None,
            "agent": description.typed_search_attributes.get(ADK_AGENT) or "",
            "start_time": description.start_time.isoformat() if description.start_time else None,
            "close_time": description.close_time.isoformat() if description.close_time else None,
            "steps": status.step if status else None,
            "usage": status.usage.model_dump() if status else None,
            "open_requests": [r.model_dump(mode="json") for r in published.requests],
            "refused_answers": refused,
            "last_error": last_error,
        }
        if as_json:
            print_json(shown)
            return 0
        _print_shown(shown, description, status, published)
        return 0

    run_command(body())


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


def _print_shown(
    shown: dict[str, Any],
    description: WorkflowExecutionDescription,
    status: InvocationStatus | None,
    published: Published,
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
        console.print(f"  waits    {kind} of {request.call}: {asks}  [{request.id}]")
    for refusal in shown["refused_answers"]:
        console.print(f"  refused  {refusal}")
    if shown["last_error"]:
        console.print(f"  error    {shown['last_error']}")


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
        description = await handle.describe()
        if description.status != WorkflowExecutionStatus.RUNNING:
            # Temporal accepts a cancel request for a closed run and does nothing with it.
            raise CliError(
                f"{workflow_id} is {run_status(description)}: only a running invocation can "
                "be cancelled",
                f"`adk-temporal show {workflow_id}` shows how it ended",
            )
        await handle.cancel()
        closed = False
        try:
            async with asyncio.timeout(wait):
                while not closed:
                    description = await handle.describe()
                    closed = description.status != WorkflowExecutionStatus.RUNNING
                    if not closed:
                        await asyncio.sleep(0.2)
        except TimeoutError:
            pass
        status = run_status(description) if closed else "running"
        cancelled = description.status == WorkflowExecutionStatus.CANCELED
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
