"""The input request an invocation opens when a call with external effects is in doubt.

A tool declared ``effects="external"`` whose worker was lost mid-call (or whose code raised)
may or may not have had its effect: its step answers :class:`~.messages.InDoubtResult`
instead of running it again, and the flow pauses on this request until an operator resolves
the call. Any answer path can answer it — ``adk-temporal resolve``, ``resume``, the gateway, a
signal — with one of:

- ``{"resolution": "done", "result": {...}}``: the effect happened; the model sees ``result``;
- ``{"resolution": "retry"}``: run the tool again, once, with the same idempotency key;
- ``{"resolution": "fail", "reason": "..."}``: the model sees an error naming the reason;
- ``{"resolution": "compensate"}``: run the compensating tool registered with the first
  (``compensate=``), then the model sees its outcome.

Each resolution is recorded with who gave it (the audit lists it) and has at most one
effect.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from adk_temporal.events import InputRequest

from .messages import InDoubtResult, PendingInput, PlannedCall, ToolCallInput, ToolOptions

__all__ = [
    "DOUBT_REQUEST_PREFIX",
    "Resolution",
    "compensating",
    "doubt_request",
    "doubt_schema",
    "failed_in_doubt",
    "resolution_of",
]

DOUBT_REQUEST_PREFIX = "adk-doubt-"
"""How an in-doubt request's id begins; the rest is a new id of the workflow's."""

Resolution: TypeAlias = Literal["done", "retry", "fail", "compensate"]
"""How an operator resolved a call in doubt."""


def doubt_schema(compensable: bool) -> dict[str, Any]:
    """The answer's shape: a resolution (``compensate`` only for a tool with a compensating
    tool), the result the model sees after ``done``, the reason after ``fail``."""
    resolutions = ["done", "retry", "fail", *(["compensate"] if compensable else [])]
    return {
        "type": "object",
        "properties": {
            "resolution": {"enum": resolutions},
            "result": {"type": "object"},
            "reason": {"type": "string", "maxLength": 2000},
        },
        "required": ["resolution"],
        "additionalProperties": False,
    }


def doubt_request(
    doubt: InDoubtResult,
    call: PlannedCall,
    request_id: str,
    *,
    agent: str,
    branch: str,
    now: float,
) -> tuple[PendingInput, InputRequest]:
    """The request resolving ``call``, as the request book lists it and as the session
    records it: what is known of the call (when it started, where, what the tool noted)."""
    receipt = doubt.in_doubt
    known = [f"started at {receipt.started_at:.3f} (POSIX s) on worker {receipt.worker or '?'}"]
    if receipt.error:
        known.append(f"its code raised {receipt.error}")
    if receipt.details:
        known.append(f"it noted {receipt.details}")
    compensable = call.options.compensator is not None
    choices = "done (with the result), retry, fail" + (", compensate" if compensable else "")
    message = (
        f"the call {call.summary()} has external effects and may or may not have had them: "
        f"{'; '.join(known)}. Resolve it: {choices}"
    )
    schema = doubt_schema(compensable)
    request = InputRequest(
        interrupt_id=request_id, function_call_id=call.id, message=message, input_schema=schema
    )
    pending = PendingInput(
        kind="input",
        id=request_id,
        function_call_id=call.id,
        tool=call.name,
        args=call.args,
        message=message,
        input_schema=schema,
        agent=agent,
        branch=branch,
        opened_at=now,
    )
    return pending, request


def resolution_of(answer: Any) -> tuple[Resolution, dict[str, Any], str]:
    """The resolution an answer gives (its schema was checked when it arrived), with the
    result after ``done`` and the reason after ``fail``."""
    value = answer if isinstance(answer, dict) else {}
    resolution: Resolution = value.get("resolution", "fail")
    result = value.get("result")
    reason = value.get("reason")
    return (
        resolution,
        result if isinstance(result, dict) else {},
        reason if isinstance(reason, str) else "",
    )


def failed_in_doubt(tool: str, reason: str) -> str:
    """What the model sees of a call in doubt an operator resolved as failed."""
    why = f": {reason}" if reason else ""
    return f"tool {tool} call may not have taken effect and was resolved as failed{why}"


def compensating(inp: ToolCallInput) -> ToolCallInput:
    """The step that runs the compensating tool of ``inp``'s call, with its arguments; its
    response answers the call in doubt (``{"compensated": ...}``)."""
    call = inp.call
    assert call.options.compensator is not None, "the schema offers compensate only then"
    undo = PlannedCall(
        id=f"{call.id}-compensation",
        name=call.options.compensator,
        args=call.args,
        options=ToolOptions(),
    )
    return inp.model_copy(
        update={
            "call": undo,
            "compensates": call,
            "tool_confirmation": None,
            "in_doubt_retry": None,
        }
    )
