"""Fault-injection points for crash tests, armed only through the environment.

A test starts a worker process with ``ADK_TEMPORAL_FAULT=<point>``; when execution reaches
that point the process kills itself with SIGKILL, exactly as a machine dying there would.
``<point>#<n>`` kills it the n-th time it gets there (a later step's append, say). Unarmed
(the variable unset, as in every production worker) a point does nothing.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter

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

_reached: Counter[str] = Counter()


def fault_point(name: str) -> None:
    """SIGKILL this process if ``name`` is the armed fault point (the n-th time it is reached,
    armed as ``<point>#<n>``).

    Raises:
        ValueError: ``name`` is not one of :data:`FAULT_POINTS` (a typo would silently
            never fire).
    """
    if name not in FAULT_POINTS:
        raise ValueError(f"unknown fault point {name!r}; known: {', '.join(sorted(FAULT_POINTS))}")
    armed, _, nth = os.environ.get(FAULT_ENV, "").partition("#")
    if armed != name:
        return
    _reached[name] += 1
    if _reached[name] == int(nth or 1):
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
