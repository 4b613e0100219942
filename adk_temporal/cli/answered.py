"""An answer given earlier: found in the run's history, so a second one is told so.

A request stops being open once it is answered; a second ``confirm`` or ``resume`` of it
would otherwise fail as an unknown id (or, on a closed run, as an unknown workflow). The
run's history — served by Temporal with no worker — holds every answer that reached it, as
a signal or an accepted checked update, with its time and the sending client's identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
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
from .common import CliError

__all__ = ["EarlierAnswer", "earlier_answer", "refuse_if_answered"]

_ANSWERS = {
    CONFIRM_SIGNAL: "confirmation_id",
    CONFIRM_CHECKED_UPDATE: "confirmation_id",
    RESUME_SIGNAL: "interrupt_id",
    RESUME_CHECKED_UPDATE: "interrupt_id",
}
"""Each answering signal or update, and the field naming the request it answers."""


@dataclass(frozen=True)
class EarlierAnswer:
    """The first answer a run received for one request.

    Args:
        decision: ``approved``, ``rejected`` or ``answered`` (an input).
        at: When Temporal recorded it.
        sender: The identity of the client that sent it, as Temporal recorded it.
        channel: ``signal`` or ``checked update``.
    """

    decision: str
    at: datetime
    sender: str
    channel: str

    def describe(self) -> str:
        """One clause: what was answered, when, by whom, how."""
        by = f" by {self.sender}" if self.sender else ""
        return f"{self.decision} at {self.at:%Y-%m-%d %H:%M:%S} UTC{by} (through a {self.channel})"


def _sent(event: HistoryEvent) -> tuple[str, Payloads, str, str] | None:
    """An answering event's name, input, sender and channel; ``None`` for other events."""
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        signaled = event.workflow_execution_signaled_event_attributes
        return signaled.signal_name, signaled.input, signaled.identity, "signal"
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        request = event.workflow_execution_update_accepted_event_attributes.accepted_request
        update = request.input
        return update.name, update.args, request.meta.identity, "checked update"
    return None


def _decision(answer: dict[str, Any]) -> str:
    if "confirmed" not in answer:
        return "answered"
    return "approved" if answer["confirmed"] is True else "rejected"


async def earlier_answer(client: Client, workflow_id: str, request_id: str) -> EarlierAnswer | None:
    """The first answer to ``request_id`` in the current run's history, or ``None``.

    Answers that cannot be decoded (sealed with a key this client lacks, malformed) are
    skipped: they say nothing about the request.
    """
    converter = client.data_converter.with_context(
        WorkflowSerializationContext(namespace=client.namespace, workflow_id=workflow_id)
    )
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        sent = _sent(event)
        if sent is None or sent[0] not in _ANSWERS or not sent[1].payloads:
            continue
        name, payloads, sender, channel = sent
        try:
            [answer] = await converter.decode(payloads.payloads[:1], [dict[str, Any]])
        except Exception:  # undecodable: not readable as anyone's answer
            continue
        if isinstance(answer, dict) and answer.get(_ANSWERS[name]) == request_id:
            at = event.event_time.ToDatetime(UTC)
            return EarlierAnswer(_decision(answer), at, sender, channel)
    return None


async def refuse_if_answered(client: Client, workflow_id: str, request_id: str) -> None:
    """Refuse a second answer to a request that is no longer open because it was answered.

    Raises:
        CliError: The run's history holds an earlier answer to ``request_id``.
    """
    earlier = await earlier_answer(client, workflow_id, request_id)
    if earlier is not None:
        raise CliError(
            f"request {request_id!r} of {workflow_id} was already answered: "
            f"{earlier.describe()}; this answer was not sent",
            f"`adk-temporal show {workflow_id}` shows how the run went on",
        )
