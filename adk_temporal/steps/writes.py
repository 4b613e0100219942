"""What a step writes to the session: its pending events, made whole and appended.

The flow hands a step the events that are new since the previous step; a tool step's
response among them is only a reference to what that step staged. Here the references are
read back, merged into the step's function-response event, and appended together with
the removal of what they were made from — one write, safe to repeat.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from ..errors import SessionNotFoundError, StagedResponseNotFoundError
from ..events import Event, NodeInfo
from ..flow.messages import MergedResponses, PendingEvent, StagedResponse
from ..merge import merge_function_response_events
from ..sessions import SessionService
from ..tracing import record_requests, span
from .event_callbacks import run_event_callbacks
from .ref import SessionRef
from .services import StepServices

__all__ = ["append_to_session", "stored_form"]


async def stored_form(
    sessions: SessionService,
    ref: SessionRef,
    pending: Sequence[PendingEvent],
    stored: Container[str],
) -> tuple[list[Event], list[str]]:
    """The pending events as they are stored, and the staged ids that made them.

    A merged response is built from what its tool steps staged (read in one call) and the
    responses the flow made itself. One already in ``stored`` (the session's event ids) is
    skipped: a retry after the append that took its staged parts finds them gone. An
    optional staged response (of a cancelled call) that is not there is left out, and a
    merge left with nothing is not stored.

    Raises:
        StagedResponseNotFoundError: A staged response is missing though its merged event
            was never stored.
    """
    wanted = [
        response.staged
        for item in pending
        if isinstance(item, MergedResponses) and item.id not in stored
        for response in item.responses
        if isinstance(response, StagedResponse)
    ]
    staged = await sessions.staged_events(ref.key, wanted) if wanted else {}
    events: list[Event] = []
    for item in pending:
        if isinstance(item, Event):
            events.append(item)
            continue
        if item.id in stored:
            continue
        parts: list[Event] = []
        for response in item.responses:
            if isinstance(response, Event):
                parts.append(response)
                continue
            found = staged.get(response.staged)
            if found is None and not response.optional:
                raise StagedResponseNotFoundError(
                    f"the staged response {response.staged!r} of event {item.id!r} is not in "
                    f"the session store of {ref.key}"
                )
            if found is not None:
                parts.append(found)
        if not parts:
            # Only calls cancelled before they produced anything.
            continue
        parts[0] = parts[0].model_copy(update={"id": item.id, "timestamp": item.timestamp})
        events.append(merge_function_response_events(parts))
    return events, wanted


async def append_to_session(
    services: StepServices,
    ref: SessionRef,
    events: list[Event],
    unstage: Sequence[str] = (),
) -> None:
    """Append ``events`` idempotently, creating the session on an invocation's first write.

    Each passes the app's ``on_event`` callbacks first (:mod:`.event_callbacks`: redaction).
    ``unstage`` names the staged events they were made from, removed in the same write.
    In a graph's LLM agent node (``ref.node_path``) every event without a node path gets
    the node's, as ADK's node runner stamps what an agent node yields.
    """
    if ref.node_path:
        info = NodeInfo(path=ref.node_path)
        events = [e if e.node_info else e.model_copy(update={"node_info": info}) for e in events]
    sessions = services.sessions
    if services.app.on_event:
        events = [await run_event_callbacks(services.app.on_event, e) for e in events]
    with span("adk.session.append", {"adk.events": len(events)}):
        try:
            stored = await sessions.append_events(ref.key, events, unstage=unstage)
        except SessionNotFoundError:
            await sessions.get_or_create(ref.key)
            stored = await sessions.append_events(ref.key, events, unstage=unstage)
    services.events_cache.appended(ref.key, stored)
    record_requests(events)
