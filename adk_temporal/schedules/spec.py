"""What a schedule is, as its owner describes it, and how it stands, as it is listed."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from adk_temporal.budgets import Budgets, check_budget
from adk_temporal.double_texting import DoubleTexting
from adk_temporal.errors import AdkRequestError
from adk_temporal.ids import id_problem
from adk_temporal.run_config import RunConfig
from adk_temporal.workflows.fire import SessionMode

__all__ = [
    "MAX_SCHEDULE_ID_CHARS",
    "OVERLAP_POLICIES",
    "AgentSchedule",
    "InvalidScheduleError",
    "Overlap",
    "RecentFiring",
    "ScheduleExistsError",
    "ScheduleNotFoundError",
    "ScheduleView",
]

MAX_SCHEDULE_ID_CHARS = 100
"""The longest schedule id: a firing's session is ``<id>-<YYYYMMDDTHHMMSSZ>``, within the
128 bytes of a session id."""

_SCHEDULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

Overlap = Literal["skip", "buffer_one", "buffer_all", "cancel_other", "allow_all"]
"""Temporal's overlap policy among the schedule's own invocations: ``skip`` a firing while
one runs, buffer one or all of them, cancel the running one, or allow all at once.
(Terminating the other is left out: it would skip the cancellation event an invocation
stores.)"""

OVERLAP_POLICIES: tuple[Overlap, ...] = get_args(Overlap)
"""Every overlap policy."""


class InvalidScheduleError(AdkRequestError):
    """A schedule's description is malformed: the message names the field. (Not a
    ``ValueError``, which pydantic would wrap: it is raised as it is from construction.)"""


class ScheduleNotFoundError(AdkRequestError, LookupError):
    """No schedule of adk-temporal has this id."""


class ScheduleExistsError(AdkRequestError):
    """A schedule with this id exists already."""


class AgentSchedule(BaseModel):
    """A recurring agent job: what runs, when, in which session, and what collisions do.

    Raises:
        InvalidScheduleError: On construction, naming the field: an id that breaks the id
            grammar, no cron and no interval, a shared session with ``cancel_other``.
    """

    # A misspelt field would otherwise be dropped silently and its default used.
    model_config = ConfigDict(extra="forbid")

    schedule_id: str
    app_name: str
    user_id: str
    agent: str
    message: str
    cron: list[str] = Field(default_factory=list)
    """Cron expressions (``"0 6 * * 1-5"``: 06:00 on weekdays), in ``time_zone``."""
    every: timedelta | None = None
    """An interval (``timedelta(hours=1)``), counted from the epoch, plus ``offset``."""
    offset: timedelta | None = None
    time_zone: str | None = None
    """An IANA time zone name for the cron expressions (UTC when ``None``)."""
    jitter: timedelta | None = None
    """Each firing is delayed by a random time up to this, spreading load."""
    catchup_window: timedelta | None = None
    """How late a firing missed while the server was down may still run (Temporal's
    default, a year, when ``None``)."""
    overlap: Overlap = "skip"
    sessions: SessionMode = "per_firing"
    session_id: str | None = None
    """The long session (``sessions="shared"``); the schedule id when ``None``."""
    double_texting: DoubleTexting | None = None
    """What a firing does when the long session is busy; ``None``: the app's policy."""
    config: RunConfig = Field(default_factory=RunConfig)
    """The invocations' limits and switches."""
    pause_on_failure: bool = False
    """Pause the schedule when one of its invocations fails."""
    paused: bool = False
    note: str | None = None
    """Why it was created or paused, shown with it."""

    @model_validator(mode="after")
    def _valid(self) -> Self:
        problem = _problem(self)
        if problem is not None:
            raise InvalidScheduleError(f"invalid schedule {self.schedule_id!r}: {problem}")
        return self

    @property
    def shared_session(self) -> str:
        """The long session's id (``sessions="shared"``)."""
        return self.session_id or self.schedule_id

    def check_message(self, budgets: Budgets) -> None:
        """Refuse a message over ``budgets.message_bytes``.

        Raises:
            BudgetExceededError: It is.
        """
        check_budget(self.message, "the message", budgets.message_bytes, "message_bytes")


def _problem(schedule: AgentSchedule) -> str | None:
    """The first thing wrong with ``schedule``, or ``None``."""
    sid = schedule.schedule_id
    if len(sid) > MAX_SCHEDULE_ID_CHARS or not _SCHEDULE_ID.fullmatch(sid):
        return (
            f"schedule_id must be 1 to {MAX_SCHEDULE_ID_CHARS} letters, digits, '.', '_' or "
            "'-', starting with a letter or digit"
        )
    for field in ("app_name", "user_id", "agent"):
        value: str = getattr(schedule, field)
        problem = id_problem(field, value) if value else f"{field} is missing"
        if problem is not None:
            return problem
    if schedule.session_id is not None:
        problem = id_problem("session_id", schedule.session_id)
        if problem is not None:
            return problem
    if not schedule.cron and schedule.every is None:
        return "give a cron expression or an interval (every)"
    if schedule.every is not None and schedule.every <= timedelta(0):
        return "every must be a positive interval"
    if schedule.overlap == "cancel_other" and schedule.sessions == "shared":
        return (
            "cancel_other would cancel whatever runs in the shared session (another caller's "
            "invocation too); use it with sessions='per_firing'"
        )
    if schedule.session_id is not None and schedule.sessions != "shared":
        return "session_id is the long session's: give it with sessions='shared'"
    return None


class RecentFiring(BaseModel):
    """One of a schedule's latest firings."""

    scheduled_at: datetime
    started_at: datetime
    workflow_id: str
    """The firing's run (``adk-schedule/<id>-<time>``), which names its invocation."""


class ScheduleView(BaseModel):
    """A schedule as it stands: its description, its state and its latest firings."""

    schedule: AgentSchedule
    paused: bool
    note: str | None = None
    next_runs: list[datetime] = Field(default_factory=list)
    recent: list[RecentFiring] = Field(default_factory=list)
    running: list[str] = Field(default_factory=list)
    """The workflow ids of firings still running (each waits for its invocation)."""
    fired: int = 0
    skipped_for_overlap: int = 0
    missed_catchup: int = 0
