"""The compaction step: summarise a session's older events into one compaction event.

Engine-neutral like the model step: Temporal runs it as the ``adk_compact`` activity, the
in-process runner calls it directly. It reads the session, asks
:func:`~adk_temporal.compaction.plan_compaction` what may be covered, calls the summarizer
model once, and appends the compaction event under the id the workflow chose — a retry
that finds that event stored returns at once, so a crash leaves no compaction or one.

A summarizer that fails — raises, takes most of the step's timeout, or answers text that is
not UTF-8 or is over the ``model_reply_bytes`` budget — fails no turn: the step appends a
note of the failure under the same id (:data:`~adk_temporal.compaction.COMPACTION_FAILED`),
counts it in the ``adk.compaction.failures`` metric, logs it, and reports it; later
compactions are tried with back-off (:func:`~adk_temporal.compaction.compaction_backoff`).

The summary passes the app's ``on_event`` callbacks as the content of its compaction event
before it is stored, as every other event does (a redaction callback sees it), and the
event carries the compaction's receipt (:func:`~adk_temporal.compaction.receipt_of`).
"""

from __future__ import annotations

import asyncio
import logging

from google.genai import types

from ..compaction import (
    COMPACTION_FAILED,
    CompactionPlan,
    compaction_backoff,
    plan_compaction,
    receipt_of,
)
from ..events import Event, EventActions, EventCompaction
from ..faults import fault_point
from ..flow.compacting import CompactionInput, CompactionResult
from ..history import USER_AUTHOR, transcript
from ..models import LlmRequest
from ..tracing import record_compaction_failure
from ..usage import TokenUsage
from .event_callbacks import run_event_callbacks
from .ref import SessionRef
from .services import StepServices
from .writes import append_to_session

__all__ = ["compact_events"]

log = logging.getLogger(__name__)

_SUMMARIZER_SHARE = 0.8
"""The part of the step's timeout the summarizer may take: the note must still be stored
before the engine gives up on the step (and retries it, summarizer and all)."""
_REASON_CHARS = 500


class _SummaryFailed(Exception):
    """The summarizer gave no summary that can be stored; ``kind`` names how (the metric's
    label), ``usage`` what it spent, if it answered."""

    def __init__(
        self,
        kind: str,
        reason: str,
        usage: types.GenerateContentResponseUsageMetadata | None = None,
    ) -> None:
        super().__init__(reason)
        self.kind = kind
        self.usage = usage


async def compact_events(
    services: StepServices, inp: CompactionInput, ref: SessionRef
) -> CompactionResult:
    """Store a compaction of the session if ``inp.config`` asks for one now and no recent
    failure says to wait; a failed summary is stored as a note, never raised.

    Raises:
        UnknownAppError: The step is of an app these services do not serve (retryable).
    """
    services.check_app(ref)
    loaded = await services.load_session(ref)
    events = loaded.session.events
    stored = loaded.stored.ids.get(inp.event_id)
    if stored is not None:
        # A retry after the append: the summary's tokens may not be counted yet.
        usage = await _count(services, ref, stored)
        if stored.error_code == COMPACTION_FAILED:
            return CompactionResult(event_id=stored.id, usage=usage, failed=stored.error_message)
        return CompactionResult(compacted=True, event_id=inp.event_id, usage=usage)
    plan = None if compaction_backoff(events) else plan_compaction(inp.config, events)
    if plan is None:
        return CompactionResult()
    try:
        summary, usage_metadata = await _summarise(services, inp, ref, plan)
    except _SummaryFailed as failure:
        return await _note_failure(services, inp, ref, failure)
    event = await _compaction_event(services, inp, ref, plan, summary, usage_metadata)
    await append_to_session(services, ref, [event])
    return CompactionResult(
        compacted=True,
        event_id=event.id,
        covered_events=plan.covered_events,
        usage=await _count(services, ref, event),
    )


def _event(
    inp: CompactionInput,
    ref: SessionRef,
    usage: types.GenerateContentResponseUsageMetadata | None,
) -> Event:
    """The step's event, under the id the workflow chose."""
    return Event(
        id=inp.event_id,
        invocation_id=ref.invocation_id,
        author=USER_AUTHOR,
        timestamp=inp.timestamp,
        usage_metadata=usage,
    )


async def _compaction_event(
    services: StepServices,
    inp: CompactionInput,
    ref: SessionRef,
    plan: CompactionPlan,
    summary: types.Content,
    usage: types.GenerateContentResponseUsageMetadata | None,
) -> Event:
    """The compaction event with its receipt, its summary as the app's callbacks left it."""
    text = "".join(p.text or "" for p in summary.parts or [])
    compaction = EventCompaction(
        start_timestamp=plan.start_timestamp,
        end_timestamp=plan.end_timestamp,
        compacted_content=summary,
        start_event_id=plan.start_event_id,
        end_event_id=plan.end_event_id,
        receipt=receipt_of(plan, transcript(plan.inputs), text, usage),
    )
    event = _event(inp, ref, usage)
    event.actions = EventActions(compaction=compaction)
    if not services.app.on_event:
        return event
    # The summary is shown as the event's content, where a callback written for messages
    # looks; what it leaves there is what is stored, and only as the compacted content.
    shown = event.model_copy(update={"content": summary})
    seen = await run_event_callbacks(services.app.on_event, shown)
    kept = seen.content or types.Content(role="model", parts=[])
    actions = seen.actions.model_copy(deep=True)
    actions.compaction = compaction.model_copy(update={"compacted_content": kept})
    return seen.model_copy(update={"content": None, "actions": actions})


async def _note_failure(
    services: StepServices, inp: CompactionInput, ref: SessionRef, failure: _SummaryFailed
) -> CompactionResult:
    """Store the note of a failed summary (no content: the model never sees it)."""
    reason = str(failure)[:_REASON_CHARS]
    note = _event(inp, ref, failure.usage)
    note.error_code, note.error_message = COMPACTION_FAILED, f"compaction failed: {reason}"
    await append_to_session(services, ref, [note])
    record_compaction_failure(failure.kind)
    log.warning("compaction of %s failed (%s): %s", ref.key, failure.kind, reason)
    usage = await _count(services, ref, note)
    return CompactionResult(event_id=note.id, usage=usage, failed=note.error_message)


async def _count(services: StepServices, ref: SessionRef, event: Event) -> TokenUsage:
    """The summary's tokens, counted towards the cumulative budgets under the event's id
    (once, however often the step is retried)."""
    usage = TokenUsage.of(event.usage_metadata)
    if services.app.token_budgets.bounded() and event.usage_metadata is not None:
        await services.sessions.record_tokens(ref.key, event.id, usage.total_tokens)
    return usage


async def _summarise(
    services: StepServices, inp: CompactionInput, ref: SessionRef, plan: CompactionPlan
) -> tuple[types.Content, types.GenerateContentResponseUsageMetadata | None]:
    """The summary of ``plan.inputs`` from the configured model (or the agent's).

    Raises:
        _SummaryFailed: The summarizer raised or ran out of time, or its text cannot be
            stored.
    """
    timeout = inp.timeout_seconds * _SUMMARIZER_SHARE if inp.timeout_seconds else None
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            name = inp.config.summarizer_model or services.agents.model_of(ref.agent_name)
            text = f"{inp.config.prompt}\n\n{transcript(plan.inputs)}"
            request = LlmRequest(
                model=name, contents=[types.Content(role="user", parts=[types.Part(text=text)])]
            )
            fault_point("compaction.during_summary")
            response = await services.models.resolve(name).generate(request)
    except Exception as err:  # any failure of the summarizer's: it is only an optimisation
        if isinstance(err, TimeoutError) and deadline.expired():
            late = f"the summarizer took more than {timeout:g} s"
            raise _SummaryFailed("timeout", late) from None
        raised = f"the summarizer raised {type(err).__name__}: {err}"
        raise _SummaryFailed("raised", raised) from err
    summary = response.text()
    _check_summary(summary, inp, response.usage)
    return types.Content(role="model", parts=[types.Part(text=summary)]), response.usage


def _check_summary(
    summary: str,
    inp: CompactionInput,
    usage: types.GenerateContentResponseUsageMetadata | None,
) -> None:
    """Refuse a summary the store cannot hold, or one over the reply budget (stored, it
    would reach the model on every later turn).

    Raises:
        _SummaryFailed: The text is not UTF-8 (a lone surrogate) or is over
            ``model_reply_bytes``.
    """
    try:
        size = len(summary.encode())
    except UnicodeEncodeError as err:
        raise _SummaryFailed(
            "unencodable", f"the summary is not valid UTF-8 text ({err.reason})", usage
        ) from None
    limit = inp.budgets.model_reply_bytes
    if size > limit:
        raise _SummaryFailed(
            "oversized",
            f"the summary is {size} bytes, over the model_reply_bytes budget of {limit}",
            usage,
        )
