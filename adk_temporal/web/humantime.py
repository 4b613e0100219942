"""Times as people read them on a page: "waiting 3 h", "5 min ago"."""

from __future__ import annotations

from datetime import datetime

__all__ = ["ago", "duration", "waiting_for"]

_UNITS = ((86_400, "d"), (3_600, "h"), (60, "min"))


def duration(seconds: float) -> str:
    """``seconds`` in its largest whole unit: ``"45 s"``, ``"5 min"``, ``"3 h"``, ``"2 d"``."""
    whole = max(0, int(seconds))
    for size, unit in _UNITS:
        if whole >= size:
            return f"{whole // size} {unit}"
    return f"{whole} s"


def waiting_for(opened_at: float | None, now: float) -> str:
    """``"waiting 3 h"`` since ``opened_at`` (POSIX seconds); ``"waiting"`` when unknown
    (requests opened by runs recorded before the time was kept)."""
    return "waiting" if opened_at is None else f"waiting {duration(now - opened_at)}"


def ago(iso: str | None, now: float) -> str:
    """``"5 min ago"`` for an ISO 8601 time with its zone; ``""`` for none, the text
    itself for one that does not parse."""
    if not iso:
        return ""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return f"{duration(now - when.timestamp())} ago"
