"""``RequestInput``: what a node returns (or yields) to pause for a person's answer.

ADK 2.13's ``google/adk/events/request_input.py``: the request is stored as a function
call ``adk_request_input`` whose id is the interrupt id and whose arguments carry the
interrupt id, the payload, the message and the response schema; the node's run pauses
there until an answer arrives.
"""

from __future__ import annotations

import uuid
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..events import REQUEST_INPUT_FUNCTION_NAME, Event

__all__ = ["RequestInput", "request_event"]


class RequestInput(BaseModel):
    """A request for input from a person (ADK 2's ``RequestInput``).

    Attributes:
        interrupt_id: Identifies the request (a new UUID unless given).
        payload: Anything the person needs to answer.
        message: What to show the person.
        response_schema: The JSON schema of the expected answer (``None``: any value).
    """

    model_config = ConfigDict(populate_by_name=True)

    interrupt_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    payload: Any = None
    message: str | None = None
    response_schema: dict[str, Any] | None = None


def request_event(request: RequestInput) -> Event:
    """The event recording ``request``: ADK's ``adk_request_input`` call, long-running."""
    args = {
        "interruptId": request.interrupt_id,
        "payload": request.payload,
        "message": request.message,
        "response_schema": request.response_schema,
    }
    call = types.FunctionCall(name=REQUEST_INPUT_FUNCTION_NAME, args=args, id=request.interrupt_id)
    return Event(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids=[request.interrupt_id],
    )
