"""Schedules: recurring agent jobs — a message run against an app's agent on a cron or an
interval, each firing an ordinary invocation, on Temporal's schedules.

An :class:`AgentSchedule` says what runs (app, user, agent, message, run options), when
(cron expressions and/or an interval, a time zone, jitter), where (a new session per firing,
named after the schedule and the scheduled time, or one long session), and what happens
when firings collide: Temporal's overlap policy among the schedule's own invocations
(``skip`` by default: never two at once), and the double-texting policy
(:mod:`adk_temporal.double_texting`) when the long session is busy with someone else's.
:class:`Schedules` creates, lists, describes, pauses (with a note), unpauses, triggers,
backfills and deletes them, and lists the invocations a schedule started (search attribute
``AdkSchedule``). A firing is the small workflow ``adk_schedule_fire``
(``workflows/fire.py``), which starts the invocation and waits for it; an approval a
scheduled run asks for waits like any other, and ``pending`` names its schedule.
"""

from __future__ import annotations

from .client import Schedules
from .spec import (
    MAX_SCHEDULE_ID_CHARS,
    OVERLAP_POLICIES,
    AgentSchedule,
    InvalidScheduleError,
    Overlap,
    RecentFiring,
    ScheduleExistsError,
    ScheduleNotFoundError,
    ScheduleView,
)

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
    "Schedules",
]
