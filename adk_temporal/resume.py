"""Resume inputs: what a paused tool asked for, and the checked answer it is re-entered with.

A tool calls ``ctx.request_input(message, schema)``; the runtime records an
``adk_request_input`` function-call event whose call id is the interrupt id, waits for an
answer, checks it against the request's JSON schema, and re-enters the tool, which reads it
with ``ctx.resumed_input(interrupt_id)``. This module holds the pure parts of that protocol:
the :class:`Resumed` holder, the interrupt-id format, schema checks, the request event and
the shape of the reply the runtime records (:func:`input_reply`).

Interrupt ids and function-call ids are separate namespaces: a default interrupt id is derived
from the function-call id but never equal to it, so a confirmation reply (addressed by a
confirmation id) can never answer an input request, and vice versa.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types
from jsonschema import SchemaError, ValidationError
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict

from .errors import InvalidResumeInputError
from .events import REQUEST_INPUT_FUNCTION_NAME, Event, InputRequest

__all__ = [
    "Resumed",
    "build_input_request_event",
    "build_request_event",
    "check_input_schema",
    "check_resume_input",
    "default_interrupt_id",
    "input_reply",
    "input_request_call",
    "schema_errors",
]


class Resumed(BaseModel):
    """The answer an interrupt was resumed with; ``value`` may be ``None`` (answered with None).

    ``resumed_input`` returns ``None`` for an interrupt that was never answered and a
    ``Resumed`` for one that was, so "answered with ``None``" and "not answered" differ.
    """

    model_config = ConfigDict(frozen=True)

    value: Any


def default_interrupt_id(function_call_id: str, ordinal: int) -> str:
    """The interrupt id of a tool call's ``ordinal``-th request that named no id.

    The format is ``"<function_call_id>/input-<ordinal>"`` with ``ordinal`` counting from 1.
    It depends only on the call id and the order of the requests, so a handler re-entered
    for the same call computes the same ids and finds its answers.

    Args:
        function_call_id: The id of the tool call that requests the input.
        ordinal: 1 for the call's first request without an explicit id, 2 for the second, ...

    Returns:
        The interrupt id.
    """
    return f"{function_call_id}/input-{ordinal}"


def check_input_schema(schema: Mapping[str, Any]) -> None:
    """Check that ``schema`` is a valid JSON schema, so a request can never be unanswerable.

    Args:
        schema: The JSON schema a tool attaches to an input request.

    Raises:
        ValueError: The schema is not valid under its own (or the latest) JSON-schema draft.
    """
    try:
        validator_for(schema).check_schema(dict(schema))
    except SchemaError as exc:
        raise ValueError(f"invalid input schema for request_input: {exc.message}") from exc


def schema_errors(schema: Mapping[str, Any], value: Any) -> list[ValidationError]:
    """Every way ``value`` breaks ``schema`` (formats checked), by JSON path."""
    validator_cls = validator_for(schema)
    validator = validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)
    return sorted(validator.iter_errors(value), key=lambda e: (e.json_path, e.message))


def check_resume_input(request: InputRequest, value: Any) -> None:
    """Check an answer against the JSON schema of the request it answers.

    A request without a schema accepts any value, including ``None``.

    Args:
        request: The open input request.
        value: The proposed answer.

    Raises:
        InvalidResumeInputError: The value violates the schema; the message names every
            violation as ``<json path>: <reason>``, e.g. ``$.amount: 'ten' is not of type
            'integer'``; its ``violated`` lists them without the value
            (``$.amount: type``), for records that must not hold the answer.
    """
    if request.input_schema is None:
        return
    errors = schema_errors(request.input_schema, value)
    if errors:
        violations = "; ".join(f"{e.json_path}: {e.message}" for e in errors)
        raise InvalidResumeInputError(
            f"input for interrupt {request.interrupt_id!r} does not satisfy its schema: "
            f"{violations}",
            violated=[f"{e.json_path}: {e.validator}" for e in errors],
        )


def input_request_call(request: InputRequest) -> types.FunctionCall:
    """The ``adk_request_input`` function call that records ``request`` in the session.

    Args:
        request: The input request a tool raised.

    Returns:
        A call whose id is the interrupt id and whose args are ``{"message", "schema",
        "functionCallId"}``.
    """
    return types.FunctionCall(
        id=request.interrupt_id,
        name=REQUEST_INPUT_FUNCTION_NAME,
        args={
            "message": request.message,
            "schema": request.input_schema,
            "functionCallId": request.function_call_id,
        },
    )


def input_reply(value: Any, *, expired: bool = False) -> dict[str, Any]:
    """The response object of the ``adk_request_input`` reply the runtime records.

    The one place the reply's keys are spelled. Keys and key order are part of the stored
    events (and of the step inputs recorded in workflow histories), so they must not change.

    Args:
        value: The checked answer (``None`` is an answer).
        expired: Nobody answered before the request's deadline; ``value`` is then ignored.

    Returns:
        ``{"input": value}``, or ``{"expired": True}`` for an expired request.
    """
    if expired:
        return {"expired": True}
    return {"input": value}


def build_request_event(
    calls: Sequence[types.FunctionCall],
    *,
    event_id: str,
    invocation_id: str,
    author: str,
    branch: str = "",
    isolation_scope: str = "",
    timestamp: float = 0.0,
) -> Event:
    """An agent event of long-running request calls (confirmation or input requests).

    Every call id is listed in ``long_running_tool_ids``, which is what marks the event as a
    pause the invocation waits on.

    Args:
        calls: The request calls, in the order they should be answered and shown.
        event_id: The event id, decided by the caller (the workflow) so retries reuse it.
        invocation_id: The invocation the event belongs to.
        author: The agent that raised the requests.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.
        timestamp: POSIX seconds, decided by the caller.

    Returns:
        The event.

    Raises:
        ValueError: ``calls`` is empty or a call has no id.
    """
    if not calls:
        raise ValueError("a request event needs at least one request call")
    ids = [call.id for call in calls if call.id]
    if len(ids) != len(calls):
        raise ValueError("every request call needs an id; it is what the answer refers to")
    return Event(
        id=event_id,
        invocation_id=invocation_id,
        author=author,
        branch=branch,
        isolation_scope=isolation_scope,
        content=types.Content(
            role="model", parts=[types.Part(function_call=call) for call in calls]
        ),
        long_running_tool_ids=ids,
        timestamp=timestamp,
    )


def build_input_request_event(
    requests: Sequence[InputRequest],
    *,
    event_id: str,
    invocation_id: str,
    author: str,
    branch: str = "",
    isolation_scope: str = "",
    timestamp: float = 0.0,
) -> Event:
    """The event that records a step's input requests: one ``adk_request_input`` call each.

    Args:
        requests: The requests, in the order the tools raised them.
        event_id: The event id, decided by the caller (the workflow) so retries reuse it.
        invocation_id: The invocation the event belongs to.
        author: The agent whose tools raised the requests.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.
        timestamp: POSIX seconds, decided by the caller.

    Returns:
        The event, with the interrupt ids in ``long_running_tool_ids``.

    Raises:
        ValueError: ``requests`` is empty.
    """
    return build_request_event(
        [input_request_call(r) for r in requests],
        event_id=event_id,
        invocation_id=invocation_id,
        author=author,
        branch=branch,
        isolation_scope=isolation_scope,
        timestamp=timestamp,
    )
