"""The one reader of a run's history for answers: what each request was answered with
first, and which answers Temporal holds that no worker has taken yet.

The history, which Temporal serves with no worker running, holds every answer that
reached the run — a signal, or a checked update the run accepted — with its time, the
sending client's identity and what the surface recorded (``answered_by``, ``channel``). A
signal recorded after the start of the last workflow task a worker completed has not been
seen by the run: it is held. Payloads are decoded with the client's data converter (its
codec, encryption included); one that cannot be decoded (malformed, sealed with a key this
client lacks) says nothing about any request and is skipped: the run refuses such a signal
itself and lists the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.converter import WorkflowSerializationContext

from ..workflows.messages import (
    CONFIRM_CHECKED_UPDATE,
    CONFIRM_SIGNAL,
    RESUME_CHECKED_UPDATE,
    RESUME_SIGNAL,
)
from .outcome import EarlierAnswer

__all__ = ["RunAnswers", "read_answers"]

_REQUEST_FIELD = {
    CONFIRM_SIGNAL: "confirmation_id",
    CONFIRM_CHECKED_UPDATE: "confirmation_id",
    RESUME_SIGNAL: "interrupt_id",
    RESUME_CHECKED_UPDATE: "interrupt_id",
}
"""Each answering signal or update, and the field naming the request it answers."""


@dataclass
class RunAnswers:
    """What a run's history shows of its answers, by request id.

    Args:
        first: The first answer each request received (as a signal or an accepted update).
        held: The first answer to each request that Temporal holds as a signal no worker
            has taken yet.
        every: Every answer, in order.
    """

    first: dict[str, EarlierAnswer] = field(default_factory=dict)
    held: dict[str, EarlierAnswer] = field(default_factory=dict)
    every: list[tuple[str, EarlierAnswer]] = field(default_factory=list)
    """Every answer the history holds, by request id, in order (the votes of a request
    under a policy, answers the run refused too)."""


@dataclass(frozen=True)
class _Sent:
    event_id: int
    name: str
    payloads: Payloads
    sender: str
    way: str
    signal: bool


def _sent(event: HistoryEvent) -> _Sent | None:
    """An answering event's name, input, sender and way; ``None`` for other events."""
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        signaled = event.workflow_execution_signaled_event_attributes
        return _Sent(
            event.event_id, signaled.signal_name, signaled.input, signaled.identity, "signal", True
        )
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        request = event.workflow_execution_update_accepted_event_attributes.accepted_request
        update = request.input
        return _Sent(
            event.event_id, update.name, update.args, request.meta.identity, "update", False
        )
    return None


def _decision(answer: dict[str, Any]) -> str:
    if "confirmed" not in answer:
        return "answered"
    return "approved" if answer["confirmed"] is True else "rejected"


async def read_answers(client: Client, workflow_id: str) -> RunAnswers:
    """Read the current run's history once for its answers (no worker needed)."""
    converter = client.data_converter.with_context(
        WorkflowSerializationContext(namespace=client.namespace, workflow_id=workflow_id)
    )
    seen_up_to = 0
    found: list[tuple[_Sent, EarlierAnswer, str]] = []
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            seen_up_to = event.workflow_task_completed_event_attributes.started_event_id
            continue
        sent = _sent(event)
        if sent is None or sent.name not in _REQUEST_FIELD or not sent.payloads.payloads:
            continue
        try:
            [answer] = await converter.decode(sent.payloads.payloads[:1], [dict[str, Any]])
        except Exception:  # undecodable: not readable as anyone's answer
            continue
        request_id = answer.get(_REQUEST_FIELD[sent.name]) if isinstance(answer, dict) else None
        if not isinstance(request_id, str):
            continue
        by = answer.get("answered_by")
        earlier = EarlierAnswer(
            decision=_decision(answer),
            at=event.event_time.ToDatetime(UTC),
            answered_by=by if isinstance(by, str) else None,
            channel=str(answer.get("channel") or sent.way),
            sender=sent.sender,
        )
        found.append((sent, earlier, request_id))
    answers = RunAnswers()
    for sent, earlier, request_id in found:
        answers.every.append((request_id, earlier))
        answers.first.setdefault(request_id, earlier)
        if sent.signal and sent.event_id > seen_up_to:
            answers.held.setdefault(request_id, earlier)
    return answers
