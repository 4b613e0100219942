"""``pending``, ``confirm``, ``resume``: what runs wait for, and answering them."""

from __future__ import annotations

import getpass
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import click
from rich.text import Text
from temporalio.service import RPCError, RPCStatusCode

from ..answers import AnswerDesk, RefusalReason, Refused
from ..client import AdkClient
from ..flow.messages import ConfirmInput, RequestSummary, ResumeInput
from ..flow.requests import answer_id
from ..queues import unpolled_waits
from ..render import summary_lines
from ..visibility import MAX_PAGE_SIZE
from ..workflows.messages import Published
from .common import (
    JSON,
    CliError,
    F,
    connect,
    connection_options,
    console,
    err_console,
    json_option,
    print_json,
    request_json,
    run_command,
)
from .grants import grant_options, grant_terms
from .paging import Paging, echo_json_stream, page_options, paging_of, print_next_token
from .unpolled import print_waits, unpolled_runs

# ---------------------------------------------------------------- invocations

__all__ = ["confirm", "pending", "published_or_fail", "resolve", "resume"]


@click.command()
@connection_options
@click.option("--workflow-id", help="Show this run's requests (default: every waiting run).")
@page_options
@json_option
def pending(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str | None,
    page_size: int | None,
    page_token: str | None,
    every: bool,
    as_json: bool,
) -> None:
    """List the runs waiting for an approval or an input, and what they wait for.

    Reads what each run published in its memo: visibility queries (or one describe with
    --workflow-id), answered by Temporal itself, so it works while no worker runs.
    Without --workflow-id it lists every running invocation on --task-queue whose AdkStatus
    is awaiting_confirmation or awaiting_input, newest first, a page at a time: every page
    by default (or with --all), one page with --page-size / --next-page-token. Either way
    it also names the steps that wait on a task queue no worker polls, with what to start
    (without --json; `show --json` has them).
    """
    paging = paging_of(page_size, page_token, every)

    async def body() -> int:
        client = await connect(address, namespace)
        adk = AdkClient(client, task_queue=task_queue)
        if workflow_id is None:
            return await _list_waiting(adk, paging, address, as_json)
        with err_console.status("reading…"):
            published = await published_or_fail(adk, workflow_id)
        if as_json:
            print_json(
                [_row(workflow_id, r, published, address, namespace) for r in published.requests]
            )
            return 0
        for refusal in published.refused:
            # Every answer that changed nothing, with its reason: never lost silently.
            console.print(Text.assemble(("refused answer ", "bold red"), refusal))
        if published.schedule_id:
            console.print(f"started by schedule {published.schedule_id}")
        if not published.requests:
            console.print("no open requests")
        for request in published.requests:
            for line in summary_lines(workflow_id, request, address, namespace):
                console.print(line)
        description = await adk.handle(workflow_id).describe()
        print_waits(await unpolled_waits(client, description), "stalled: ")
        return 0

    run_command(body())


async def _list_waiting(adk: AdkClient, paging: Paging, address: str, as_json: bool) -> int:
    """Print the waiting runs' requests page by page; one page when paging asks for one."""
    namespace = adk.client.namespace
    token = paging.token
    shown = 0

    async def pages() -> AsyncIterator[list[dict[str, Any]]]:
        nonlocal token, shown
        while True:
            runs, token = await adk.waiting_page(
                task_queue=adk.task_queue,
                page_size=paging.page_size or MAX_PAGE_SIZE,
                page_token=token,
            )
            rows = [_row(w, r, p, address, namespace) for w, p in runs for r in p.requests]
            shown += len(rows)
            yield rows
            if token is None or paging.one_page:
                return

    if as_json and not paging.one_page:
        await echo_json_stream(pages())
        return 0
    if as_json:
        rows = [row async for page in pages() for row in page]
        print_json({"requests": rows, "next_page_token": token})
        return 0
    async for page in pages():
        for row in page:
            # One line per request, ids whole: the console never wraps them.
            asks = row["hint"] if row["kind"] == "confirmation" else row["message"]
            kind = "approval" if row["kind"] == "confirmation" else "input"
            scheduled = f"  (schedule {row['schedule_id']})" if "schedule_id" in row else ""
            policy = _policy_note(row)
            console.print(
                f"{row['workflow_id']}  {row['id']}  {kind} of {row['call']}: "
                f"{asks}{policy}{scheduled}"
            )
            if row.get("payload_preview"):
                # What is approved, on one line: the request's own listing has it indented.
                console.print(f"    payload {_one_line(row['payload_preview'])}")
    for workflow_id, waits in await unpolled_runs(adk.client, adk.task_queue):
        print_waits(waits, f"{workflow_id}  stalled: ")
    if not shown:
        console.print("no open requests")
        return 0
    print_next_token(token)
    console.print(
        "answer with `adk-temporal confirm WORKFLOW_ID REQUEST_ID --approve|--reject` or "
        "`adk-temporal resume WORKFLOW_ID REQUEST_ID --input JSON`; "
        "`pending --workflow-id ID` prints the exact commands"
    )
    return 0


def _row(
    workflow_id: str,
    request: RequestSummary,
    published: Published,
    address: str,
    namespace: str,
) -> dict[str, Any]:
    """A request as ``pending --json`` prints it; with the schedule that started its run."""
    row = request_json(workflow_id, request, address, namespace)
    if published.schedule_id:
        row["schedule_id"] = published.schedule_id
    return row


def _policy_note(row: dict[str, Any]) -> str:
    """`` · 1 of 2 votes · claimed by alice`` for a request under a policy, else ``""``."""
    notes = []
    if row.get("approvals", 1) > 1:
        notes.append(f"{len(row.get('votes') or [])} of {row['approvals']} votes")
    if row.get("claimed_by") and (row.get("claimed_until") or 0) > time.time():
        notes.append(f"claimed by {row['claimed_by']}")
    return "".join(f" · {note}" for note in notes)


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def published_or_fail(adk: AdkClient, workflow_id: str) -> Published:
    """What a run published (no worker needed); a missing workflow is a one-line error."""
    try:
        return await adk.handle(workflow_id).published()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CliError(
                f"no invocation {workflow_id!r} in namespace {adk.client.namespace!r}",
                "`adk-temporal list` shows the invocations; check --namespace too",
            ) from err
        raise


_HINTS: dict[RefusalReason, str] = {
    "already_answered": "`adk-temporal show {wid}` shows how the run went on",
    "held": "start a worker for the task queue; `adk-temporal show {wid}` then shows whether "
    "the held answer applied or was refused",
    "run_closed": "`adk-temporal show {wid}` shows how the run ended",
    "no_run": "`adk-temporal list` shows the invocations; check --namespace too",
}
"""What to do next after a refusal, by reason; the rest point at the open requests."""


def refusal_error(refusal: Refused, workflow_id: str) -> CliError:
    """A desk's refusal as the CLI's one error line and its hint."""
    default = f"see the open requests with `adk-temporal pending --workflow-id {workflow_id}`"
    hint = _HINTS.get(refusal.reason, default).format(wid=workflow_id)
    return CliError(f"{refusal.message} [{refusal.reason}]", hint)


async def _answer(
    address: str,
    namespace: str,
    workflow_id: str,
    answer: ConfirmInput | ResumeInput,
    *,
    wait: float,
    checked_only: bool,
    as_json: bool,
) -> str:
    """Admit the answer through the desk, checked first: the checked update when a worker
    takes it within ``wait`` seconds, else the signal, which Temporal keeps until a worker
    picks the run up.

    Returns:
        ``"applied"`` (a worker checked and applied it) or ``"accepted"`` (Temporal holds it).

    Raises:
        CliError: The desk refused the answer (the reason, and who answered first when
            someone did), or with ``checked_only`` no worker answered in time.
    """
    desk = AnswerDesk(AdkClient(await connect(address, namespace)))
    try:
        with err_console.status("waiting for a worker to check the answer…"):
            outcome = await desk.submit(
                workflow_id, answer, policy="check_first", wait=wait, fallback=not checked_only
            )
    except TimeoutError as err:
        raise CliError(
            f"{err}, so it is not confirmed",
            "start a worker for the task queue; Temporal may still apply the update when "
            "one picks the run up (`adk-temporal pending` shows whether it did)",
        ) from None
    if isinstance(outcome, Refused):
        if as_json:
            print_json(
                {
                    "workflow_id": workflow_id,
                    "request_id": answer_id(answer),
                    "outcome": "refused",
                    **outcome.as_json(),
                }
            )
        raise refusal_error(outcome, workflow_id)
    return outcome.kind


def _answerer(as_name: str | None) -> str:
    """Who a CLI answer is recorded as: ``--as``, else the operating-system user."""
    return as_name or getpass.getuser()


def _cli_input(
    request_id: str, value: Any, as_name: str | None, groups: tuple[str, ...]
) -> ResumeInput:
    """An input answer as the CLI sends it: who gives it, through the ``cli`` channel."""
    return ResumeInput(
        interrupt_id=request_id,
        input=value,
        answered_by=_answerer(as_name),
        channel="cli",
        groups=list(groups) or None,
    )


def _answer_options(f: F) -> F:
    f = click.option(
        "--group",
        "groups",
        multiple=True,
        metavar="GROUP",
        help="A group the answerer is in, as approval policies name approvers (repeatable). "
        "Whoever reaches Temporal is trusted with what they state: give people the gateway, "
        "whose tokens name their groups, and keep the CLI for operators.",
    )(f)
    f = click.option(
        "--as",
        "as_name",
        metavar="NAME",
        help="Who answers, as the audit records it [default: your login name].",
    )(f)
    f = click.option(
        "--checked",
        "checked_only",
        is_flag=True,
        help="Fail unless a worker checks and applies the answer within --wait.",
    )(f)
    return click.option(
        "--wait",
        type=click.FloatRange(min=0),
        default=5.0,
        show_default=True,
        help="Seconds to wait for a worker to check the answer before leaving it with "
        "Temporal as a signal.",
    )(f)


def _report_answer(
    outcome: str, what: str, request_id: str, workflow_id: str, as_json: bool
) -> None:
    if as_json:
        print_json(
            {
                "workflow_id": workflow_id,
                "request_id": request_id,
                "answer": what,
                "outcome": outcome,
            }
        )
    elif outcome == "applied":
        console.print(f"{what} {request_id} of {workflow_id}")
    else:
        console.print(
            f"{what} {request_id} of {workflow_id}: accepted by Temporal; applies when a worker "
            "picks the run up"
        )


async def _answer_all(
    address: str,
    namespace: str,
    workflow_id: str,
    request_ids: list[str] | None,
    answer: ConfirmInput,
    *,
    wait: float,
    as_json: bool,
) -> int:
    """Answer ``request_ids`` (every open confirmation when ``None``) each as its own
    answer and print each outcome; exit status 1 when any was refused."""
    desk = AnswerDesk(AdkClient(await connect(address, namespace)))
    fields = answer.model_dump(exclude={"confirmation_id", "confirmed", "answered_at"})
    try:
        with err_console.status("answering…"):
            outcomes = await desk.confirm_batch(
                workflow_id,
                answer.confirmed,
                request_ids,
                **fields,
                policy="check_first",
                wait=wait,
            )
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        raise CliError(f"no invocation {workflow_id!r}", "`adk-temporal list` shows them") from err
    rows = [
        {"request_id": rid, "outcome": o.kind, **(o.as_json() if isinstance(o, Refused) else {})}
        for rid, o in outcomes
    ]
    if as_json:
        print_json({"workflow_id": workflow_id, "answers": rows})
    for row in [] if as_json else rows:
        refusal = f": {row['message']} [{row['reason']}]" if "reason" in row else ""
        console.print(f"{row['request_id']} {row['outcome']}{refusal}")
    if not rows and not as_json:
        console.print(f"{workflow_id} has no open confirmation requests")
    return 1 if any(o.kind == "refused" for _, o in outcomes) else 0


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("confirmation_ids", metavar="[CONFIRMATION_ID]...", nargs=-1)
@click.option("--approve/--reject", "approve", default=None, help="Approve or reject (required).")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Answer every open confirmation request of the run, each as its own answer.",
)
@click.option("--payload", type=JSON, help="JSON handed to the tool as tool_confirmation.payload.")
@click.option(
    "--edit-args",
    "edited_args",
    type=JSON,
    help="Approve with these arguments instead of the model's, as a JSON object (the tool "
    "must be declared editable=True).",
)
@grant_options
@_answer_options
@json_option
def confirm(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    confirmation_ids: tuple[str, ...],
    approve: bool | None,
    every: bool,
    payload: Any,
    edited_args: Any,
    grant_calls: int | None,
    grant_where: str | None,
    grant_ttl: timedelta,
    grant_scope: str,
    wait: float,
    checked_only: bool,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Approve or reject confirmation requests: one, several, or --all of the run's.

    A wrong id is an error, with or without a worker. When a worker checks the answer within
    --wait seconds it is applied at once; otherwise Temporal keeps it and it applies when a
    worker picks the run up (with --checked: exit 1 instead). Several answers are each
    admitted on their own (under a policy, each is its own vote); exit 1 if any is refused.
    """
    if approve is None:
        raise click.UsageError("give --approve or --reject")
    if edited_args is not None and (not isinstance(edited_args, dict) or not approve):
        raise click.UsageError("--edit-args takes a JSON object, and comes with --approve")
    if every == bool(confirmation_ids):
        raise click.UsageError("name the confirmation ids, or give --all (not both)")
    answer = ConfirmInput(
        confirmation_id=confirmation_ids[0] if confirmation_ids else "",
        confirmed=approve,
        payload=payload,
        answered_by=_answerer(as_name),
        channel="cli",
        edited_args=edited_args,
        groups=list(groups) or None,
        grant=grant_terms(approve, grant_calls, grant_where, grant_ttl, grant_scope),
    )
    if every or len(confirmation_ids) > 1:
        ids = None if every else list(confirmation_ids)
        run_command(
            _answer_all(address, namespace, workflow_id, ids, answer, wait=wait, as_json=as_json)
        )
    run_command(_answer_one(address, namespace, workflow_id, answer, wait, checked_only, as_json))


async def _answer_one(
    address: str,
    namespace: str,
    workflow_id: str,
    answer: ConfirmInput | ResumeInput,
    wait: float,
    checked_only: bool,
    as_json: bool,
) -> None:
    """One answer through the desk, checked first; the outcome printed."""
    outcome = await _answer(
        address,
        namespace,
        workflow_id,
        answer,
        wait=wait,
        checked_only=checked_only,
        as_json=as_json,
    )
    verb = "answered"
    if isinstance(answer, ConfirmInput):
        verb = "approved" if answer.confirmed else "rejected"
        verb = "approved with edited arguments" if answer.edited_args else verb
    _report_answer(outcome, verb, answer_id(answer), workflow_id, as_json)


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("interrupt_id")
@click.option("--input", "value", type=JSON, required=True, help="The answer, as JSON.")
@_answer_options
@json_option
def resume(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    interrupt_id: str,
    value: Any,
    wait: float,
    checked_only: bool,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Answer an input request with a JSON value (checked against the request's schema).

    Without a worker the schema is checked when one picks the run up; a refused value is
    then listed by `adk-temporal pending --workflow-id` and the request stays open.
    """

    answer = _cli_input(interrupt_id, value, as_name, groups)
    run_command(_answer_one(address, namespace, workflow_id, answer, wait, checked_only, as_json))


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("request_id")
@click.option(
    "--done",
    "result",
    type=JSON,
    metavar="JSON",
    help="The effect happened: the model sees this result (a JSON object).",
)
@click.option("--retry", is_flag=True, help="Run the tool again, once, with the same key.")
@click.option("--fail", "reason", metavar="REASON", help="The model sees an error with REASON.")
@click.option("--compensate", is_flag=True, help="Run the tool's compensating tool, once.")
@_answer_options
@json_option
def resolve(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    request_id: str,
    result: Any,
    retry: bool,
    reason: str | None,
    compensate: bool,
    wait: float,
    checked_only: bool,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Resolve a call in doubt: a tool with external effects whose worker was lost (or
    whose code raised) mid-call, listed by `pending` as an input request ``adk-doubt-…``.

    Give exactly one of --done JSON, --retry, --fail REASON, --compensate; the resolution is
    recorded with who gave it (--as) and has at most one effect.
    """
    chosen = [result is not None, retry, reason is not None, compensate]
    if chosen.count(True) != 1:
        raise click.UsageError("give exactly one of --done, --retry, --fail, --compensate")
    if result is not None and not isinstance(result, dict):
        raise click.UsageError("--done takes a JSON object, the result the model sees")
    value: dict[str, Any] = {"resolution": "done", "result": result}
    if retry or compensate:
        value = {"resolution": "retry" if retry else "compensate"}
    elif reason is not None:
        value = {"resolution": "fail", "reason": reason}
    answer = _cli_input(request_id, value, as_name, groups)
    run_command(_answer_one(address, namespace, workflow_id, answer, wait, checked_only, as_json))
