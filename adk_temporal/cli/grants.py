"""``grants list`` and ``grants revoke``: the standing grants approvals gave, in the
workers' session store; and the ``confirm`` options that give one."""

from __future__ import annotations

import getpass
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import click
from rich.markup import escape

from ..approvals import Grant, GrantNotFoundError, GrantScope, GrantTerms, InvalidPolicyError
from .common import (
    CliError,
    F,
    console,
    data_dir_option,
    json_option,
    postgres_option,
    print_json,
    project_option,
    run_command,
    workers_store,
)

__all__ = ["DurationParam", "grant_options", "grant_terms", "grants"]


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


class DurationParam(click.ParamType):  # type: ignore[type-arg]  # generic only in click >= 8.2
    """A duration: seconds, or a number with ``s``, ``m``, ``h`` or ``d`` (``90m``, ``2h``)."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> timedelta:
        """Parse ``value``."""
        if isinstance(value, timedelta):
            return value
        text = str(value).strip().lower()
        unit = _UNITS.get(text[-1:])
        try:
            seconds = float(text[:-1] if unit is not None else text) * (unit or 1)
        except ValueError:
            self.fail(f"{value!r} is not a duration such as 90, 30m, 2h or 1d", param, ctx)
        return timedelta(seconds=seconds)


def grant_options(f: F) -> F:
    """Add ``--grant-calls``, ``--grant-where``, ``--grant-for`` and ``--grant-scope``."""
    f = click.option(
        "--grant-scope",
        type=click.Choice(["session", "user"]),
        default="session",
        show_default=True,
        help="Where the grant's later calls may be: this session, or any of the user's.",
    )(f)
    f = click.option(
        "--grant-for",
        "grant_ttl",
        type=DurationParam(),
        default="1h",
        show_default=True,
        help="How long the grant stands (90, 30m, 2h, 1d).",
    )(f)
    f = click.option(
        "--grant-where",
        metavar="PREDICATE",
        help="Only later calls whose arguments satisfy it, e.g. 'amount <= 50'.",
    )(f)
    return click.option(
        "--grant-calls",
        type=click.IntRange(min=1),
        help="With --approve: let at most this many later calls of the same tool run without "
        "asking (a standing grant).",
    )(f)


def grant_terms(
    approve: bool, calls: int | None, where: str | None, ttl: timedelta, scope: str
) -> GrantTerms | None:
    """The grant the options ask for, or ``None`` when they ask for none.

    Raises:
        click.UsageError: Grant options without ``--approve`` or ``--grant-calls``, or
            terms that cannot be used (a predicate that does not parse, a year's ttl).
    """
    if calls is None:
        if where is not None:
            raise click.UsageError("--grant-where comes with --grant-calls")
        return None
    if not approve:
        raise click.UsageError("a grant (--grant-calls) comes with --approve")
    try:
        return GrantTerms(scope=cast(GrantScope, scope), max_calls=calls, where=where, ttl=ttl)
    except InvalidPolicyError as err:
        raise click.UsageError(str(err)) from None


def _when(at: float | None) -> str:
    return f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC" if at else "-"


def _line(grant: Grant, now: float) -> str:
    where = f" where {grant.where}" if grant.where else ""
    scope = f"session {grant.session_id}" if grant.session_id else "every session of the user"
    revoked = f", revoked by {grant.revoked_by} at {_when(grant.revoked_at)}" * bool(
        grant.revoked_at
    )
    return (
        f"{grant.id}  {grant.status(now):<8} {grant.tool}{where}: {grant.uses} of "
        f"{grant.max_calls} calls, {scope}, by {grant.granted_by or '(not recorded)'} "
        f"until {_when(grant.expires_at)}{revoked}"
    )


@click.group()
def grants() -> None:
    """List and revoke the standing grants approvals gave (read from the workers' store)."""


@grants.command("list")
@json_option
@postgres_option
@data_dir_option
@click.option(
    "--session", "session_id", help="Only the grants this session's calls may use (default: all)."
)
@project_option("user", "--user", "user_id", "User id")
@project_option("app", "--app", "app_name", "App name")
def list_grants(
    app_name: str,
    user_id: str,
    session_id: str | None,
    data_dir: Path,
    postgres_dsn: str | None,
    as_json: bool,
) -> None:
    """List a user's standing grants: tool, predicate, calls used, scope, who, expiry."""

    async def body() -> None:
        sessions = workers_store(data_dir, postgres_dsn)
        try:
            found = await sessions.list_grants(app_name, user_id, session_id)
        finally:
            await sessions.close()
        if as_json:
            print_json({"grants": [g.model_dump(mode="json") for g in found]})
            return
        now = time.time()
        for grant in found:
            console.print(escape(_line(grant, now)))
        if not found:
            console.print(f"no grants for user {user_id} of app {app_name}")

    run_command(body())


@grants.command("revoke")
@json_option
@postgres_option
@data_dir_option
@click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="Who revokes, as the audit records it [default: your login name].",
)
@project_option("app", "--app", "app_name", "App name")
@click.argument("grant_id")
def revoke_grant(
    app_name: str,
    grant_id: str,
    as_name: str | None,
    data_dir: Path,
    postgres_dsn: str | None,
    as_json: bool,
) -> None:
    """Revoke a standing grant: later calls pause for approval as before."""

    async def body() -> None:
        sessions = workers_store(data_dir, postgres_dsn)
        try:
            revoked = await sessions.revoke_grant(
                app_name, grant_id, by=as_name or getpass.getuser(), now=time.time()
            )
        except GrantNotFoundError as err:
            raise CliError(str(err), "`adk-temporal grants list` shows the grants") from None
        finally:
            await sessions.close()
        if as_json:
            print_json(revoked.model_dump(mode="json"))
        else:
            console.print(escape(_line(revoked, time.time())))

    run_command(body())
