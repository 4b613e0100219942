"""Events compaction: when to summarise a session, and which events a summary may cover.

ADK's ``EventsCompactionConfig`` in shape: every ``compaction_interval`` invocations (the
summarizer re-reading the last ``overlap_size`` invocations already summarised), and/or when
the model's last input passed ``token_threshold`` tokens (keeping the last
``event_retention_size`` events out of it). A new compaction always covers the session from
its start, so its summary takes in the previous one and the model's view holds one summary
plus what came after it.

What a compaction never covers: an invocation holding a call that is still open — an
unanswered confirmation or input request, a long-running call without its final response,
a call without any response — nor anything after it. The re-entered tool then still finds
its call, and ADK-Go's rearrangement of a late response still finds the call it answers.

A compaction is an optimisation, so a summarizer that fails (raises, times out, answers
text that is not UTF-8 or over the reply budget) never fails the turn: the step stores a
note of the failure instead (an event without content whose ``error_code`` is
:data:`COMPACTION_FAILED`), and :func:`compaction_backoff` spaces the next tries out: after
``k`` failures in a row, ``2**(k-1)`` invocations (at most :data:`MAX_BACKOFF_INVOCATIONS`)
begin before the next one is tried.

Every compaction carries a receipt (:class:`~adk_temporal.events.CompactionReceipt`): the
range it folds, a SHA-256 of those events as stored, the tokens before and after, and the
open calls it kept out; :func:`check_receipt` recomputes the digest from the store.

Everything here is pure: it reads events and decides, and never touches a store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .events import (
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    CompactionReceipt,
    Event,
    KeptRequest,
)
from .history import compaction_span, with_compactions, without_rewound

__all__ = [
    "COMPACTION_FAILED",
    "DEFAULT_COMPACTION_PROMPT",
    "MAX_BACKOFF_INVOCATIONS",
    "CompactionPlan",
    "EventsCompactionConfig",
    "ReceiptCheck",
    "check_receipt",
    "compaction_backoff",
    "folded_digest",
    "open_boundary",
    "plan_compaction",
    "receipt_of",
]

COMPACTION_FAILED = "CompactionFailed"
"""The ``error_code`` of the note a failed compaction leaves in the session."""

MAX_BACKOFF_INVOCATIONS = 64
"""The most invocations that begin between two tries of a compaction that keeps failing."""

DEFAULT_COMPACTION_PROMPT = (
    "Below is the conversation so far between a user and an AI agent, including the tools "
    "the agent called and what they returned. Write a concise summary of it for the agent "
    "to continue from: keep the facts learned, the decisions taken, the values the user "
    "gave, and every question or task still open. Leave out greetings and repetition."
)
"""The summarizer's instruction; the conversation follows it as text."""

_REQUEST_NAMES = frozenset({REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME})


class EventsCompactionConfig(BaseModel):
    """When a session is compacted, and by which model (ADK's ``EventsCompactionConfig``).

    At least one of ``compaction_interval`` and ``token_threshold`` must be set.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    compaction_interval: int | None = Field(default=None, ge=1)
    """Compact once this many invocations ended since the last compaction."""
    overlap_size: int = Field(default=0, ge=0)
    """Invocations of the previous window the summarizer reads again, raw."""
    token_threshold: int | None = Field(default=None, ge=1)
    """Compact once the model's last input reached this many prompt tokens."""
    event_retention_size: int = Field(default=0, ge=0)
    """With ``token_threshold``: the latest events kept out of the summary."""
    summarizer_model: str | None = None
    """Model name (resolved by the worker's registry); ``None``: the agent's model."""
    prompt: str = DEFAULT_COMPACTION_PROMPT

    @model_validator(mode="after")
    def _has_trigger(self) -> EventsCompactionConfig:
        if self.compaction_interval is None and self.token_threshold is None:
            raise ValueError(
                "events compaction needs compaction_interval or token_threshold (or both)"
            )
        return self


@dataclass(frozen=True)
class CompactionPlan:
    """The range a new compaction covers and the events its summarizer reads."""

    covered_events: int

    start_event_id: str
    end_event_id: str
    start_timestamp: float
    end_timestamp: float
    inputs: list[Event]
    """The model's view of the range to summarise: the previous summary, then raw events."""
    digest: str = ""
    """:func:`folded_digest` of the covered events."""
    kept_open: list[KeptRequest] = field(default_factory=list)
    """The calls still open, kept out of the range."""


def _invocations(events: Sequence[Event]) -> list[tuple[str, int, int]]:
    """(invocation id, first position, last position) of each invocation, in order."""
    spans: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if event.actions.compaction is None and event.invocation_id:
            spans.setdefault(event.invocation_id, [index, index])[1] = index
    return [(inv, first, last) for inv, (first, last) in spans.items()]


def _open_calls(events: Sequence[Event]) -> set[str]:
    responses: dict[str, int] = {}
    for event in events:
        for response in event.function_responses():
            if response.id:
                responses[response.id] = responses.get(response.id, 0) + 1
    long_running = {i for event in events for i in event.long_running_tool_ids}
    opened: set[str] = set()
    for event in events:
        for call in event.function_calls():
            if not call.id:
                continue
            # A long-running call's first response is its intermediate result: it is open
            # until a second, final one arrives. A runtime request's one answer closes it.
            needed = 2 if call.id in long_running and call.name not in _REQUEST_NAMES else 1
            if responses.get(call.id, 0) < needed:
                opened.add(call.id)
    return opened


def open_boundary(events: Sequence[Event]) -> int:
    """The first position a compaction may not cover: where the earliest invocation holding
    an open call starts (``len(events)`` when nothing is open)."""
    opened = _open_calls(events)
    if not opened:
        return len(events)
    for invocation, first, last in _invocations(events):
        for event in events[first : last + 1]:
            if event.invocation_id == invocation and any(
                c.id in opened for c in event.function_calls()
            ):
                return first
    return len(events)


def _last_compacted(events: Sequence[Event]) -> int:
    """The last position the latest compaction covers (-1 when there is none)."""
    for at in range(len(events) - 1, -1, -1):
        span = compaction_span(events, at)
        if span is not None:
            return span[1]
    return -1


def _prompt_tokens(events: Sequence[Event]) -> int:
    for event in reversed(events):
        if event.actions.compaction is not None or event.error_code == COMPACTION_FAILED:
            continue  # the summarizer's own input, not the agent's
        if event.usage_metadata is not None and event.usage_metadata.prompt_token_count:
            return event.usage_metadata.prompt_token_count
    return 0


def _window_end(
    config: EventsCompactionConfig, events: Sequence[Event], done: int, limit: int
) -> tuple[int, int] | None:
    """(first raw position the summarizer reads, last position covered), or ``None``."""
    spans = [(first, last) for _, first, last in _invocations(events)]
    closed = [span for span in spans if span[1] < limit]
    fresh = [span for span in closed if span[1] > done]
    if config.token_threshold is not None and _prompt_tokens(events) >= config.token_threshold:
        keep_from = min(limit, len(events) - config.event_retention_size)
        within = [span for span in fresh if span[1] < keep_from]
        if within:
            return (done + 1, within[-1][1])
    interval = config.compaction_interval
    # An invocation still open counts towards the interval, but is not covered.
    due = sum(1 for span in spans if span[1] > done)
    if interval is not None and due >= interval and fresh:
        start = max(0, len(closed) - len(fresh) - config.overlap_size)
        return (closed[start][0], fresh[-1][1])
    return None


def compaction_backoff(events: Sequence[Event]) -> bool:
    """Whether the failures noted since the last compaction say to wait: after ``k`` in a
    row, until ``2**(k-1)`` invocations (at most :data:`MAX_BACKOFF_INVOCATIONS`) began
    after the last one."""
    live = without_rewound(events)
    failures = 0
    last = -1
    for at, event in enumerate(live):
        if event.actions.compaction is not None:
            failures = 0
        elif event.error_code == COMPACTION_FAILED:
            failures, last = failures + 1, at
    if not failures:
        return False
    noted = live[last].invocation_id
    begun = {e.invocation_id for e in live[last + 1 :] if e.invocation_id not in ("", noted)}
    return len(begun) < min(MAX_BACKOFF_INVOCATIONS, 1 << (failures - 1))


def plan_compaction(
    config: EventsCompactionConfig, events: Sequence[Event]
) -> CompactionPlan | None:
    """The compaction ``config`` asks for after ``events`` (stored, oldest first), or ``None``.

    Rewound turns are left out first. The range always starts at the session's first event
    and ends with an invocation that ended, before any invocation holding an open call.
    """
    live = without_rewound(events)
    done = _last_compacted(live)
    window = _window_end(config, live, done, open_boundary(live))
    if window is None:
        return None
    raw_from, end = window
    raw = [e for e in live[: end + 1] if e.actions.compaction is None]
    if not raw:
        return None
    return CompactionPlan(
        covered_events=len(raw),
        start_event_id=raw[0].id,
        end_event_id=live[end].id,
        start_timestamp=raw[0].timestamp,
        end_timestamp=live[end].timestamp,
        inputs=_summaries_up_to(live, end)
        + [e for e in live[raw_from : end + 1] if e.actions.compaction is None],
        digest=folded_digest(raw),
        kept_open=_kept_open(live),
    )


def _summaries_up_to(events: Sequence[Event], end: int) -> list[Event]:
    """The summaries in the model's view of compactions covering no further than ``end``."""
    ids: set[str] = set()
    for at in range(len(events)):
        span = compaction_span(events, at)
        if span is not None and span[1] <= end:
            ids.add(events[at].id)
    return [e for e in with_compactions(events) if e.id in ids and e.actions.compaction is None]


def _canonical(event: Event) -> bytes:
    """One event as the digest reads it: its JSON without defaults, keys sorted, so the
    same stored event gives the same bytes on every backend and after any round trip."""
    data = event.model_dump(mode="json", exclude_defaults=True)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def folded_digest(events: Sequence[Event]) -> str:
    """``sha256:`` and the hex SHA-256 of ``events`` in canonical JSON, one per line."""
    digest = hashlib.sha256()
    for event in events:
        digest.update(_canonical(event) + b"\n")
    return "sha256:" + digest.hexdigest()


def _kind(
    call: types.FunctionCall, long_running: set[str]
) -> tuple[Literal["confirmation", "input", "long_running", "call"], str]:
    """(kind, tool) of an open call, a runtime request naming the call it asks about."""
    original = (call.args or {}).get("originalFunctionCall")
    asked = original.get("name", "") if isinstance(original, dict) else ""
    if call.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
        return "confirmation", asked
    if call.name == REQUEST_INPUT_FUNCTION_NAME:
        return "input", asked
    return ("long_running" if call.id in long_running else "call"), call.name or ""


def _kept_open(events: Sequence[Event]) -> list[KeptRequest]:
    opened = _open_calls(events)
    long_running = {i for event in events for i in event.long_running_tool_ids}
    kept: list[KeptRequest] = []
    for event in events:
        for call in event.function_calls():
            if call.id in opened:
                kind, name = _kind(call, long_running)
                kept.append(KeptRequest(kind=kind, call_id=call.id, name=name, event_id=event.id))
    return kept


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


def receipt_of(
    plan: CompactionPlan,
    read: str,
    summary: str,
    usage: types.GenerateContentResponseUsageMetadata | None,
) -> CompactionReceipt:
    """The receipt of ``plan``'s compaction, whose summarizer read ``read`` and answered
    ``summary``, reporting ``usage`` (``None``: the tokens are estimated)."""
    before, after = _estimate(read), _estimate(summary)
    counted = usage is not None and bool(usage.prompt_token_count)
    if usage is not None and counted:
        before, after = usage.prompt_token_count or 0, usage.candidates_token_count or 0
    return CompactionReceipt(
        first_event_id=plan.start_event_id,
        last_event_id=plan.end_event_id,
        event_count=plan.covered_events,
        digest=plan.digest,
        tokens_before=before,
        tokens_after=after,
        tokens_counted_by="model" if counted else "estimate",
        kept_open=list(plan.kept_open),
    )


class ReceiptCheck(BaseModel):
    """A compaction's receipt, checked against the session's stored events."""

    event_id: str
    ok: bool
    receipt: CompactionReceipt | None
    """``None``: the compaction predates receipts (nothing to check)."""
    digest: str = ""
    """The digest recomputed from the store."""
    event_count: int = 0
    """How many stored events the range holds now."""
    problem: str = ""


def check_receipt(events: Sequence[Event], event_id: str) -> ReceiptCheck:
    """Recompute the digest of compaction ``event_id``'s folded events from ``events`` (the
    session's stored events, oldest first) and compare it with its receipt.

    The range is read as the compaction saw it: from the events stored before it, rewound
    turns and earlier summaries left out.

    Raises:
        LookupError: ``events`` hold no compaction ``event_id``.
    """
    at = next((i for i, e in enumerate(events) if e.id == event_id), None)
    compaction = events[at].actions.compaction if at is not None else None
    if at is None or compaction is None:
        raise LookupError(f"the session holds no compaction event {event_id!r}")
    receipt = compaction.receipt
    if receipt is None:
        return ReceiptCheck(event_id=event_id, ok=True, receipt=None, problem="no receipt")
    raw = [e for e in without_rewound(events[:at]) if e.actions.compaction is None]
    ids = [e.id for e in raw]
    if receipt.first_event_id not in ids or receipt.last_event_id not in ids:
        problem = "the range's first or last event is no longer stored"
        return ReceiptCheck(event_id=event_id, ok=False, receipt=receipt, problem=problem)
    folded = raw[ids.index(receipt.first_event_id) : ids.index(receipt.last_event_id) + 1]
    digest = folded_digest(folded)
    ok = digest == receipt.digest and len(folded) == receipt.event_count
    return ReceiptCheck(
        event_id=event_id,
        ok=ok,
        receipt=receipt,
        digest=digest,
        event_count=len(folded),
        problem="" if ok else "the stored events differ from what was folded",
    )
