"""``forget``, ``forgotten`` and ``retention``: erase a session's data, list the erasures,
and forget idle sessions on a schedule."""

from __future__ import annotations

import getpass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
from rich.markup import escape

from ..client import AdkClient
from ..keys import DataKeys, ForgetEntry, RetentionReport, Target
from ..worker import artifact_store, session_store
from .common import (
    CliError,
    connect,
    connection_options,
    console,
    data_dir_option,
    data_keys,
    encryption_option,
    gcs_bucket_option,
    json_option,
    postgres_option,
    print_json,
    run_command,
    store_keys,
)

__all__ = ["forget", "forgotten", "retention"]

_NEEDS_KEYS = (
    "give the key file whose 'data_keys' section the workers use: --encryption-key-file or "
    "ADK_ENCRYPTION_KEY_FILE (see docs/guides/encryption.md)"
)


def _keys() -> DataKeys:
    keys = data_keys()
    if keys is None:
        raise CliError("this needs per-session data keys", _NEEDS_KEYS)
    return keys


def _when(at: float) -> str:
    return f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC"


def _entry_line(entry: ForgetEntry) -> str:
    went = f"{len(entry.sessions)} session(s), {entry.artifacts} artifact name(s)"
    runs = f", cancelled {', '.join(entry.runs_cancelled)}" if entry.runs_cancelled else ""
    return (
        f"{_when(entry.at)}  {entry.outcome:<9} {entry.target}  by {entry.by} via "
        f"{entry.channel}: {entry.reason} · {went}, {len(entry.key_ids)} key(s){runs}"
    )


def _target(app_name: str, user_id: str | None, session_id: str | None, every: bool) -> Target:
    if session_id is not None and user_id is None:
        raise click.UsageError("--session needs --user")
    target = Target(app_name=app_name, user_id=user_id, session_id=session_id)
    if target.level != "session" and not every:
        raise click.UsageError(
            f"this forgets every session of {target.level} {target.scope}: add --all to say so"
        )
    return target


@click.command()
@connection_options
@data_dir_option
@postgres_option
@gcs_bucket_option
@json_option
@click.option("--app", "app_name", required=True, help="The app (alone: every user of it).")
@click.option("--user", "user_id", help="The user (without --session: every session of it).")
@click.option("--session", "session_id", help="The session.")
@click.option("--reason", required=True, help="Why, for the forget log (a ticket, a request).")
@click.option("--all", "every", is_flag=True, help="Confirm forgetting a whole user or app.")
@click.option("--dry-run", is_flag=True, help="List what would go; change nothing.")
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds a cancelled run may take to close before it is terminated.",
)
def forget(
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
    gcs_bucket: str | None,
    as_json: bool,
    app_name: str,
    user_id: str | None,
    session_id: str | None,
    reason: str,
    every: bool,
    dry_run: bool,
    grace: float,
) -> None:
    """Forget a session (or a user, or an app): cancel its open runs, delete its rows,
    artifacts and data key. Its payloads in Temporal history and any copy of its data then
    no longer decode ("forgotten"); other sessions are untouched. Logged with who and why.
    """
    target = _target(app_name, user_id, session_id, every)

    async def body() -> None:
        keys = _keys()
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        adk = AdkClient(await connect(address, namespace), session_service=sessions)
        try:
            entry = await adk.forget(
                target,
                by=getpass.getuser(),
                reason=reason,
                artifact_service=artifact_store(data_dir, gcs_bucket, keys=store_keys()),
                keys=keys,
                channel="cli",
                grace=timedelta(seconds=grace),
                dry_run=dry_run,
            )
        finally:
            await sessions.close()
        if as_json:
            print_json(entry.model_dump(mode="json"))
            return
        console.print(escape(_entry_line(entry)))

    run_command(body())


@click.command()
@encryption_option
@json_option
@click.option("--app", "app_name", help="Only what was forgotten of this app.")
@click.option("--user", "user_id", help="… of this user.")
@click.option("--session", "session_id", help="… of this session.")
def forgotten(
    as_json: bool, app_name: str | None, user_id: str | None, session_id: str | None
) -> None:
    """List the forget log: who forgot what, when, why, and what went with it."""
    if session_id is not None and user_id is None:
        raise click.UsageError("--session needs --user")
    if user_id is not None and app_name is None:
        raise click.UsageError("--user needs --app")

    async def body() -> None:
        keys = _keys()
        prefix = "/".join(p for p in (app_name, user_id, session_id) if p) or None
        entries = keys.store.entries(prefix)
        if as_json:
            print_json([e.model_dump(mode="json") for e in entries])
            return
        if not entries:
            console.print("nothing forgotten" + (f" of {prefix}" if prefix else ""))
        for entry in entries:
            console.print(escape(_entry_line(entry)))

    run_command(body())


@click.group()
def retention() -> None:
    """Forget an app's sessions idle longer than its App.retention, now or on a schedule."""


def _print_report(report: RetentionReport, as_json: bool) -> None:
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    if report.retention_days is None:
        console.print(f"app {report.app_name} keeps sessions for ever (App.retention is None)")
        return
    console.print(
        f"{report.app_name}: sessions idle more than {report.retention_days:g} days"
        + (" (dry run)" if report.dry_run else "")
    )
    for idle in report.sessions:
        console.print(
            escape(f"  {idle.session}  idle since {_when(idle.last_update)}  {idle.outcome}")
        )
    if not report.sessions:
        console.print("  none")


@retention.command("run")
@connection_options
@json_option
@click.option("--app", "app_name", required=True, help="The app to sweep.")
@click.option("--dry-run", is_flag=True, help="List the sessions past the limit; forget none.")
def retention_run(
    address: str, namespace: str, task_queue: str, as_json: bool, app_name: str, dry_run: bool
) -> None:
    """Run one sweep now, on the app's workers, and print what it forgot (or would)."""

    async def body() -> None:
        adk = AdkClient(await connect(address, namespace), task_queue=task_queue)
        _print_report(await adk.sweep_retention(app_name, dry_run=dry_run), as_json)

    run_command(body())


@retention.command("schedule")
@connection_options
@click.option("--app", "app_name", required=True, help="The app to sweep.")
@click.option(
    "--every-hours",
    type=click.FloatRange(min=0.01),
    default=24.0,
    show_default=True,
    help="Hours between sweeps.",
)
def retention_schedule(
    address: str, namespace: str, task_queue: str, app_name: str, every_hours: float
) -> None:
    """Create (or update) the Temporal schedule that sweeps the app every few hours."""

    async def body() -> None:
        adk = AdkClient(await connect(address, namespace), task_queue=task_queue)
        schedule_id = await adk.schedule_retention(app_name, every=timedelta(hours=every_hours))
        console.print(f"schedule {schedule_id}: a retention sweep every {every_hours:g} h")

    run_command(body())
