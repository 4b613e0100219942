"""What a recorded session holds for a replay: its turns, its tool calls and their answers.

A recorded call is a function call the model made (the runtime's own
``adk_request_confirmation`` / ``adk_request_input`` calls aside) with every response
recorded for it, in order — one per time its handler ran: a call that asked for approval
has the "waiting" response, then the one after the answer — and the answers a human gave
it: the approval (confirmed, payload) and the input values, in order. Several calls
answered in one step share that step's merged event, so they share its state and
artifact deltas; confirmation and input requests are each attributed to their own call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.genai import types
from pydantic import BaseModel, Field

from ..events import (
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    Event,
    EventActions,
    ToolConfirmation,
)
from ..history import USER_AUTHOR
from ..ids import SessionKey
from ..usage import TokenUsage
from .conversions import user_message

__all__ = [
    "FRAMEWORK_CALLS",
    "RecordedCall",
    "RecordedSession",
    "RecordedStage",
    "RecordedTurn",
    "model_calls",
    "read_recorded",
]

FRAMEWORK_CALLS = frozenset({REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME})
"""Calls the runtime makes, not the model: never served, never compared."""


class RecordedStage(BaseModel):
    """One run of a call's handler: the response and the actions that came with it."""

    response: dict[str, Any]
    actions: EventActions


class RecordedCall(BaseModel):
    """A tool call of the record with its responses and the answers it was given."""

    turn: int
    call_id: str
    name: str
    args: dict[str, Any]
    stages: list[RecordedStage] = Field(default_factory=list)
    confirmation: ToolConfirmation | None = None
    inputs: list[Any] = Field(default_factory=list)


class RecordedTurn(BaseModel):
    """One user turn of the record: the message, the model's calls, its final text."""

    index: int
    invocation_id: str
    message: types.Content
    calls: list[types.FunctionCall] = Field(default_factory=list)
    final_text: str = ""
    usage: dict[str, TokenUsage] = Field(default_factory=dict)
    """Tokens by the agent (event author) that spent them."""


class RecordedSession(BaseModel):
    """A recorded session, read for a replay."""

    key: tuple[str, str, str]
    initial_state: dict[str, Any]
    turns: list[RecordedTurn]
    calls: list[RecordedCall]

    @property
    def session_key(self) -> SessionKey:
        """The recorded session's key."""
        return SessionKey(*self.key)


def model_calls(event: Event) -> list[types.FunctionCall]:
    """The function calls the model made in ``event`` (the runtime's requests left out)."""
    if event.author.lower() == USER_AUTHOR:
        return []
    return [c for c in event.function_calls() if c.name not in FRAMEWORK_CALLS]


def _own_actions(actions: EventActions, call_id: str) -> EventActions:
    """The step's actions with only this call's requests (the deltas are the step's)."""
    return actions.model_copy(
        update={
            "requested_tool_confirmations": {
                k: v for k, v in actions.requested_tool_confirmations.items() if k == call_id
            },
            "requested_inputs": {
                k: v for k, v in actions.requested_inputs.items() if v.function_call_id == call_id
            },
        },
        deep=True,
    )


class _Reader:
    def __init__(self) -> None:
        self.turns: list[RecordedTurn] = []
        self.calls: dict[str, RecordedCall] = {}
        self.confirming: dict[str, str] = {}  # confirmation request id -> call id
        self.inputs: dict[str, str] = {}  # interrupt id -> call id

    def read(self, event: Event) -> None:
        if user_message(event) and event.content is not None:
            index = len(self.turns)
            self.turns.append(
                RecordedTurn(index=index, invocation_id=event.invocation_id, message=event.content)
            )
            return
        if not self.turns or event.partial:
            return
        turn = self.turns[-1]
        if event.author.lower() == USER_AUTHOR:
            self._answers(event)
            return
        self._requests(event)
        for response in event.function_responses():
            call = self.calls.get(response.id or "")
            if call is not None:
                stage = RecordedStage(
                    response=dict(response.response or {}),
                    actions=_own_actions(event.actions, call.call_id),
                )
                call.stages.append(stage)
        for made in model_calls(event):
            turn.calls.append(made)
            self.calls[made.id or ""] = RecordedCall(
                turn=turn.index, call_id=made.id or "", name=made.name or "", args=made.args or {}
            )
        if event.usage_metadata is not None:
            spent = turn.usage.get(event.author, TokenUsage()) + TokenUsage.of(event.usage_metadata)
            turn.usage[event.author] = spent
        if event.is_final_response() and event.text():
            turn.final_text = event.text()

    def _requests(self, event: Event) -> None:
        for call in event.function_calls():
            if call.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
                original = (call.args or {}).get("originalFunctionCall") or {}
                self.confirming[call.id or ""] = str(original.get("id", ""))
        for interrupt_id, request in event.actions.requested_inputs.items():
            self.inputs[interrupt_id] = request.function_call_id

    def _answers(self, event: Event) -> None:
        for response in event.function_responses():
            answer = response.response or {}
            if response.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
                call = self.calls.get(self.confirming.get(response.id or "", ""))
                if call is not None:
                    call.confirmation = ToolConfirmation(
                        confirmed=bool(answer.get("confirmed")), payload=answer.get("payload")
                    )
            elif response.name == REQUEST_INPUT_FUNCTION_NAME:
                call = self.calls.get(self.inputs.get(response.id or "", ""))
                if call is not None:
                    call.inputs.append(answer.get("input"))


def read_recorded(
    key: SessionKey, events: Sequence[Event], initial_state: dict[str, Any]
) -> RecordedSession:
    """Read a recorded session's turns and calls from its events, in order."""
    reader = _Reader()
    for event in events:
        reader.read(event)
    return RecordedSession(
        key=(key.app_name, key.user_id, key.session_id),
        initial_state=initial_state,
        turns=reader.turns,
        calls=list(reader.calls.values()),
    )
