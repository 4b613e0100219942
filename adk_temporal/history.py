"""Building the model's view of the conversation from a session's events.

:func:`build_contents` applies, in this order:

1. drop events without content;
2. branch filter (:func:`is_branch_visible`);
3. isolation-scope filter — strict equality: a scoped agent sees only its scope, an
   unscoped agent only unscoped events;
4. drop the runtime's request calls and their answers (``adk_request_confirmation``,
   ``adk_request_input``, ``adk_request_credential``) — the model never asked for them;
5. collapse resumed calls: when a call has a placeholder response and a later one, only the
   final response is sent, in the placeholder's place, so it stays next to its call;
6. events by other agents become user-role context (``[author] said: ...``);
7. blank function-call and function-response ids starting with ``adk-``.

Branch and scope decide only what the model sees; they never partition session state.
The input events are never mutated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from google.genai import types

from .events import (
    ADK_ID_PREFIX,
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    Event,
)

__all__ = ["USER_AUTHOR", "build_contents", "is_branch_visible"]

USER_AUTHOR = "user"
"""Author of the events a user writes: messages and answers to confirmation/input requests."""

# ADK clients write credential requests into shared sessions; filtering the name keeps such
# histories from leaking runtime calls into the model request.
_REQUEST_CREDENTIAL_FUNCTION_NAME = "adk_request_credential"

_RUNTIME_FUNCTION_NAMES = frozenset(
    {
        REQUEST_CONFIRMATION_FUNCTION_NAME,
        REQUEST_INPUT_FUNCTION_NAME,
        _REQUEST_CREDENTIAL_FUNCTION_NAME,
    }
)


def is_branch_visible(invocation_branch: str, event_branch: str) -> bool:
    """Whether an event on ``event_branch`` is visible to an invocation on ``invocation_branch``.

    Visible when either branch is empty, they are equal, or the event branch is a
    dot-bounded ancestor of the invocation branch. ``agent_0`` is therefore no ancestor of
    ``agent_00``, and ``a.b`` sees neither its child ``a.b.c`` nor its sibling ``a.c``.

    Args:
        invocation_branch: The branch of the agent whose request is being built.
        event_branch: The branch the event was recorded on.

    Returns:
        True when the event belongs in the agent's history.
    """
    if not invocation_branch or not event_branch or invocation_branch == event_branch:
        return True
    return invocation_branch.startswith(event_branch + ".")


def _is_empty_part(part: types.Part) -> bool:
    return not (
        part.text
        or part.inline_data
        or part.file_data
        or part.function_call
        or part.function_response
        or part.executable_code
        or part.code_execution_result
    )


def _is_runtime_part(part: types.Part) -> bool:
    call, response = part.function_call, part.function_response
    return (call is not None and call.name in _RUNTIME_FUNCTION_NAMES) or (
        response is not None and response.name in _RUNTIME_FUNCTION_NAMES
    )


def _keep_final_responses(
    visible: list[tuple[Event, list[types.Part]]],
) -> list[tuple[Event, list[types.Part]]]:
    """Send each call's last response once, at the position of its first response."""
    final: dict[str, types.Part] = {}
    for _, parts in visible:
        for part in parts:
            response = part.function_response
            if response is not None and response.id:
                final[response.id] = part
    sent: set[str] = set()
    result: list[tuple[Event, list[types.Part]]] = []
    for event, parts in visible:
        kept: list[types.Part] = []
        for part in parts:
            response = part.function_response
            if response is None or not response.id:
                kept.append(part)
            elif response.id not in sent:
                sent.add(response.id)
                kept.append(final[response.id])
        if kept:
            result.append((event, kept))
    return result


def _as_json(value: Any) -> str:
    # Other agents' results may hold values JSON cannot encode; their text is context only.
    return json.dumps(value, ensure_ascii=False, default=str)


def _as_context(author: str, parts: list[types.Part]) -> types.Content:
    """Another agent's event, retold to this agent as user-role context."""
    told: list[types.Part] = []
    for part in parts:
        if part.thought:
            continue
        if part.function_call is not None:
            call = part.function_call
            told.append(
                types.Part(
                    text=f"[{author}] called tool `{call.name}` with parameters: "
                    f"{_as_json(call.args or {})}"
                )
            )
        elif part.function_response is not None:
            response = part.function_response
            told.append(
                types.Part(
                    text=f"[{author}] `{response.name}` tool returned result: "
                    f"{_as_json(response.response or {})}"
                )
            )
        elif part.text:
            told.append(types.Part(text=f"[{author}] said: {part.text}"))
        else:
            told.append(_copy_part(part))
    return types.Content(role="user", parts=told)


def _copy_part(part: types.Part) -> types.Part:
    """A copy of ``part`` the caller may change freely without touching the event.

    Cheaper than ``model_copy(deep=True)``, which walks every one of genai's dozens of unset
    fields: the part and its call/response are copied shallowly, their JSON values deeply,
    and runtime-generated (``adk-``) ids are blanked on the way.
    """
    update: dict[str, Any] = {}
    call, response = part.function_call, part.function_response
    if call is not None:
        update["function_call"] = call.model_copy(
            update={"args": copy.deepcopy(call.args), "id": _model_id(call.id)}
        )
    if response is not None:
        update["function_response"] = response.model_copy(
            update={"response": copy.deepcopy(response.response), "id": _model_id(response.id)}
        )
    return part.model_copy(update=update)


def _model_id(call_id: str | None) -> str | None:
    """The id the model sees: runtime-generated ``adk-`` ids are blanked."""
    return None if call_id and call_id.startswith(ADK_ID_PREFIX) else call_id


def _own_content(event: Event, parts: list[types.Part]) -> types.Content:
    role = event.content.role if event.content is not None else None
    if not role:
        answers = any(p.function_response is not None for p in parts)
        role = "user" if event.author == USER_AUTHOR or answers else "model"
    # The parts are already valid; re-validating every step's whole history costs more than
    # the copy itself.
    return types.Content.model_construct(role=role, parts=[_copy_part(p) for p in parts])


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str = "",
    isolation_scope: str = "",
) -> list[types.Content]:
    """The contents to send to the model for ``agent_name``, from the session's events.

    Args:
        events: The session's events, oldest first (not mutated).
        agent_name: The agent the request is built for; events by any other author except
            ``user`` become user-role context.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.

    Returns:
        One content per remaining event, in event order.
    """
    visible: list[tuple[Event, list[types.Part]]] = []
    for event in events:
        parts = [p for p in event.parts() if not _is_empty_part(p)]
        if not parts:
            continue
        if not is_branch_visible(branch, event.branch):
            continue
        if event.isolation_scope != isolation_scope:
            continue
        parts = [p for p in parts if not _is_runtime_part(p)]
        if parts:
            visible.append((event, parts))

    contents: list[types.Content] = []
    for event, parts in _keep_final_responses(visible):
        if event.author in (agent_name, USER_AUTHOR):
            content = _own_content(event, parts)
        else:
            content = _as_context(event.author, parts)
        if content.parts:
            contents.append(content)
    return contents
