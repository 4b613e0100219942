"""The bare baseline of an approval: a plain workflow that waits for a signal, then starts
one activity, which stamps the wall clock when it starts.

Compared with an ADK run's approval (answer arrives → the approved tool re-enters), it is
what Temporal alone costs from a signal to an activity starting. Imports nothing but
temporalio and the standard library, since the workflow sandbox re-imports it per run.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

__all__ = ["APPROVE_SIGNAL", "BareApprovalInput", "BareApprovalWorkflow", "bare_approved"]

APPROVE_SIGNAL = "approve"
"""The signal that lets the bare workflow go on."""


@dataclass
class BareApprovalInput:
    """Where the activity records its start, and under which key."""

    key: str
    record_path: str


@activity.defn(name="bare_approved")
async def bare_approved(start: BareApprovalInput) -> None:
    """Record the wall-clock time this activity started, one JSON line per start."""
    with open(start.record_path, "a") as record:
        record.write(json.dumps({"key": start.key, "t": time.time()}) + "\n")


@workflow.defn(name="BareApprovalWorkflow")
class BareApprovalWorkflow:
    """Wait for :data:`APPROVE_SIGNAL`, then run :func:`bare_approved` once."""

    def __init__(self) -> None:
        self._approved = False

    @workflow.signal(name=APPROVE_SIGNAL)
    def approve(self) -> None:
        """Let the run go on."""
        self._approved = True

    @workflow.run
    async def run(self, start: BareApprovalInput) -> None:
        """Wait for the approval, then start the activity."""
        await workflow.wait_condition(lambda: self._approved)
        await workflow.execute_activity(
            bare_approved, start, start_to_close_timeout=timedelta(seconds=60)
        )
