"""The audit trail of a session's answers: who decided what, through which channel, when.

Read from the session's events, where the runtime records each answer in the reply event
of its request (``adk_request_confirmation`` / ``adk_request_input`` function responses):
the decision, the call digest, and — for answers taken since answers were stamped — who
answered, how, and the run's time of taking it. A request under an approval policy lists
every vote, and the claims, assignments, reminders and reassignments it went through; an
approval may carry a standing grant, and each call a grant let through cites it in its
response event. Answers stored as plain function responses (a long-running tool's, a graph
node's input) name who answered in the event's ``custom_metadata``. A grant's revocation
lives with the grant in the session store (:func:`revocation_entries`). Nothing here
trusts a caller's clock or a principal named in a request body: the channel that
authenticated the answerer wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from .approvals import GRANT_KEY, Grant, TrailEntry
from .confirmation import EDITED_ARGS_KEY, EDITED_DIGEST_KEY
from .events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from .flow.doubt_requests import DOUBT_REQUEST_PREFIX
from .flow.replies import GRANT_REPLY_KEY, TRAIL_KEY, VOTES_KEY
from .flow.requests import ANSWERED_KEY

__all__ = ["AuditEntry", "AuditList", "Decision", "audit_entries", "revocation_entries"]

Decision = Literal[
    "approved",
    "rejected",
    "expired",
    "answered",
    "claimed",
    "released",
    "assigned",
    "reminded",
    "reassigned",
    "granted",
    "revoked",
    "resolved",
]
"""What an entry records: a decision (``answered`` is an input request's value), a vote
(``approved``/``rejected`` with ``vote`` set), something that happened to a waiting request
(``claimed``, ``released``, ``assigned``, ``reminded``, ``reassigned``), a call a standing
grant let through unasked (``granted``), a grant's revocation (``revoked``), or an operator's
resolution of a call in doubt (``resolved``, with ``resolution``)."""

_KINDS: dict[str, Literal["confirmation", "input"]] = {
    REQUEST_CONFIRMATION_FUNCTION_NAME: "confirmation",
    REQUEST_INPUT_FUNCTION_NAME: "input",
}


class AuditEntry(BaseModel):
    """One entry of the audit listing."""

    request_id: str
    """The request (or, for ``granted``, the call; for ``revoked``, the grant's request)."""
    kind: Literal["confirmation", "input"]
    tool: str
    """The tool whose call the request is about (``""`` when the request was not found)."""
    decision: Decision
    answered_by: str | None = None
    """Who answered (or acted), as their channel authenticated them; ``None``: not recorded
    (or the runtime itself: a reminder, a reassignment)."""
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
    vote: bool = False
    """An approval or rejection counted by a policy (one of several, or the deciding one)."""
    assignee: str | None = None
    """The new assignee of an ``assigned`` or ``reassigned`` entry."""
    grant_id: str | None = None
    resolution: str | None = None
    """How an operator resolved a call in doubt: ``done``, ``retry``, ``fail`` or
    ``compensate``."""
    """The standing grant an approval gave, a ``granted`` call ran under, or was revoked."""
    invocation_id: str = ""
    event_id: str = ""
    """The event that records the entry."""


class AuditList(BaseModel):
    """A session's audit entries, oldest first."""

    entries: list[AuditEntry]


def _tools(events: Iterable[Event]) -> dict[str, str]:
    """The tool each request id is about, from the request events."""
    tools: dict[str, str] = {}
    called: dict[str, str] = {}
    for event in events:
        for call in event.function_calls():
            called[call.id or ""] = call.name or ""
            if call.id and call.name in _KINDS:
                args = call.args or {}
                original = args.get("originalFunctionCall")
                name = original.get("name") if isinstance(original, Mapping) else None
                # An input request names the call it is about by id.
                name = name if name is not None else called.get(str(args.get("functionCallId")))
                tools[call.id] = name if isinstance(name, str) else ""
    return tools


def _decision(kind: str, response: Mapping[str, Any]) -> Decision:
    if response.get("expired") is True:
        return "expired"
    if kind == "input":
        return "answered"
    return "approved" if response.get("confirmed") is True else "rejected"


def _resolution(request_id: str, response: Mapping[str, Any]) -> str | None:
    """How the reply to a request about a call in doubt resolved it; ``None`` for others."""
    if not request_id.startswith(DOUBT_REQUEST_PREFIX):
        return None
    value = response.get("input")
    return _text(value.get("resolution")) if isinstance(value, Mapping) else None


def _beside(event: Event, request_id: str | None) -> Any:
    """Who answered ``request_id``, where a graph's pause keeps it: beside the response, in
    the event's custom metadata (its response is the payload as sent)."""
    answered = (event.custom_metadata or {}).get(ANSWERED_KEY)
    return answered.get(request_id or "") if isinstance(answered, Mapping) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _trail(recorded: Any) -> list[TrailEntry]:
    """A reply's trail, each entry that reads as one (a hand-written reply may hold junk)."""
    steps: list[TrailEntry] = []
    for item in recorded if isinstance(recorded, list) else []:
        try:
            steps.append(TrailEntry.model_validate(item))
        except ValidationError:
            continue
    return steps


def _decided(
    event: Event,
    request_id: str,
    kind: Literal["confirmation", "input"],
    response: Mapping[str, Any],
    base: Mapping[str, Any],
) -> AuditEntry:
    """The one decision a reply records: who decided what, how, and what it let through."""
    # A graph's pause keeps the response as sent, and its answerer beside it.
    record = response.get(ANSWERED_KEY, _beside(event, request_id))
    who = record if isinstance(record, Mapping) else {}
    edited = response.get(EDITED_ARGS_KEY)
    grant = response.get(GRANT_REPLY_KEY)
    resolution = _resolution(request_id, response)
    return AuditEntry(
        decision="resolved" if resolution is not None else _decision(kind, response),
        resolution=resolution,
        answered_by=who.get("by"),
        channel=who.get("channel"),
        answered_at=who.get("at"),
        call_digest=_text(response.get("callDigest")) or "",
        edited_args=dict(edited) if isinstance(edited, Mapping) else None,
        edited_call_digest=_text(response.get(EDITED_DIGEST_KEY)) or "",
        grant_id=_text(grant.get("id")) if isinstance(grant, Mapping) else None,
        **base,
    )


def _reply_entries(
    event: Event,
    request_id: str,
    kind: Literal["confirmation", "input"],
    tool: str,
    response: Mapping[str, Any],
) -> list[AuditEntry]:
    """The entries of one reply: its trail, then its votes or its one decision."""
    base: dict[str, Any] = {
        "request_id": request_id,
        "kind": kind,
        "tool": tool,
        "invocation_id": event.invocation_id,
        "event_id": event.id,
    }
    digest = _text(response.get("callDigest")) or ""
    entries = [
        AuditEntry(
            decision=step.action,
            answered_by=step.by,
            channel=step.channel,
            answered_at=step.at,
            assignee=step.assignee,
            call_digest=digest,
            **base,
        )
        for step in _trail(response.get(TRAIL_KEY))
    ]
    decided = _decided(event, request_id, kind, response, base)
    votes = [v for v in response.get(VOTES_KEY) or [] if isinstance(v, Mapping)]
    for index, vote in enumerate(votes):
        deciding = index == len(votes) - 1 and decided.decision != "expired"
        entries.append(
            AuditEntry(
                decision="approved" if vote.get("decision") == "approved" else "rejected",
                answered_by=vote.get("by"),
                channel=vote.get("channel"),
                answered_at=vote.get("at"),
                call_digest=digest,
                vote=True,
                grant_id=decided.grant_id if deciding else None,
                **base,
            )
        )
    if not votes or decided.decision == "expired":
        entries.append(decided)
    return entries


def _metadata_entries(event: Event, tools: Mapping[str, str]) -> list[AuditEntry]:
    """The entries an event's ``custom_metadata`` holds: calls run under a grant, answers
    stored as plain function responses."""
    metadata = event.custom_metadata or {}
    base: dict[str, Any] = {"invocation_id": event.invocation_id, "event_id": event.id}
    entries: list[AuditEntry] = []
    granted = metadata.get(GRANT_KEY)
    for call_id, grant_id in granted.items() if isinstance(granted, Mapping) else []:
        tool = next((r.name or "" for r in event.function_responses() if r.id == call_id), "")
        entries.append(
            AuditEntry(
                request_id=call_id,
                kind="confirmation",
                tool=tool,
                decision="granted",
                channel="grant",
                grant_id=_text(grant_id),
                **base,
            )
        )
    answered = metadata.get(ANSWERED_KEY)
    # A reply of its own lists an answer (its answerer kept here, beside it): not twice.
    replied = {r.id for r in event.function_responses() if (r.name or "") in _KINDS}
    for request_id, who in answered.items() if isinstance(answered, Mapping) else []:
        if isinstance(who, Mapping) and request_id not in replied:
            entries.append(
                AuditEntry(
                    request_id=request_id,
                    kind="input",
                    tool=_text(who.get("tool")) or tools.get(request_id, ""),
                    decision="answered",
                    answered_by=who.get("by"),
                    channel=who.get("channel"),
                    answered_at=who.get("at"),
                    **base,
                )
            )
    return entries


def audit_entries(events: Iterable[Event]) -> list[AuditEntry]:
    """Every audit entry of ``events`` (a session's), in the order they were recorded."""
    listed = list(events)
    tools = _tools(listed)
    entries: list[AuditEntry] = []
    for event in listed:
        for reply in event.function_responses():
            kind = _KINDS.get(reply.name or "")
            if kind is not None:
                request_id = reply.id or ""
                entries += _reply_entries(
                    event, request_id, kind, tools.get(request_id, ""), reply.response or {}
                )
        entries += _metadata_entries(event, tools)
    return entries


def revocation_entries(grants: Iterable[Grant]) -> list[AuditEntry]:
    """A ``revoked`` entry per revoked grant among ``grants`` (from the session store)."""
    return [
        AuditEntry(
            request_id=g.request_id,
            kind="confirmation",
            tool=g.tool,
            decision="revoked",
            answered_by=g.revoked_by,
            answered_at=g.revoked_at,
            grant_id=g.id,
            invocation_id=g.invocation_id,
        )
        for g in grants
        if g.revoked_at is not None
    ]
