"""Tool confirmation (human approval): request and reply shapes, and the call binding.

The protocol, in session order:

1. The model calls a tool; the tool (or the static gate of a tool declared with
   ``require_confirmation``) records ``requested_tool_confirmations[function_call_id]``.
2. The runtime appends one request event: an ``adk_request_confirmation`` function call per
   requesting call, in the model's call order, each with its own ``adk-`` id (decided by the
   workflow) and args ``{"originalFunctionCall", "toolConfirmation", "callDigest"}``.
3. The answer arrives as signal ``adk_confirm`` (or update ``adk_confirm_checked``); the
   runtime records it as a user event of ``adk_request_confirmation`` function responses
   addressed by confirmation id, whose response object :func:`confirmation_reply` shapes.
4. The re-dispatch rule — the answered calls of the paused step run again, once each, in
   the order their requests were made, with the same function-call id and the user's
   decision as ``ctx.tool_confirmation`` — lives in the runtime, not here:
   :class:`~adk_temporal.flow.requests.RequestBook` keeps the open requests and their
   answers, and :class:`~adk_temporal.flow.invocation.InvocationFlow` re-dispatches.

**Call binding** **[better]**: ``callDigest`` is :func:`call_digest` of the original call's
name and args. A reply that names an original call (``originalFunctionCall``) or a digest
(``callDigest``) differing from the request's is refused, and so is a reply or a request
without ``callDigest``: omitting it may not skip the binding. :func:`check_reply_digest`
raises :class:`~adk_temporal.errors.ConfirmationMismatchError` (the runtime's answer to a
signal or update), and the request stays open. A signal addressed by confirmation id is
bound by the runtime, which writes the request's digest into the reply event it appends.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types

from .errors import ConfirmationMismatchError
from .events import (
    ADK_ID_PREFIX,
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    Event,
    ToolConfirmation,
)
from .resume import build_request_event

__all__ = [
    "EDITED_ARGS_KEY",
    "EDITED_DIGEST_KEY",
    "build_confirmation_request_event",
    "call_digest",
    "check_reply_digest",
    "confirmation_hint",
    "confirmation_reply",
    "confirmation_request_call",
    "confirmation_required_response",
    "edited_reply",
    "rejected_response",
    "stale_hint",
]


def confirmation_hint(tool_name: str) -> str:
    """The hint the static gate shows when a tool declared ``require_confirmation`` is called.

    Args:
        tool_name: The tool's name.

    Returns:
        ``Please approve or reject the tool call <name>().``
    """
    return f"Please approve or reject the tool call {tool_name}()."


def stale_hint(tool_name: str, age: float, max_age: float) -> str:
    """The hint of a request re-opened because its approval waited too long to act on.

    Args:
        tool_name: The tool's name.
        age: Seconds since the approval was decided.
        max_age: The policy's ``max_age``, in seconds.
    """
    return (
        f"The approval of {tool_name}() was decided {age:.0f} s before the call could run, "
        f"over its max_age of {max_age:g} s: approve or reject the call again."
    )


def confirmation_required_response(tool_name: str) -> dict[str, str]:
    """The function response the static gate gives the model while approval is pending.

    Args:
        tool_name: The tool's name.

    Returns:
        ``{"error": "tool <name> requires confirmation, please approve or reject"}``
    """
    return {"error": f"tool {tool_name} requires confirmation, please approve or reject"}


def rejected_response(tool_name: str) -> dict[str, str]:
    """The function response the static gate gives the model when the call was rejected.

    Args:
        tool_name: The tool's name.

    Returns:
        ``{"error": "tool <name> call is rejected"}``
    """
    return {"error": f"tool {tool_name} call is rejected"}


def call_digest(name: str | None, args: Mapping[str, Any] | None) -> str:
    """The digest that binds an approval to one call's name and arguments.

    It is the hex SHA-256 of the canonical JSON of ``{"args": args, "name": name}`` (sorted
    keys, no whitespace, ASCII escapes; a missing name counts as ``""`` and missing args as
    ``{}``), so the same call
    gives the same digest in any process and any key order.

    Args:
        name: The tool name of the original call.
        args: The original call's arguments.

    Returns:
        64 lowercase hex digits.

    Raises:
        TypeError: ``args`` holds a value JSON cannot encode.
    """
    canonical = json.dumps(
        {"args": dict(args or {}), "name": name or ""}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def confirmation_request_call(
    confirmation_id: str, original: types.FunctionCall, confirmation: ToolConfirmation
) -> types.FunctionCall:
    """The ``adk_request_confirmation`` call asking to approve ``original``.

    Args:
        confirmation_id: The request's own ``adk-`` id.
        original: The call waiting for approval.
        confirmation: The hint and payload the tool asked with.

    Returns:
        A call whose args are ``{"originalFunctionCall", "toolConfirmation", "callDigest"}``.
    """
    return types.FunctionCall(
        id=confirmation_id,
        name=REQUEST_CONFIRMATION_FUNCTION_NAME,
        args={
            "originalFunctionCall": {
                "id": original.id,
                "name": original.name,
                "args": dict(original.args or {}),
            },
            "toolConfirmation": confirmation.model_dump(
                mode="json", include={"hint", "confirmed", "payload"}
            ),
            "callDigest": call_digest(original.name, original.args),
        },
    )


def build_confirmation_request_event(
    function_calls: Sequence[types.FunctionCall],
    requested: Mapping[str, ToolConfirmation],
    confirmation_ids: Sequence[str],
    *,
    event_id: str,
    invocation_id: str,
    author: str,
    branch: str = "",
    isolation_scope: str = "",
    timestamp: float = 0.0,
) -> Event | None:
    """The event that asks a human to approve the calls of one step, if any asked.

    Args:
        function_calls: The model's calls of the step, in the model's order.
        requested: The step's merged ``requested_tool_confirmations`` (by function-call id).
        confirmation_ids: One ``adk-`` id per requesting call of ``function_calls``, in the
            model's call order;
            the workflow generates them (``workflow.uuid4()``) so a replay reuses them.
        event_id: The event id, decided by the workflow.
        invocation_id: The invocation the event belongs to.
        author: The agent whose tools requested confirmation.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.
        timestamp: POSIX seconds, decided by the workflow.

    Returns:
        An event with one ``adk_request_confirmation`` call per requesting call and those
        ids in ``long_running_tool_ids``; ``None`` when no call of the step asked (nothing
        requested, or only ids the step did not make, which are ignored as in ADK).

    Raises:
        ValueError: The number of ``confirmation_ids`` differs from the number of
            requesting calls, or an id lacks the ``adk-`` prefix (which keeps it out of
            model history).
    """
    requesting = [c for c in function_calls if c.id in requested]
    if not requesting and not confirmation_ids:
        return None
    if len(confirmation_ids) != len(requesting):
        raise ValueError(
            f"expected {len(requesting)} confirmation ids (one per requesting call), "
            f"got {len(confirmation_ids)}"
        )
    bad = [i for i in confirmation_ids if not i.startswith(ADK_ID_PREFIX)]
    if bad:
        raise ValueError(f"confirmation ids must start with {ADK_ID_PREFIX!r}: {bad}")
    return build_request_event(
        [
            confirmation_request_call(cid, call, requested[call.id or ""])
            for cid, call in zip(confirmation_ids, requesting, strict=True)
        ],
        event_id=event_id,
        invocation_id=invocation_id,
        author=author,
        branch=branch,
        isolation_scope=isolation_scope,
        timestamp=timestamp,
    )


def _reply_body(response: Mapping[str, Any] | None) -> dict[str, Any]:
    """The reply object in either format; ``{}`` for an empty or unreadable reply."""
    if not response:
        return {}
    if set(response) != {"response"}:
        return dict(response)
    inner = response["response"]
    if isinstance(inner, str):
        try:
            inner = json.loads(inner) if inner else {}
        except json.JSONDecodeError:
            return {}
    return dict(inner) if isinstance(inner, Mapping) else {}


def confirmation_reply(
    confirmed: bool, payload: Any, *, call_digest: str, expired: bool = False
) -> dict[str, Any]:
    """The response object of the ``adk_request_confirmation`` reply the runtime records.

    The one place the reply's keys are spelled (:func:`check_reply_digest` reads its
    ``callDigest``). Keys and key order are part of the stored events (and of the step
    inputs recorded in workflow histories), so they must not change.

    Args:
        confirmed: The user's decision.
        payload: The payload the user answered with.
        call_digest: The request's ``callDigest``, binding the reply to the call it is about.
        expired: Nobody answered before the request's deadline; ``confirmed`` and
            ``payload`` are then ignored.

    Returns:
        ``{"confirmed", "payload", "callDigest"}``, or ``{"confirmed": False, "expired":
        True, "callDigest"}`` for an expired request.
    """
    if expired:
        return {"confirmed": False, "expired": True, "callDigest": call_digest}
    return {"confirmed": confirmed, "payload": payload, "callDigest": call_digest}


EDITED_ARGS_KEY = "editedArgs"
"""In an approval's reply: the arguments the approver edited, which the call ran with."""
EDITED_DIGEST_KEY = "editedCallDigest"
"""In an approval's reply: :func:`call_digest` of the edited call (``callDigest`` stays the
request's, binding the reply to the call the approver was shown)."""


def edited_reply(tool: str, edited_args: Mapping[str, Any]) -> dict[str, Any]:
    """The keys an approval with edited arguments adds to its reply: the arguments, and the
    digest the call is re-bound to."""
    return {EDITED_ARGS_KEY: dict(edited_args), EDITED_DIGEST_KEY: call_digest(tool, edited_args)}


def _original_call(request: types.FunctionCall) -> types.FunctionCall:
    """The original call a confirmation request carries; raises when it carries none."""
    original = (request.args or {}).get("originalFunctionCall")
    if not isinstance(original, Mapping) or not original.get("id") or not original.get("name"):
        raise ConfirmationMismatchError(
            f"confirmation request {request.id!r} carries no usable originalFunctionCall"
        )
    args = original.get("args")
    return types.FunctionCall(
        id=original["id"], name=original["name"], args=dict(args) if args else {}
    )


def check_reply_digest(request: types.FunctionCall, reply: Mapping[str, Any] | None) -> None:
    """Refuse a reply that is not about the call the request asked about.

    Both sides must carry ``callDigest``: a request or reply without one is refused, so
    the binding to the call's arguments cannot be skipped by leaving the digest out.

    Args:
        request: The ``adk_request_confirmation`` call being answered.
        reply: The reply object: ``{"callDigest", ...}`` or ``{"response": "<that object as
            a JSON string>"}``; an empty or unreadable reply carries no digest.

    Raises:
        ConfirmationMismatchError: The request has no usable original call, or its own
            ``callDigest`` is missing or does not match it, or the reply's ``callDigest`` is
            missing, or it or the reply's ``originalFunctionCall`` names a different call.
    """
    original = _original_call(request)
    expected = call_digest(original.name, original.args)
    stored = (request.args or {}).get("callDigest")
    if stored is None:
        raise ConfirmationMismatchError(
            f"confirmation request {request.id!r} carries no callDigest, so no reply can be "
            f"bound to the arguments of {original.name}()"
        )
    if stored != expected:
        raise ConfirmationMismatchError(
            f"confirmation request {request.id!r} is inconsistent: its callDigest does not "
            f"match its originalFunctionCall {original.name}()"
        )
    body = _reply_body(reply)
    claimed = body.get("callDigest")
    if claimed is None:
        raise ConfirmationMismatchError(
            f"reply to confirmation {request.id!r} carries no callDigest; it must name the "
            f"digest {expected!r} of {original.name}() it approves or rejects"
        )
    if claimed != expected:
        raise ConfirmationMismatchError(
            f"reply to confirmation {request.id!r} approves a different call: callDigest "
            f"{claimed!r} does not match {expected!r} of {original.name}()"
        )
    claimed_call = body.get("originalFunctionCall")
    if claimed_call is None:
        return
    if (
        not isinstance(claimed_call, Mapping)
        or claimed_call.get("id") != original.id
        or claimed_call.get("name") != original.name
        or call_digest(original.name, claimed_call.get("args")) != expected
    ):
        raise ConfirmationMismatchError(
            f"reply to confirmation {request.id!r} names a different originalFunctionCall "
            f"than the request ({original.name}() with id {original.id!r})"
        )
