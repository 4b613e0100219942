"""A schedule's description is checked where it is made, and the CLI reads durations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest

from adk_temporal.cli.schedules import Duration, Moment
from adk_temporal.schedules import AgentSchedule, InvalidScheduleError
from adk_temporal.workflows.fire import firing_session_id


def _schedule(**changes: Any) -> AgentSchedule:
    fields: dict[str, Any] = {
        "schedule_id": "nightly",
        "app_name": "app",
        "user_id": "u",
        "agent": "a",
        "message": "reconcile",
        "every": timedelta(hours=1),
    }
    return AgentSchedule(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"every": None}, "give a cron expression or an interval"),
        ({"every": timedelta(0)}, "positive"),
        ({"schedule_id": "a b"}, "schedule_id must be"),
        ({"schedule_id": "x" * 101}, "schedule_id must be"),
        ({"app_name": "a/b"}, "app_name"),
        ({"agent": ""}, "agent is missing"),
        ({"sessions": "shared", "overlap": "cancel_other"}, "cancel_other"),
        ({"session_id": "s-1"}, "sessions='shared'"),
    ],
)
def test_a_malformed_schedule_is_refused_naming_the_field(
    changes: dict[str, Any], problem: str
) -> None:
    """The schedule's own typed error (never pydantic's wrapper), naming what is wrong."""
    with pytest.raises(InvalidScheduleError, match=problem):
        _schedule(**changes)


def test_a_shared_session_is_the_schedule_id_unless_named() -> None:
    """One long session per schedule: its id, or the one given."""
    assert _schedule(sessions="shared").shared_session == "nightly"
    assert _schedule(sessions="shared", session_id="s-9").shared_session == "s-9"


def test_a_firing_session_is_named_after_the_schedule_and_the_time_due() -> None:
    """Deterministic, to the second, within the session id grammar."""
    due = datetime(2026, 12, 8, 6, 0, 5, tzinfo=UTC)
    assert firing_session_id("nightly", due) == "nightly-20261208T060005Z"


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("30s", 30), ("5m", 300), ("1h30m", 5400), ("2d", 172800)]
)
def test_durations_read_as_people_write_them(text: str, seconds: int) -> None:
    """Seconds, or parts with s, m, h, d."""
    assert Duration().convert(text, None, None) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "5x", "m5", "0", "1.5h", "-3s"])
def test_a_bad_duration_is_a_usage_error(text: str) -> None:
    """Anything else is refused by click, naming the value."""
    with pytest.raises(click.BadParameter):
        Duration().convert(text, None, None)


def test_a_backfill_time_needs_its_zone() -> None:
    """A naive time would be read in the machine's zone: refused."""
    assert Moment().convert("2026-12-01T06:00:00Z", None, None).tzinfo is not None
    with pytest.raises(click.BadParameter, match="no time zone"):
        Moment().convert("2026-12-01T06:00:00", None, None)
