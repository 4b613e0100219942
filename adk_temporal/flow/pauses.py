"""A graph node's pause: its ``RequestInput`` requests opened as durable requests, and the
answers taken back as ADK stores and hands them over.

ADK 2.13 stores a request as an ``adk_request_input`` call (the node step stored it) and
its answer as the user's function response with the payload as sent; the node receives
the response with a lone ``{"result": x}`` unwrapped and a string ``x`` parsed as JSON
(``google/adk/workflow/utils/_rehydration_utils.py``). Here the invocation waits for the
answer instead of ending, and every existing answer path reaches it through the book. Who
answered (by, channel, when) is kept beside the response, in the event's
``custom_metadata``, so the payload keeps ADK's shape and the audit trail still names them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.genai import types

from ..events import REQUEST_INPUT_FUNCTION_NAME, Event, InputRequest
from .executor import Executor
from .graph_messages import NodeRequest
from .messages import InvocationRef, PendingInput, ResumeInput
from .replies import answered_metadata
from .requests import RequestBook

__all__ = ["open_pause", "take_answers", "unwrap_answer"]


def open_pause(
    book: RequestBook, requests: Sequence[NodeRequest], author: str, branch: str, now: float
) -> list[str]:
    """Open an input request per ``RequestInput`` (its event is stored); their ids."""
    for request in requests:
        rid = request.interrupt_id
        pending = PendingInput(
            kind="input",
            id=rid,
            function_call_id=rid,
            tool=REQUEST_INPUT_FUNCTION_NAME,
            args={"payload": request.payload} if request.payload is not None else {},
            message=request.message,
            input_schema=request.response_schema,
            agent=author,
            branch=branch,
            opened_at=now,
        )
        schema = request.response_schema
        book.open(
            pending, InputRequest(interrupt_id=rid, function_call_id=rid, input_schema=schema)
        )
    return [r.interrupt_id for r in requests]


def _as_response(value: Any) -> dict[str, Any]:
    """The function response an answer is stored as: a JSON object as sent, any other value
    as ``{"result": value}`` (ADK's two shapes)."""
    return value if isinstance(value, dict) else {"result": value}


def unwrap_answer(response: dict[str, Any]) -> Any:
    """What the node receives for a stored response (ADK's ``_unwrap_response``)."""
    if len(response) != 1 or "result" not in response:
        return response
    value = response["result"]
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def take_answers(
    book: RequestBook, ids: Sequence[str], ref: InvocationRef, executor: Executor
) -> tuple[Event, dict[str, Any]]:
    """Close the answered requests among ``ids``: the user's event storing their answers
    (on the paused node's branch, ``ref.branch``, as ADK resumes it), and the values the
    node receives, by interrupt id."""
    parts: list[types.Part] = []
    values: dict[str, Any] = {}
    closed = book.take([i for i in ids if book.answered([i])])
    for taken in closed:
        assert isinstance(taken.answer, ResumeInput)  # the requests are input requests
        response = _as_response(taken.answer.input)
        values[taken.pending.id] = unwrap_answer(response)
        reply = types.FunctionResponse(
            id=taken.pending.id, name=REQUEST_INPUT_FUNCTION_NAME, response=response
        )
        parts.append(types.Part(function_response=reply))
    event = Event(
        id=executor.new_id(),
        invocation_id=ref.invocation_id,
        author="user",
        branch=ref.branch,
        content=types.Content(role="user", parts=parts),
        timestamp=executor.now(),
        custom_metadata=answered_metadata(closed),
    )
    return event, values
