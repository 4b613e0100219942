"""The audit trail of a session's answers: who decided what, through which channel, when.

Read from the session's events, where the runtime records each answer in the reply event
of its request (``adk_request_confirmation`` / ``adk_request_input`` function responses):
the decision, the call digest, and — for answers taken since answers were stamped — who
answered, how, and the run's time of taking it. Nothing here trusts a caller's clock or a
principal named in a request body: the channel that authenticated the answerer wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from .confirmation import EDITED_ARGS_KEY, EDITED_DIGEST_KEY
from .events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from .flow.requests import ANSWERED_KEY

__all__ = ["AuditEntry", "AuditList", "Decision", "audit_entries"]

Decision = Literal["approved", "rejected", "expired", "answered"]
"""What an answer decided; ``answered`` is an input request's value."""


class AuditEntry(BaseModel):
    """One answered request, as the audit listing shows it."""

    request_id: str
    kind: Literal["confirmation", "input"]
    tool: str
    """The tool whose call the request is about (``""`` when the request was not found)."""
    decision: Decision
    answered_by: str | None = None
    """Who answered, as their channel authenticated them; ``None``: not recorded."""
    channel: str | None = None
    """How the answer came (``gateway``, ``link``, ``cli``, ``signal``…)."""
    answered_at: float | None = None
    """When the run took the answer (POSIX seconds, the workflow's clock)."""
    call_digest: str = ""
    """The digest of the call the approver was shown."""
    edited_args: dict[str, Any] | None = None
    """The arguments the approver edited, which the call ran with (``None``: not edited)."""
    edited_call_digest: str = ""
    """The digest of the edited call, which the call was re-bound to."""
    invocation_id: str = ""
    event_id: str = ""
    """The reply event that records the answer."""


class AuditList(BaseModel):
    """A session's answered requests, oldest first."""

    entries: list[AuditEntry]


def _tools(events: Iterable[Event]) -> dict[str, str]:
    """The tool each request id is about, from the request events."""
    tools: dict[str, str] = {}
    for event in events:
        for call in event.function_calls():
            if call.id and call.name in (
                REQUEST_CONFIRMATION_FUNCTION_NAME,
                REQUEST_INPUT_FUNCTION_NAME,
            ):
                original = (call.args or {}).get("originalFunctionCall")
                name = original.get("name") if isinstance(original, Mapping) else None
                tools[call.id] = name if isinstance(name, str) else ""
    return tools


def _decision(kind: str, response: Mapping[str, Any]) -> Decision:
    if response.get("expired") is True:
        return "expired"
    if kind == "input":
        return "answered"
    return "approved" if response.get("confirmed") is True else "rejected"


def _beside(event: Event, request_id: str | None) -> Any:
    """Who answered ``request_id``, where a graph's pause keeps it: beside the response, in
    the event's custom metadata (its response is the payload as sent)."""
    answered = (event.custom_metadata or {}).get(ANSWERED_KEY)
    return answered.get(request_id or "") if isinstance(answered, Mapping) else None


def audit_entries(events: Iterable[Event]) -> list[AuditEntry]:
    """Every answered request of ``events`` (a session's), in the order answered."""
    listed = list(events)
    tools = _tools(listed)
    entries: list[AuditEntry] = []
    for event in listed:
        for reply in event.function_responses():
            if reply.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
                kind: Literal["confirmation", "input"] = "confirmation"
            elif reply.name == REQUEST_INPUT_FUNCTION_NAME:
                kind = "input"
            else:
                continue
            response = reply.response or {}
            record = response.get(ANSWERED_KEY, _beside(event, reply.id))
            who = record if isinstance(record, Mapping) else {}
            digest = response.get("callDigest")
            edited = response.get(EDITED_ARGS_KEY)
            edited_digest = response.get(EDITED_DIGEST_KEY)
            entries.append(
                AuditEntry(
                    request_id=reply.id or "",
                    kind=kind,
                    tool=tools.get(reply.id or "", ""),
                    decision=_decision(kind, response),
                    answered_by=who.get("by"),
                    channel=who.get("channel"),
                    answered_at=who.get("at"),
                    call_digest=digest if isinstance(digest, str) else "",
                    edited_args=dict(edited) if isinstance(edited, Mapping) else None,
                    edited_call_digest=edited_digest if isinstance(edited_digest, str) else "",
                    invocation_id=event.invocation_id,
                    event_id=event.id,
                )
            )
    return entries
