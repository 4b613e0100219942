"""The replies a run records for answered requests, and what the answers give the calls
dispatched again.

A reply is the user event's function response to an ``adk_request_confirmation`` or
``adk_request_input`` call: the decision (or value), how long the request waited, who
answered and how, and — for a request under an approval policy — every vote, the inbox's
trail (claims, assignments, reminders, reassignments) and a standing grant given with the
approval. The audit reads them back (:mod:`adk_temporal.audit`). Answers that are not
replies to such calls (a long-running tool's response, a graph node's input) record who
answered in the event's ``custom_metadata`` instead, which no model sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from adk_temporal.approvals import GrantGiven
from adk_temporal.confirmation import confirmation_reply, edited_reply
from adk_temporal.events import (
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    WAITED_KEY,
    Event,
    ToolConfirmation,
)
from adk_temporal.resume import input_reply

from .messages import ConfirmInput, PendingConfirmation, PlannedCall
from .requests import ANSWERED_KEY, Taken, answer_record

__all__ = [
    "GRANT_REPLY_KEY",
    "TRAIL_KEY",
    "VOTES_KEY",
    "Answers",
    "answered_metadata",
    "reply_part",
]

VOTES_KEY = "votes"
"""In a reply under a policy: every vote, ``{"by", "decision", "channel", "at"}``."""
TRAIL_KEY = "trail"
"""In a reply: the request's claims, releases, assignments, reminders and reassignments."""
GRANT_REPLY_KEY = "grant"
"""In an approval's reply: the standing grant given with it."""


@dataclass
class Answers:
    """What the answers to a pause give the calls that are dispatched again, by call id."""

    confirmations: dict[str, ToolConfirmation] = field(default_factory=dict)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    expired: dict[str, list[str]] = field(default_factory=dict)
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The arguments approvers edited, by call id: the calls run with these."""
    decided_at: dict[str, float] = field(default_factory=dict)
    """When each approval was decided (the run's clock), for a policy's ``max_age``."""
    grants: dict[str, GrantGiven] = field(default_factory=dict)
    """Standing grants given with approvals: the re-dispatched step records them."""
    requests: dict[str, str] = field(default_factory=dict)
    """The confirmation request each call's answer came to: a call that asks again
    re-opens it."""
    reply: Event | None = None
    """The user event recording the answers."""

    def call(self, call: PlannedCall) -> PlannedCall:
        """``call`` as it is dispatched again: with the arguments its approver edited."""
        edited = self.edits.get(call.id)
        return call if edited is None else call.model_copy(update={"args": edited})

    def concern(self, call_id: str) -> bool:
        """True when the call is re-dispatched with an answer (or an expiry)."""
        return call_id in self.confirmations or call_id in self.inputs or call_id in self.expired


def _confirmation(
    pending: PendingConfirmation, answer: ConfirmInput, expired: bool, answers: Answers
) -> dict[str, Any]:
    """A confirmation's reply; what its re-dispatched call receives goes to ``answers``."""
    call_id = pending.function_call_id
    response = confirmation_reply(
        answer.confirmed, answer.payload, call_digest=pending.call_digest, expired=expired
    )
    answers.confirmations[call_id] = ToolConfirmation(
        hint=pending.hint, confirmed=answer.confirmed, payload=answer.payload, expired=expired
    )
    answers.requests[call_id] = pending.id
    if answer.edited_args is not None and not expired:
        response.update(edited_reply(pending.tool, answer.edited_args))
        answers.edits[call_id] = answer.edited_args
    if answer.confirmed and not expired and answer.answered_at is not None:
        answers.decided_at[call_id] = answer.answered_at
        if answer.grant is not None:
            given = GrantGiven(
                terms=answer.grant,
                request_id=pending.id,
                granted_by=answer.answered_by,
                channel=answer.channel,
                at=answer.answered_at,
            )
            answers.grants[call_id] = given
            response[GRANT_REPLY_KEY] = given.record(pending.tool)
    if pending.votes:
        response[VOTES_KEY] = [
            {
                "by": v.by,
                "decision": "approved" if v.approve else "rejected",
                "channel": v.channel,
                "at": v.at,
            }
            for v in pending.votes
        ]
    return response


def reply_part(taken: Taken, answers: Answers, now: float) -> types.Part:
    """The reply to one answered (or expired) request, as a part of the reply event; what
    the re-dispatched call receives is noted in ``answers``."""
    pending, answer, expired = taken
    response: dict[str, Any]
    if isinstance(answer, ConfirmInput):
        # The book takes only answers of the request's kind.
        assert isinstance(pending, PendingConfirmation)
        response = _confirmation(pending, answer, expired, answers)
        name = REQUEST_CONFIRMATION_FUNCTION_NAME
    elif expired:
        response = input_reply(None, expired=True)
        answers.expired.setdefault(pending.function_call_id, []).append(pending.id)
        name = REQUEST_INPUT_FUNCTION_NAME
    else:
        response = input_reply(answer.input)
        answers.inputs.setdefault(pending.function_call_id, {})[pending.id] = answer.input
        name = REQUEST_INPUT_FUNCTION_NAME
    if pending.opened_at is not None:
        # How long a human took: the audit trail's figure, and the wait metric's.
        response[WAITED_KEY] = round(max(0.0, now - pending.opened_at), 3)
    record = answer_record(answer)
    if record is not None:
        response[ANSWERED_KEY] = record
    if pending.trail:
        response[TRAIL_KEY] = [e.model_dump(mode="json", exclude_none=True) for e in pending.trail]
    return types.Part(
        function_response=types.FunctionResponse(id=pending.id, name=name, response=response)
    )


def answered_metadata(taken: Sequence[Taken]) -> dict[str, Any] | None:
    """The ``custom_metadata`` of a user event that stores answers as plain function
    responses: who answered each request, how and when (``None``: nobody recorded)."""
    records: dict[str, Any] = {}
    for pending, answer, _ in taken:
        record = answer_record(answer)
        if record is not None:
            records[pending.id] = {**record, "tool": pending.tool}
    return {ANSWERED_KEY: records} if records else None
