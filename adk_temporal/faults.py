"""Fault-injection points for crash tests, armed only through the environment.

A test starts a worker process with ``ADK_TEMPORAL_FAULT=<point>``; when execution reaches
that point the process kills itself with SIGKILL, exactly as a machine dying there would.
Unarmed (the variable unset, as in every production worker) a point does nothing.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["FAULT_ENV", "FAULT_POINTS", "fault_point"]

FAULT_ENV = "ADK_TEMPORAL_FAULT"
"""The environment variable that arms one fault point by name."""

FAULT_POINTS = frozenset(
    {
        "tool.before_side_effect",
        "tool.after_receipt",
        "tool.after_side_effect",
        "artifact.after_save",
        "artifact.before_commit",
        "session.after_append",
        "model.during_call",
        "compaction.during_summary",
        "grant.after_record",
    }
)
"""Every point the code base can be killed at."""


def fault_point(name: str) -> None:
    """SIGKILL this process if ``name`` is the armed fault point.

    Raises:
        ValueError: ``name`` is not one of :data:`FAULT_POINTS` (a typo would silently
            never fire).
    """
    if name not in FAULT_POINTS:
        raise ValueError(f"unknown fault point {name!r}; known: {', '.join(sorted(FAULT_POINTS))}")
    if os.environ.get(FAULT_ENV) == name:
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
