"""``adk-temporal audit``: a session's answers — decision, who, channel, when, call digest."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
from rich.markup import escape

from ..audit import AuditEntry, AuditList, audit_entries
from ..ids import SessionKey
from ..worker import session_store
from .common import (
    CliError,
    console,
    data_dir_option,
    encryption_option,
    json_option,
    postgres_option,
    print_json,
    require_path,
    run_command,
    session_options,
    store_keys,
)

__all__ = ["audit"]


def _line(entry: AuditEntry) -> str:
    when = (
        f"{datetime.fromtimestamp(entry.answered_at, UTC):%Y-%m-%d %H:%M:%S} UTC"
        if entry.answered_at is not None
        else "(time not recorded)"
    )
    who = entry.answered_by or "(not recorded)"
    digest = f" · call {entry.call_digest[:12]}" if entry.call_digest else ""
    return (
        f"{when}  {entry.decision:<8} {entry.tool or entry.kind}  by {who} "
        f"via {entry.channel or '(not recorded)'} · {entry.request_id}{digest}"
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
        if not postgres_dsn:
            require_path(data_dir / "sessions.db", "session store")
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        key = SessionKey(app_name, user_id, session_id)
        try:
            stored = await sessions.get(key)
        except LookupError as err:
            raise CliError(str(err), "check --app, --user, --session and --data-dir") from None
        finally:
            await sessions.close()
        entries = audit_entries(stored.events)
        if as_json:
            print_json(AuditList(entries=entries).model_dump(mode="json"))
            return
        if not entries:
            console.print(f"no answered requests in session {key}")
        for entry in entries:
            console.print(escape(_line(entry)))

    run_command(body())
