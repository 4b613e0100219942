"""``inbox``, ``claim``, ``release``, ``assign``: the waiting requests as an approver's
inbox, and taking one on."""

from __future__ import annotations

import getpass
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import click
from rich.markup import escape

from ..answers import AnswerDesk, Refused
from ..approvals import InboxAction, InboxFilter, InvalidPolicyError
from ..client import AdkClient
from ..flow.messages import RequestSummary
from ..visibility import MAX_PAGE_SIZE, InvalidPageTokenError, UnquotableValueError
from .answers import refusal_error
from .common import (
    CliError,
    connect,
    connection_options,
    console,
    err_console,
    json_option,
    print_json,
    run_command,
)
from .grants import DurationParam
from .paging import Paging, echo_json_stream, page_options, paging_of, print_next_token

__all__ = ["assign", "claim", "inbox", "release"]


def _when(at: float | None) -> str:
    return f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M} UTC" if at else ""


def _row(workflow_id: str, request: RequestSummary, now: float) -> dict[str, Any]:
    held = request.claimed_until is not None and request.claimed_until > now
    return {
        "workflow_id": workflow_id,
        **request.model_dump(mode="json"),
        "claimed": held,
        "overdue": request.due_at is not None and request.due_at < now,
    }


def _line(row: dict[str, Any]) -> str:
    parts = [f"{row['workflow_id']}  {row['id']}  {row['call']}"]
    if row["assignee"]:
        parts.append(f"assigned to {row['assignee']}")
    if row["claimed"]:
        parts.append(f"claimed by {row['claimed_by']} until {_when(row['claimed_until'])}")
    if row["due_at"]:
        parts.append(f"{'OVERDUE since' if row['overdue'] else 'due'} {_when(row['due_at'])}")
    if row["kind"] == "confirmation" and row["approvals"] > 1:
        parts.append(f"{len(row['votes'])} of {row['approvals']} votes")
    return " · ".join(parts)


@click.command()
@connection_options
@click.option(
    "--assignee",
    "assignees",
    multiple=True,
    metavar="NAME",
    help="Only requests assigned to this group or principal (repeatable).",
)
@click.option(
    "--claimed/--unclaimed",
    default=None,
    help="Only claimed requests, or only unclaimed ones [default: both, except those "
    "someone else claimed].",
)
@click.option("--overdue", is_flag=True, help="Only requests past their due time.")
@click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="Whose inbox: requests others claimed are hidden [default: your login name].",
)
@click.option("--app", "app_name", help="Only this app's runs.")
@click.option("--user", "user_id", help="Only this user's (tenant's) runs.")
@page_options
@json_option
def inbox(
    address: str,
    namespace: str,
    task_queue: str,
    assignees: tuple[str, ...],
    claimed: bool | None,
    overdue: bool,
    as_name: str | None,
    app_name: str | None,
    user_id: str | None,
    page_size: int | None,
    page_token: str | None,
    every: bool,
    as_json: bool,
) -> None:
    """List the waiting requests as an inbox: assignee, claim, due time, votes.

    Reads what each waiting run published (visibility and memos: no worker needed), a page
    of runs at a time; the filters apply to each page's requests.
    """
    paging = paging_of(page_size, page_token, every)
    view = InboxFilter(
        assignee=assignees, claimed=claimed, overdue=overdue, viewer=as_name or getpass.getuser()
    )

    async def body() -> None:
        adk = AdkClient(await connect(address, namespace), task_queue=task_queue)
        await _print_pages(adk, view, app_name, user_id, paging, as_json)

    run_command(body())


async def _print_pages(
    adk: AdkClient,
    view: InboxFilter,
    app_name: str | None,
    user_id: str | None,
    paging: Paging,
    as_json: bool,
) -> None:
    token = paging.token
    shown = 0

    async def pages() -> AsyncIterator[list[dict[str, Any]]]:
        nonlocal token, shown
        while True:
            try:
                found, token = await adk.inbox_page(
                    view,
                    app_name=app_name,
                    user_id=user_id,
                    page_size=paging.page_size or MAX_PAGE_SIZE,
                    page_token=token,
                )
            except (InvalidPageTokenError, UnquotableValueError) as err:
                raise CliError(str(err)) from None
            now = time.time()
            rows = [_row(w, r, now) for w, r in found]
            shown += len(rows)
            yield rows
            if token is None or paging.one_page:
                return

    if as_json and not paging.one_page:
        await echo_json_stream(pages())
        return
    if as_json:
        print_json(
            {"requests": [r async for page in pages() for r in page], "next_page_token": token}
        )
        return
    async for page in pages():
        for row in page:
            console.print(escape(_line(row)))
    if not shown:
        console.print("nothing in this inbox")
    print_next_token(token)


def _act(
    address: str,
    namespace: str,
    workflow_id: str,
    as_json: bool,
    done: str,
    who: tuple[str | None, tuple[str, ...]],
    **fields: Any,
) -> None:
    """Take the inbox action ``fields`` name as ``who`` (``--as``, ``--group``) through the
    desk; print the outcome, or the refusal as the CLI's error."""
    as_name, groups = who
    action = _action(
        answered_by=as_name or getpass.getuser(), groups=list(groups), channel="cli", **fields
    )

    async def body() -> None:
        desk = AnswerDesk(AdkClient(await connect(address, namespace)))
        with err_console.status("waiting for a worker to take it…"):
            outcome = await desk.inbox(workflow_id, action)
        if isinstance(outcome, Refused):
            if as_json:
                refused = {"request_id": action.request_id, "outcome": "refused"}
                print_json({**refused, **outcome.as_json()})
            raise refusal_error(outcome, workflow_id)
        if as_json:
            print_json({"request_id": action.request_id, "outcome": outcome.kind})
        else:
            console.print(f"{done} {action.request_id} of {workflow_id} ({outcome.kind})")

    run_command(body())


def _action(**fields: Any) -> InboxAction:
    """The action the arguments name; an unusable name is a usage error."""
    try:
        return InboxAction(**fields)
    except InvalidPolicyError as err:
        raise click.UsageError(str(err)) from None


def _who(f: Any) -> Any:
    f = click.option(
        "--group",
        "groups",
        multiple=True,
        metavar="GROUP",
        help="A group the claimant is in, as the policy's approvers name them (repeatable).",
    )(f)
    return click.option(
        "--as",
        "as_name",
        metavar="NAME",
        help="Who acts, as the audit records it [default: your login name].",
    )(f)


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("request_id")
@click.option(
    "--for", "hold", type=DurationParam(), help="How long it holds [default: the policy's]."
)
@_who
@json_option
def claim(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    request_id: str,
    hold: Any,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Claim a waiting request: others' answers are refused until you release it (or the
    claim lapses), and it leaves their inbox."""
    seconds = hold.total_seconds() if hold is not None else None
    who = (as_name, groups)
    _act(
        address,
        namespace,
        workflow_id,
        as_json,
        "claimed",
        who,
        request_id=request_id,
        action="claim",
        seconds=seconds,
    )


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("request_id")
@_who
@json_option
def release(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    request_id: str,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Release your claim on a waiting request."""
    who = (as_name, groups)
    _act(
        address,
        namespace,
        workflow_id,
        as_json,
        "released",
        who,
        request_id=request_id,
        action="release",
    )


@click.command()
@connection_options
@click.argument("workflow_id")
@click.argument("request_id")
@click.argument("assignee")
@_who
@json_option
def assign(
    address: str,
    namespace: str,
    task_queue: str,
    workflow_id: str,
    request_id: str,
    assignee: str,
    as_name: str | None,
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    """Assign a waiting request to a group or principal: it moves to their inbox (the
    request's approval policy still says who may answer it)."""
    done = f"assigned to {assignee}:"
    who = (as_name, groups)
    _act(
        address,
        namespace,
        workflow_id,
        as_json,
        done,
        who,
        request_id=request_id,
        action="assign",
        assignee=assignee,
    )
