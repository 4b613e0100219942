"""The register of behaviour changes gated by ``workflow.patched``, and when each old arm
may go.

Users have invocations running and waiting for days, so a change to the commands a run
issues keeps the old ones for runs recorded before it: the flow asks
:meth:`~adk_temporal.flow.executor.Executor.patched` (the workflow ``workflow.patched``, or
its baseline) with a gate's id. Every gate is declared here, once, with what it changes, the
day it landed and the one-line condition under which its old arm (and the histories under
``tests/replay/histories`` that exercise it) may be deleted; ``tests/unit/test_gates.py``
fails on a gate asked for and not registered, or registered without a condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

__all__ = [
    "ADK_ESCALATION",
    "APPROVAL_ESCALATION",
    "APP_QUEUES",
    "CARRY_POSITIONS",
    "COMPACTION",
    "DOUBLE_TEXTING",
    "FOREIGN_CONFIRMATIONS",
    "GATES",
    "GRAPH_HAND_OVER",
    "GRAPH_STATUS_MEMO",
    "HAND_BACK",
    "KEEP_CANCELLED_OUTCOMES",
    "LOCAL_STEPS",
    "NOTIFY",
    "PARALLEL_FAILURE",
    "PUBLISH_AFTER_RESUMING",
    "PUBLISH_REQUESTS",
    "RECORD_CANCELLATION",
    "SHORT_NOTIFY_IDS",
    "TOOL_FAILURES_REACH_THE_MODEL",
    "Gate",
    "open_before",
]


@dataclass(frozen=True)
class Gate:
    """One behaviour change gated by ``workflow.patched``.

    Args:
        id: The patch id runs record (never changed once released).
        change: What a run taking the new arm does differently.
        since: The day the change landed; runs started before it took the old arm.
        old_arm_may_go_when: The one-line condition for deleting the old arm.
    """

    id: str
    change: str
    since: date
    old_arm_may_go_when: str


GATES: dict[str, Gate] = {}
"""Every gate, by id."""


def open_before(day: date) -> str:
    """The usual condition: no run started before ``day`` is still open (running or waiting)."""
    stamp = day.isoformat()
    return (
        f"no invocation started before {stamp} is still open (`temporal workflow list --query "
        f"\"ExecutionStatus = 'Running' AND StartTime < '{stamp}T00:00:00Z'\"` lists none) "
        f"and the replay histories recorded before {stamp} are retired with it"
    )


def _gate(gate_id: str, change: str, since: date, old_arm_may_go_when: str = "") -> str:
    """Register a gate (condition: :func:`open_before` ``since`` unless given); its id."""
    if gate_id in GATES:
        raise ValueError(f"gate {gate_id!r} is registered twice")
    GATES[gate_id] = Gate(gate_id, change, since, old_arm_may_go_when or open_before(since))
    return gate_id


# Baseline 1 (released 2026-12-02 17:00 UTC) takes every gate of that day and before from
# the start, so runs of baseline 1 and later never take their old arms: only runs started
# before it (with no baseline) can, hence the conditions' date, the day after.
_BASELINE_1 = date(2026, 12, 3)

TOOL_FAILURES_REACH_THE_MODEL = _gate(
    "tool-failures-reach-the-model",
    "a tool step that failed on every attempt gives the model an error",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
RECORD_CANCELLATION = _gate(
    "record-cancellation",
    "a cancelled invocation closes its requests and stores an event",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
CARRY_POSITIONS = _gate(
    "carry-sequence-positions",
    "a run inside sequential and loop agents may hand over too",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
FOREIGN_CONFIRMATIONS = _gate(
    "foreign-confirmations-do-not-pause",
    "confirmations for calls a step did not make do not pause it",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
ADK_ESCALATION = _gate(
    "adk-escalation",
    "an escalating agent goes on (its summarising model call); only the loops around it "
    "stop after it, sequences run on",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
PARALLEL_FAILURE = _gate(
    "parallel-failure-stops-siblings",
    "a parallel branch that fails for good cancels its siblings at once",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
KEEP_CANCELLED_OUTCOMES = _gate(
    "cancellation-keeps-tool-outcomes",
    "a cancellation waits for the running tool calls and stores what they and the step had "
    "produced before its cancellation event",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
COMPACTION = _gate(
    "events-compaction",
    "the flow schedules compaction steps",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
PUBLISH_REQUESTS = _gate(
    "publish-requests-in-memo",
    "open requests and refused answers are published in the memo",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
APP_QUEUES = _gate(
    "app-task-queues",
    "a named app's runs move their steps to the app's own task queue",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
NOTIFY = _gate(
    "notify-webhooks",
    "runs of an app with notifications start adk_notify children",
    date(2026, 12, 1),
    open_before(_BASELINE_1),
)
SHORT_NOTIFY_IDS = _gate(
    "notify-short-ids",
    "adk_notify children get short ids (adk-notify-<hash>)",
    date(2026, 12, 2),
    open_before(_BASELINE_1),
)
PUBLISH_AFTER_RESUMING = _gate(
    "publish-after-resuming",
    "the status and memo an accepted answer changes are published in the next workflow task "
    "(or after a second), not in the task that resumes the run",
    date(2026, 12, 2),
    # Baseline 2 (2026-12-02 22:51 UTC) has it from the start; baseline-1 runs ask.
    open_before(date(2026, 12, 3)),
)
HAND_BACK = _gate(
    "hand-back-other-apps-steps",
    "a step that reached a worker of another app on the queue it must run on is scheduled "
    "there again after a pause, and a tool call, append or compaction such a worker refused "
    "moves where it says, where the run failed before",
    date(2026, 12, 7),
    # Baseline 3 has it from the start; runs of baselines 1 and 2 ask, and record a marker
    # only when a step is handed back.
    open_before(date(2026, 12, 8)),
)
GRAPH_HAND_OVER = _gate(
    "graph-hand-over",
    "a graph workflow continues as new between nodes when Temporal suggests it, carrying its "
    "node states, pending joins and open pauses",
    date(2026, 12, 7),
    # Baseline 3 has it from the start; graph runs of baseline 2 ask.
    open_before(date(2026, 12, 8)),
)
GRAPH_STATUS_MEMO = _gate(
    "graph-status-memo",
    "a graph run publishes its graph and each node's status in the memo",
    date(2026, 12, 7),
    open_before(date(2026, 12, 8)),
)
DOUBLE_TEXTING = _gate(
    "double-texting",
    "a run that holds messages sent while it was busy stops its invocation for an interrupt "
    "(at the next step) or a rollback (at once, then rewinds the session), and continues as new "
    "into the next message when its invocation ends",
    date(2026, 12, 7),
    # Baseline 3 has it from the start; runs of baselines 0 to 2 ask when a message came.
    open_before(date(2026, 12, 8)),
)
APPROVAL_ESCALATION = _gate(
    "approval-escalation",
    "a request whose approval policy reminds or reassigns waits on a timer until the next of "
    "them is due, takes it (a trail entry, a notification) and waits again",
    date(2026, 12, 7),
    open_before(date(2026, 12, 8)),
)
LOCAL_STEPS = _gate(
    "local-steps",
    "short model steps, and the calls of tools the app declared for it, run as local "
    "activities on the worker that runs the workflow task, when the serving app's tree and "
    "the planned calls say so (App.local_steps)",
    date(2026, 12, 7),
    # Baseline 4 has it from the start; runs of earlier baselines ask only when a step
    # they record says it may run locally.
    open_before(date(2026, 12, 8)),
)
