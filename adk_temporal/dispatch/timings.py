"""``StepTimings``: how long a worker's recent steps took, by agent or tool."""

from __future__ import annotations

import statistics
from collections import deque
from typing import Literal

__all__ = ["StepKind", "StepTimings"]

StepKind = Literal["model", "tool"]
"""What was timed: an agent's model step, or a tool's call."""

_KEPT = 16
"""Durations kept per agent or tool: the median of the latest, so one slow call (a cold
connection) does not move a step off the worker, and a model that became slow does soon."""


class StepTimings:
    """Durations of the steps a worker ran, the latest :data:`_KEPT` per agent or tool.

    Kept by the worker's step services; read when a step tells the run which of its next
    steps may run locally (:class:`~adk_temporal.dispatch.LocalSteps`).
    """

    def __init__(self) -> None:
        self._seconds: dict[tuple[StepKind, str], deque[float]] = {}

    def record(self, kind: StepKind, name: str, seconds: float) -> None:
        """Note that a ``kind`` step of ``name`` took ``seconds``."""
        self._seconds.setdefault((kind, name), deque(maxlen=_KEPT)).append(seconds)

    def short(self, kind: StepKind, name: str, limit: float) -> bool:
        """Whether ``name``'s ``kind`` steps took under ``limit`` seconds (median of the
        latest); one never timed counts as short."""
        seconds = self._seconds.get((kind, name))
        return not seconds or statistics.median(seconds) < limit
