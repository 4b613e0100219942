"""``schedule create|list|describe|pause|unpause|trigger|backfill|delete``: recurring agent
jobs on Temporal's schedules (:mod:`adk_temporal.schedules`)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import click

from ..client import AdkClient
from ..double_texting import POLICIES
from ..run_config import RunConfig
from ..schedules import OVERLAP_POLICIES, AgentSchedule, Overlap, Schedules, ScheduleView
from .common import (
    agent_option,
    connect,
    connection_options,
    console,
    json_option,
    print_json,
    project_option,
    run_command,
)

__all__ = ["Duration", "schedule"]

_PART = re.compile(r"(\d+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Duration(click.ParamType):  # type: ignore[type-arg]  # generic only in click >= 8.2
    """A duration: ``90`` (seconds), ``30s``, ``5m``, ``2h``, ``1d``, or parts such as
    ``1h30m``."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> timedelta:
        """``value`` as a positive :class:`~datetime.timedelta`."""
        if isinstance(value, timedelta):
            return value
        text = str(value).strip()
        if text.isdecimal():
            seconds = int(text)
        elif text and _PART.sub("", text) == "":
            seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(text))
        else:
            self.fail(f"{value!r} is no duration: use 90, 30s, 5m, 2h, 1d or 1h30m", param, ctx)
        if seconds <= 0:
            self.fail(f"{value!r} is not a positive duration", param, ctx)
        return timedelta(seconds=seconds)


class Moment(click.ParamType):  # type: ignore[type-arg]  # generic only in click >= 8.2
    """A time with its zone, ISO 8601 (``2026-12-01T06:00:00Z``)."""

    name = "time"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        """``value`` as an aware :class:`~datetime.datetime`."""
        try:
            when = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is no ISO 8601 time (2026-12-01T06:00:00Z)", param, ctx)
        if when.tzinfo is None:
            self.fail(f"{value!r} has no time zone: end it with Z or +hh:mm", param, ctx)
        return when


def _run(body: Callable[[Schedules], Awaitable[int | None]]) -> Callable[..., None]:
    """The command's body, given the schedules of the connection's task queue."""

    def command(address: str, namespace: str, task_queue: str) -> None:
        async def connected() -> int | None:
            client = await connect(address, namespace)
            return await body(Schedules(AdkClient(client, task_queue=task_queue)))

        run_command(connected())

    return command


def _wanted(options: dict[str, Any]) -> AgentSchedule:
    """The schedule ``create``'s options describe.

    Raises:
        InvalidScheduleError: They describe none (no cron and no interval, say).
    """
    shared: str | None = options["shared_session"]
    config = RunConfig(**({"max_steps": options["max_steps"]} if options["max_steps"] else {}))
    return AgentSchedule(
        schedule_id=options["schedule_id"],
        app_name=options["app_name"],
        user_id=options["user_id"],
        agent=options["agent"],
        message=options["message"],
        cron=list(options["crons"]),
        every=options["every"],
        offset=options["offset"],
        time_zone=options["time_zone"],
        jitter=options["jitter"],
        catchup_window=options["catchup_window"],
        overlap=options["overlap"],
        sessions="shared" if shared else "per_firing",
        session_id=shared,
        double_texting=options["double_texting"],
        config=config,
        pause_on_failure=options["pause_on_failure"],
        paused=options["paused"],
        note=options["note"],
    )


def _view_json(view: ScheduleView) -> dict[str, Any]:
    return view.model_dump(mode="json")


def _print_view(view: ScheduleView) -> None:
    s = view.schedule
    when = ", ".join([*(f"cron {c!r}" for c in s.cron), *([f"every {s.every}"] if s.every else [])])
    state = f"paused ({view.note})" if view.paused else "active"
    console.print(f"[bold]{s.schedule_id}[/]  {state}  {when}")
    console.print(f"  runs     {s.agent} of {s.app_name} for {s.user_id}: {s.message!r}")
    session = f"shared session {s.shared_session}" if s.sessions == "shared" else "per firing"
    busy = s.double_texting or "the app's policy"
    console.print(f"  sessions {session}; overlap {s.overlap}; busy session: {busy}")
    if view.next_runs:
        console.print(f"  next     {view.next_runs[0]:%Y-%m-%d %H:%M:%S %Z}")
    console.print(
        f"  fired    {view.fired} (skipped for overlap {view.skipped_for_overlap}, missed "
        f"{view.missed_catchup}); running {len(view.running)}"
    )
    for firing in view.recent[-3:]:
        console.print(f"  fired at {firing.scheduled_at:%Y-%m-%d %H:%M:%S}  {firing.workflow_id}")


@click.group()
def schedule() -> None:
    """Recurring agent jobs: a message run against an agent on a cron or an interval."""


@schedule.command("create")
@connection_options
@project_option("app", "--app", "app_name", "App name")
@project_option("user", "--user", "user_id", "User id")
@agent_option
@click.option("--cron", "crons", multiple=True, help="A cron expression (repeatable).")
@click.option("--every", type=Duration(), help="An interval: 30s, 5m, 1h, 1d.")
@click.option("--offset", type=Duration(), help="Shift the interval's firings by this much.")
@click.option("--time-zone", help="IANA time zone of the cron expressions (default UTC).")
@click.option("--jitter", type=Duration(), help="Delay each firing by up to this, at random.")
@click.option("--catchup-window", type=Duration(), help="How late a missed firing may run.")
@click.option(
    "--overlap",
    type=click.Choice(OVERLAP_POLICIES),
    default="skip",
    show_default=True,
    help="A firing due while one of the schedule's invocations runs.",
)
@click.option(
    "--shared-session",
    "shared_session",
    default=None,
    metavar="SESSION",
    help="Run every firing in this one session (default: a new session per firing).",
)
@click.option(
    "--double-texting",
    type=click.Choice(POLICIES),
    help="A firing that finds the shared session busy (default: the app's policy).",
)
@click.option("--max-steps", type=click.IntRange(min=1), help="Step limit of each invocation.")
@click.option("--pause-on-failure", is_flag=True, help="Pause when an invocation fails.")
@click.option("--paused", is_flag=True, help="Create it paused (fire it with `trigger`).")
@click.option("--note", help="Shown with the schedule.")
@json_option
@click.argument("schedule_id")
@click.argument("message")
def create(**options: Any) -> None:
    """Create schedule SCHEDULE_ID running MESSAGE; give --cron and/or --every.

    Each firing runs MESSAGE in a new session named SCHEDULE_ID-<scheduled time>, or in
    --shared-session, where a firing that finds the session busy follows --double-texting.
    """

    async def body(schedules: Schedules) -> int:
        view = await schedules.create(_wanted(options))
        if options["as_json"]:
            print_json(_view_json(view))
        else:
            _print_view(view)
        return 0

    _run(body)(options["address"], options["namespace"], options["task_queue"])


@schedule.command("list")
@connection_options
@click.option("--app", "app_name", help="Only this app's schedules.")
@json_option
def list_schedules(
    address: str, namespace: str, task_queue: str, app_name: str | None, as_json: bool
) -> None:
    """List the schedules (no worker is needed)."""

    async def body(schedules: Schedules) -> int:
        views = await schedules.list(app_name=app_name)
        if as_json:
            print_json([_view_json(v) for v in views])
            return 0
        if not views:
            console.print("no schedules")
        for view in views:
            _print_view(view)
        return 0

    _run(body)(address, namespace, task_queue)


@schedule.command("describe")
@connection_options
@json_option
@click.argument("schedule_id")
def describe(
    address: str, namespace: str, task_queue: str, as_json: bool, schedule_id: str
) -> None:
    """Show one schedule: what it runs, when, its state and its latest firings."""

    async def body(schedules: Schedules) -> int:
        view = await schedules.describe(schedule_id)
        if as_json:
            print_json(_view_json(view))
        else:
            _print_view(view)
        return 0

    _run(body)(address, namespace, task_queue)


def _acted(verb: str, schedule_id: str) -> int:
    console.print(f"{verb} {schedule_id}")
    return 0


_NOTE = click.option("--note", help="Why; shown with the schedule.")
_OVERLAP = click.option(
    "--overlap", type=click.Choice(OVERLAP_POLICIES), help="Instead of the schedule's policy."
)


@schedule.command("pause")
@connection_options
@_NOTE
@click.argument("schedule_id")
def pause(
    address: str, namespace: str, task_queue: str, note: str | None, schedule_id: str
) -> None:
    """Stop SCHEDULE_ID firing until it is unpaused."""

    async def body(schedules: Schedules) -> int:
        await schedules.pause(schedule_id, note)
        return _acted("paused", schedule_id)

    _run(body)(address, namespace, task_queue)


@schedule.command("unpause")
@connection_options
@_NOTE
@click.argument("schedule_id")
def unpause(
    address: str, namespace: str, task_queue: str, note: str | None, schedule_id: str
) -> None:
    """Let SCHEDULE_ID fire again."""

    async def body(schedules: Schedules) -> int:
        await schedules.unpause(schedule_id, note)
        return _acted("unpaused", schedule_id)

    _run(body)(address, namespace, task_queue)


@schedule.command("trigger")
@connection_options
@_OVERLAP
@click.argument("schedule_id")
def trigger(
    address: str, namespace: str, task_queue: str, overlap: Overlap | None, schedule_id: str
) -> None:
    """Fire SCHEDULE_ID once now (a paused one too)."""

    async def body(schedules: Schedules) -> int:
        await schedules.trigger(schedule_id, overlap=overlap)
        return _acted("triggered", schedule_id)

    _run(body)(address, namespace, task_queue)


@schedule.command("backfill")
@connection_options
@click.option("--start", required=True, type=Moment(), help="From this time.")
@click.option("--end", required=True, type=Moment(), help="Until this time.")
@_OVERLAP
@click.argument("schedule_id")
def backfill(
    address: str,
    namespace: str,
    task_queue: str,
    start: datetime,
    end: datetime,
    overlap: Overlap | None,
    schedule_id: str,
) -> None:
    """Fire SCHEDULE_ID for each time it was due from --start to --end."""
    if end <= start:
        raise click.BadParameter("--end must come after --start", param_hint="--end")

    async def body(schedules: Schedules) -> int:
        await schedules.backfill(schedule_id, start, end, overlap=overlap)
        return _acted("backfilled", schedule_id)

    _run(body)(address, namespace, task_queue)


@schedule.command("delete")
@connection_options
@click.argument("schedule_id")
def delete(address: str, namespace: str, task_queue: str, schedule_id: str) -> None:
    """Delete SCHEDULE_ID; invocations it started run on."""

    async def body(schedules: Schedules) -> int:
        await schedules.delete(schedule_id)
        return _acted("deleted", schedule_id)

    _run(body)(address, namespace, task_queue)
