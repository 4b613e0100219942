"""The JSON bodies of the gateway's API, requests and replies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..answers import AnswerDelivery
from ..double_texting import DoubleTexting
from ..flow.messages import ConfirmInput
from ..keys.forgetting import MAX_REASON_CHARS
from ..queues import QueueWait
from ..schedules import Overlap, ScheduleView
from ..workflow._render import GraphView

__all__ = [
    "AnswerOutcome",
    "BackfillBody",
    "CancelOutcome",
    "ConfirmBody",
    "ForgetBody",
    "ForkBody",
    "NoteBody",
    "PendingView",
    "ResumeBody",
    "RewindBody",
    "RunCreated",
    "RunLinks",
    "RunList",
    "RunSummary",
    "RunView",
    "ScheduleDone",
    "ScheduleList",
    "ScheduledRun",
    "ScheduledRuns",
    "StartRunBody",
    "TriggerBody",
    "WithdrawBody",
]


class _Body(BaseModel):
    # A misspelt field would otherwise be dropped silently and its default used.
    model_config = ConfigDict(extra="forbid")


class StartRunBody(_Body):
    """Start an invocation of ``agent`` with ``message`` in a session of the path's app."""

    agent: str
    user_id: str
    session_id: str | None = None
    """A new ``s-…`` id when omitted."""
    message: str
    pin_agent: bool = False
    """Run exactly ``agent``, even at a root whose conversation a sub-agent holds."""
    double_texting: DoubleTexting | None = None
    """When the session is busy: ``reject``, ``enqueue``, ``interrupt`` or ``rollback``
    (``None``: the app's policy)."""


class WithdrawBody(_Body):
    """Take a queued message out of the session's queue before it runs."""

    invocation_id: str


class ConfirmBody(ConfirmInput, _Body):
    """Approve (``confirmed: true``) or reject one confirmation request; ``call_digest``,
    when given, makes the answer apply only to the call with this digest."""


class ForgetBody(_Body):
    """Forget the session (or every session of the user): recorded with the token and
    ``reason`` in the forget log."""

    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)
    dry_run: bool = False
    """List what would go; change nothing."""
    all: bool = False
    """Confirms forgetting every session of a user (required on the user's resource)."""


class ResumeBody(_Body):
    """Answer one input request; ``null`` is a valid answer."""

    interrupt_id: str
    input: Any = Field(...)


class RewindBody(_Body):
    """Rewind the session to before ``before_invocation_id`` (:mod:`adk_temporal.rewind`)."""

    before_invocation_id: str
    event_id: str | None = None
    """The rewind event's id, a new one when omitted; the same id retries a rewind."""


class ForkBody(_Body):
    """Copy the session as of ``invocation_id`` into a new session of the same user."""

    invocation_id: str | None = None
    """The last invocation copied; every event when omitted."""
    new_session_id: str | None = None
    """A new ``s-…`` id when omitted; the same id retries a fork."""


class RunLinks(BaseModel):
    """Where to go next for a run."""

    self: str
    pending: str
    events: str
    confirm: str
    resume: str
    cancel: str
    temporal_ui: str | None = None


class RunSummary(BaseModel):
    """One invocation as a list shows it."""

    workflow_id: str
    run_id: str
    app: str
    user_id: str
    session_id: str
    status: str
    agent: str
    start_time: str | None = None
    close_time: str | None = None
    waiting_for: list[dict[str, Any]] = Field(default_factory=list)
    unreadable: str | None = None
    """Why what the run published cannot be read (its payloads are encrypted with a key
    this gateway was not given); ``waiting_for`` is then empty."""
    links: RunLinks


class RunList(BaseModel):
    """Invocations, newest first, and the token of the next page (``None``: the last)."""

    runs: list[RunSummary]
    next_page_token: str | None = None


class RunCreated(BaseModel):
    """A started invocation, or a queued one (``status`` ``queued``: the session was busy)."""

    workflow_id: str
    run_id: str | None
    app: str
    user_id: str
    session_id: str
    status: str
    links: RunLinks
    invocation_id: str | None = None


class RunView(RunSummary):
    """One invocation in detail: what it waits for and the answers it refused."""

    temporal_status: str | None = None
    refused_answers: list[str] = Field(default_factory=list)
    unpolled_waits: list[QueueWait] = Field(default_factory=list)
    """Its steps that wait on a task queue no worker polls, with what to start."""
    graph: GraphView | None = None
    """For a graph workflow run: each node's status and the drawing (from the memo)."""
    queued: list[dict[str, Any]] = Field(default_factory=list)
    """Messages waiting for the session, in the order they run."""
    schedule_id: str | None = None
    """The schedule whose firing started the invocation, if one did."""


class PendingView(BaseModel):
    """A run's open requests.

    ``source`` is ``worker`` when a worker answered the ``adk_pending`` query (payloads and
    schemas whole), ``memo`` when Temporal served what the run published (no worker
    needed; payloads summarised by digest and size).
    """

    workflow_id: str
    source: Literal["worker", "memo"]
    requests: list[dict[str, Any]]


class WaitingRun(BaseModel):
    """A run waiting for an answer, as its memo published it (no worker needed)."""

    workflow_id: str
    user_id: str
    session_id: str
    requests: list[dict[str, Any]]
    links: RunLinks
    schedule_id: str | None = None
    """The schedule whose firing started the run, if one did."""


class WaitingList(BaseModel):
    """One page of the app's waiting runs, newest first, and the next page's token."""

    runs: list[WaitingRun]
    next_page_token: str | None = None


class AnswerOutcome(BaseModel):
    """What became of an answer.

    ``applied``: a worker checked and applied it (HTTP 200). ``accepted``: no worker took it
    in time, so Temporal keeps it as a signal that applies when a worker picks the run up
    (HTTP 202; a refusal is then listed in the run's ``refused_answers``). While it is held,
    another answer to the same request is refused (HTTP 409 ``answer_pending``).
    """

    workflow_id: str
    request_id: str
    outcome: AnswerDelivery


class CancelOutcome(BaseModel):
    """A cancellation asked of Temporal; the run closes when a worker picks it up."""

    workflow_id: str
    cancel_requested: bool


class ScheduleList(BaseModel):
    """The app's schedules, by id."""

    schedules: list[ScheduleView]


class ScheduleDone(BaseModel):
    """What was done to a schedule."""

    schedule_id: str
    done: str


class NoteBody(_Body):
    """Why a schedule is paused or unpaused; shown with it."""

    note: str | None = Field(default=None, max_length=1000)


class TriggerBody(_Body):
    """Fire once now, under ``overlap`` instead of the schedule's policy when given."""

    overlap: Overlap | None = None


class BackfillBody(TriggerBody):
    """Fire for each time the schedule was due from ``start_at`` to ``end_at``."""

    start_at: datetime
    end_at: datetime


class ScheduledRun(BaseModel):
    """An invocation a schedule started."""

    workflow_id: str
    run_id: str
    session_id: str
    status: str
    start_time: str | None


class ScheduledRuns(BaseModel):
    """One page of a schedule's invocations, newest first."""

    runs: list[ScheduledRun]
    next_page_token: str | None
