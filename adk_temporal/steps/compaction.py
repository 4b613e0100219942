"""The compaction step: summarise a session's older events into one compaction event.

Engine-neutral like the model step: Temporal runs it as the ``adk_compact`` activity, the
in-process runner calls it directly. It reads the session, asks
:func:`~adk_temporal.compaction.plan_compaction` what may be covered, calls the summarizer
model once, and appends the compaction event under the id the workflow chose — a retry
that finds that event stored returns at once, so a crash leaves no compaction or one.
"""

from __future__ import annotations

from google.genai import types

from ..compaction import CompactionPlan, plan_compaction
from ..events import Event, EventActions, EventCompaction
from ..faults import fault_point
from ..flow.compacting import CompactionInput, CompactionResult
from ..history import USER_AUTHOR, transcript
from ..models import LlmRequest
from ..usage import TokenUsage
from .ref import SessionRef
from .services import StepServices
from .writes import append_to_session

__all__ = ["compact_events"]


async def compact_events(
    services: StepServices, inp: CompactionInput, ref: SessionRef
) -> CompactionResult:
    """Store a compaction of the session if ``inp.config`` asks for one now.

    Raises:
        UnknownAgentError: No summarizer model is configured and the invocation's agent
            is not an LLM agent served here (no model to fall back to).
    """
    services.check_app(ref)
    loaded = await services.load_session(ref)
    events = loaded.session.events
    stored = loaded.stored.ids.get(inp.event_id)
    if stored is not None:
        # A retry after the append: the summary's tokens may not be counted yet.
        usage = await _count(services, ref, stored)
        return CompactionResult(compacted=True, event_id=inp.event_id, usage=usage)
    plan = plan_compaction(inp.config, events)
    if plan is None:
        return CompactionResult()
    summary, usage_metadata = await _summarise(services, inp, ref, plan)
    event = Event(
        id=inp.event_id,
        invocation_id=ref.invocation_id,
        author=USER_AUTHOR,
        timestamp=inp.timestamp,
        usage_metadata=usage_metadata,
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=plan.start_timestamp,
                end_timestamp=plan.end_timestamp,
                compacted_content=summary,
                start_event_id=plan.start_event_id,
                end_event_id=plan.end_event_id,
            )
        ),
    )
    await append_to_session(services, ref, [event])
    return CompactionResult(
        compacted=True,
        event_id=event.id,
        covered_events=plan.covered_events,
        usage=await _count(services, ref, event),
    )


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
    """The summary of ``plan.inputs`` from the configured model (or the agent's)."""
    name = inp.config.summarizer_model or services.agents.model_of(ref.agent_name)
    text = f"{inp.config.prompt}\n\n{transcript(plan.inputs)}"
    request = LlmRequest(
        model=name, contents=[types.Content(role="user", parts=[types.Part(text=text)])]
    )
    fault_point("compaction.during_summary")
    response = await services.models.resolve(name).generate(request)
    summary = types.Content(role="model", parts=[types.Part(text=response.text())])
    return summary, response.usage
