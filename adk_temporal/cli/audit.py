"""``adk-temporal audit``: a session's answers — decision, who, channel, when, call digest —
with the votes, claims, reassignments and grants of approval policies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
from rich.markup import escape

from ..audit import AuditEntry, AuditList, audit_entries, revocation_entries
from ..ids import SessionKey
from .common import (
    CliError,
    console,
    data_dir_option,
    encryption_option,
    json_option,
    postgres_option,
    print_json,
    run_command,
    session_options,
    workers_store,
)

__all__ = ["audit"]


_RUNTIME_STEPS = ("reminded", "reassigned")


def _line(entry: AuditEntry) -> str:
    when = (
        f"{datetime.fromtimestamp(entry.answered_at, UTC):%Y-%m-%d %H:%M:%S} UTC"
        if entry.answered_at is not None
        else "(time not recorded)"
    )
    if entry.decision in _RUNTIME_STEPS:
        who = "the runtime (its policy)"
    elif entry.decision == "granted":
        who = f"grant {entry.grant_id}"
    elif entry.decision == "revoked":
        who = entry.answered_by or "(not recorded)"
    else:
        who = f"{entry.answered_by or '(not recorded)'} via {entry.channel or '(not recorded)'}"
    digest = f" · call {entry.call_digest[:12]}" if entry.call_digest else ""
    extra = f" → {entry.assignee}" if entry.assignee else ""
    if entry.grant_id and entry.decision != "granted":
        extra += f" · grant {entry.grant_id}"
    vote = " (vote)" if entry.vote else ""
    return (
        f"{when}  {entry.decision:<10} {entry.tool or entry.kind}{vote}  by {who}{extra} · "
        f"{entry.request_id}{digest}"
    )


@click.command()
@json_option
@postgres_option
@data_dir_option
@session_options
@encryption_option
def audit(
    app_name: str,
    user_id: str,
    session_id: str,
    data_dir: Path,
    postgres_dsn: str | None,
    as_json: bool,
) -> None:
    """List who answered each request of a session, how, when, and what they decided."""

    async def body() -> None:
        sessions = workers_store(data_dir, postgres_dsn)
        key = SessionKey(app_name, user_id, session_id)
        try:
            stored = await sessions.get(key)
            grants = await sessions.list_grants(app_name, user_id, session_id)
        except LookupError as err:
            raise CliError(str(err), "check --app, --user, --session and --data-dir") from None
        finally:
            await sessions.close()
        entries = audit_entries(stored.events) + revocation_entries(grants)
        if as_json:
            print_json(AuditList(entries=entries).model_dump(mode="json"))
            return
        if not entries:
            console.print(f"no answered requests in session {key}")
        for entry in entries:
            console.print(escape(_line(entry)))

    run_command(body())
