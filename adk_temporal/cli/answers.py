"""``pending``, ``confirm``, ``resume``: what runs wait for, and answering them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import click
from rich.text import Text
from temporalio.service import RPCError, RPCStatusCode

from ..client import AdkClient, AnswerPendingError, InvocationHandle, deliver_answer
from ..errors import (
    InvalidAnswerError,
    InvalidResumeInputError,
    UnknownRequestIdError,
)
from ..render import summary_lines
from ..workflows.details import answer_commands
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
    run_command,
)

# ---------------------------------------------------------------- invocations

__all__ = ["confirm", "pending", "published_or_fail", "resume"]


@click.command()
@connection_options
@click.option("--workflow-id", help="Show this run's requests (default: every waiting run).")
@json_option
def pending(
    address: str, namespace: str, task_queue: str, workflow_id: str | None, as_json: bool
) -> None:
    """List the runs waiting for an approval or an input, and what they wait for.

    Reads what each run published in its memo: one visibility query (or one describe with
    --workflow-id), answered by Temporal itself, so it works while no worker runs.
    Without --workflow-id it lists every running invocation on --task-queue whose AdkStatus
    is awaiting_confirmation or awaiting_input.
    """

    async def body() -> int:
        client = await connect(address, namespace)
        adk = AdkClient(client, task_queue=task_queue)
        with err_console.status("reading…"):
            if workflow_id is not None:
                runs = [(workflow_id, await published_or_fail(adk, workflow_id))]
            else:
                runs = await adk.waiting_requests(task_queue=task_queue)
        found = [(wid, r) for wid, published in runs for r in published.requests]
        if as_json:
            print_json(
                [
                    {
                        "workflow_id": wid,
                        **r.model_dump(mode="json"),
                        "commands": answer_commands(wid, r, address, namespace),
                    }
                    for wid, r in found
                ]
            )
            return 0
        for _, published in runs if workflow_id is not None else []:
            for refusal in published.refused:
                # Every answer that changed nothing, with its reason: never lost silently.
                console.print(Text.assemble(("refused answer ", "bold red"), refusal))
        if not found:
            console.print("no open requests")
            return 0
        for wid, request in found:
            if workflow_id is not None:
                for line in summary_lines(wid, request, address, namespace):
                    console.print(line)
                continue
            # One line per request, ids whole: the console never wraps them.
            asks = request.hint if request.kind == "confirmation" else request.message
            kind = "approval" if request.kind == "confirmation" else "input"
            console.print(f"{wid}  {request.id}  {kind} of {request.call}: {asks}")
        if workflow_id is None:
            console.print(
                "answer with `adk-temporal confirm WORKFLOW_ID REQUEST_ID --approve|--reject` or "
                "`adk-temporal resume WORKFLOW_ID REQUEST_ID --input JSON`; "
                "`pending --workflow-id ID` prints the exact commands"
            )
        return 0

    run_command(body())


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


async def _answer(
    address: str,
    namespace: str,
    workflow_id: str,
    request_id: str,
    kind: str,
    send: Callable[[InvocationHandle, bool], Awaitable[None]],
    *,
    wait: float,
    checked_only: bool,
) -> str:
    """Send an answer: the checked update when a worker takes it within ``wait`` seconds,
    else the signal, which Temporal keeps until a worker picks the run up.

    Returns:
        ``"applied"`` (a worker checked and applied it) or ``"accepted"`` (Temporal holds it).

    Raises:
        CliError: The run or the request id does not exist (checked against what the run
            published, so no worker is needed to find out), Temporal already holds another
            answer to the request, a worker refused the answer, or with ``checked_only`` no
            worker answered in time.
    """
    client = await connect(address, namespace)
    adk = AdkClient(client)
    published = await published_or_fail(adk, workflow_id)
    hint = f"see the open requests with `adk-temporal pending --workflow-id {workflow_id}`"
    open_ids = {r.id: r.kind for r in published.requests}
    if open_ids and open_ids.get(request_id) not in (None, kind):
        raise CliError(f"{request_id!r} is not a {kind} request", hint)
    if open_ids and request_id not in open_ids:
        raise CliError(
            f"unknown {kind} id {request_id!r}; open requests: {', '.join(open_ids)}", hint
        )
    handle = adk.handle(workflow_id)
    try:
        with err_console.status("waiting for a worker to check the answer…"):
            return await deliver_answer(
                lambda checked: send(handle, checked),
                wait=wait,
                fallback=not checked_only,
                # A second answer sent while no worker runs would be dropped unreported.
                check=lambda: adk.refuse_if_held(workflow_id, request_id),
            )
    except AnswerPendingError as err:
        raise CliError(
            str(err),
            f"start a worker for the task queue; `adk-temporal show {workflow_id}` then shows "
            "whether the held answer applied or was refused",
        ) from err
    except TimeoutError as err:
        raise CliError(
            f"{err}, so it is not confirmed",
            "start a worker for the task queue; Temporal may still apply the update when "
            "one picks the run up (`adk-temporal pending` shows whether it did)",
        ) from None
    except (UnknownRequestIdError, InvalidResumeInputError, InvalidAnswerError) as err:
        raise CliError(str(err), hint) from err


def _answer_options(f: F) -> F:
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


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("confirmation_id")
@click.option("--approve/--reject", "approve", default=None, help="Approve or reject (required).")
@click.option("--payload", type=JSON, help="JSON handed to the tool as tool_confirmation.payload.")
@_answer_options
@json_option
def confirm(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    confirmation_id: str,
    approve: bool | None,
    payload: Any,
    wait: float,
    checked_only: bool,
    as_json: bool,
) -> None:
    """Approve or reject a confirmation request.

    A wrong id is an error, with or without a worker. When a worker checks the answer within
    --wait seconds it is applied at once; otherwise Temporal keeps it and it applies when a
    worker picks the run up (with --checked: exit 1 instead).
    """
    if approve is None:
        raise click.UsageError("give --approve or --reject")

    async def body() -> None:
        outcome = await _answer(
            address,
            namespace,
            workflow_id,
            confirmation_id,
            "confirmation",
            lambda h, checked: h.confirm(confirmation_id, approve, payload, checked=checked),
            wait=wait,
            checked_only=checked_only,
        )
        verb = "approved" if approve else "rejected"
        _report_answer(outcome, verb, confirmation_id, workflow_id, as_json)

    run_command(body())


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
    as_json: bool,
) -> None:
    """Answer an input request with a JSON value (checked against the request's schema).

    Without a worker the schema is checked when one picks the run up; a refused value is
    then listed by `adk-temporal pending --workflow-id` and the request stays open.
    """

    async def body() -> None:
        outcome = await _answer(
            address,
            namespace,
            workflow_id,
            interrupt_id,
            "input",
            lambda h, checked: h.resume(interrupt_id, value, checked=checked),
            wait=wait,
            checked_only=checked_only,
        )
        _report_answer(outcome, "answered", interrupt_id, workflow_id, as_json)

    run_command(body())
