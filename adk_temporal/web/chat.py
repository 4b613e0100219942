"""A session's events as the console's chat shows them: turns, tool calls, approvals.

The function calls and responses the runtime itself records to pause and answer
(``adk_request_confirmation``, ``adk_request_input``) are shown as what they mean — an
approval asked, approved or rejected — and as themselves only when raw events are asked for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from google.genai import types

from ..confirmation import EDITED_ARGS_KEY
from ..events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from ..flow.messages import call_summary
from ..flow.replies import GRANT_REPLY_KEY, TRAIL_KEY, VOTES_KEY
from ..flow.requests import ANSWERED_KEY

__all__ = ["CardKind", "ChatCard", "chat_cards", "clipped_json"]

CardKind = Literal[
    "user", "agent", "call", "result", "approval", "answer", "input", "error", "saved", "raw"
]
_INTERNAL = (REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME)
_CLIP = 2000


@dataclass(frozen=True)
class ChatCard:
    """One card of the chat: what it is, its heading and its body (text or JSON)."""

    kind: CardKind
    title: str
    body: str = ""


def clipped_json(value: Any, limit: int = _CLIP) -> str:
    """``value`` as indented JSON, cut after ``limit`` characters with ``…``."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _asked(call: types.FunctionCall) -> ChatCard:
    args = dict(call.args or {})
    if call.name == REQUEST_INPUT_FUNCTION_NAME:
        return ChatCard("input", f"Input asked: {args.get('message', '')}".rstrip(": "))
    original = args.get("originalFunctionCall") or {}
    confirmation = args.get("toolConfirmation") or {}
    call_text = call_summary(str(original.get("name", "?")), dict(original.get("args") or {}))
    payload = confirmation.get("payload")
    body = call_text if payload is None else f"{call_text}\n{clipped_json(payload)}"
    return ChatCard("approval", f"Approval asked: {confirmation.get('hint', '')}", body)


def _answerer(response: dict[str, Any]) -> str:
    """Who answered and through what, as the run recorded it ("" for older answers)."""
    record = response.get(ANSWERED_KEY)
    if not isinstance(record, dict):
        return ""
    who = f"by {record['by']}" if record.get("by") else "by an unnamed sender"
    via = f" via {record['channel']}" if record.get("channel") else ""
    at = record.get("at")
    when = (
        f" at {datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC"
        if isinstance(at, int | float)
        else ""
    )
    return f"{who}{via}{when}"


def _policy_lines(response: dict[str, Any]) -> list[str]:
    """A reply's trail, its votes and the grant it gave, a line each."""
    lines = [
        f"{step.get('action')} by {step.get('by') or 'the runtime'}"
        + (f" → {step['assignee']}" if step.get("assignee") else "")
        for step in response.get(TRAIL_KEY) or []
        if isinstance(step, dict)
    ]
    lines += [
        f"vote: {vote.get('decision')} by {vote.get('by')} via {vote.get('channel')}"
        for vote in response.get(VOTES_KEY) or []
        if isinstance(vote, dict)
    ]
    grant = response.get(GRANT_REPLY_KEY)
    if isinstance(grant, dict):
        where = f" where {grant['where']}" if grant.get("where") else ""
        lines.append(f"grant {grant.get('id')}: {grant.get('max_calls')} more calls{where}")
    return lines


def _answered(reply: types.FunctionResponse) -> ChatCard:
    response = dict(reply.response or {})
    lines = [line for line in (_answerer(response),) if line] + _policy_lines(response)
    if reply.name == REQUEST_INPUT_FUNCTION_NAME:
        lines.append(clipped_json(response.get("input", response)))
        return ChatCard("answer", "Answered", "\n".join(lines))
    if response.get("expired"):
        return ChatCard("answer", "Expired unanswered")
    decision = "Approved" if response.get("confirmed") else "Rejected"
    edited = response.get(EDITED_ARGS_KEY)
    if isinstance(edited, dict):
        lines.append(f"with edited arguments {clipped_json(edited)}")
    payload = response.get("payload")
    if payload is not None:
        lines.append(clipped_json(payload))
    return ChatCard("answer", decision, "\n".join(lines))


def _part_cards(author: str, part: types.Part, raw: bool) -> list[ChatCard]:
    cards: list[ChatCard] = []
    if part.text and not part.thought:
        cards.append(ChatCard("user" if author == "user" else "agent", author, part.text))
    if part.function_call is not None:
        call = part.function_call
        if call.name in _INTERNAL:
            cards.append(_asked(call))
            if raw:
                cards.append(ChatCard("raw", f"{call.name}(…)", clipped_json(call.args or {})))
        else:
            cards.append(ChatCard("call", f"Tool call: {call.name}", clipped_json(call.args or {})))
    if part.function_response is not None:
        reply = part.function_response
        if reply.name in _INTERNAL:
            cards.append(_answered(reply))
            if raw:
                cards.append(ChatCard("raw", f"{reply.name} →", clipped_json(reply.response)))
        else:
            cards.append(
                ChatCard("result", f"Tool result: {reply.name}", clipped_json(reply.response))
            )
    return cards


def chat_cards(event: Event, *, raw: bool = False) -> list[ChatCard]:
    """The cards of ``event``; with ``raw``, the runtime's own calls and responses too."""
    cards = [c for part in event.parts() for c in _part_cards(event.author, part, raw)]
    if event.error_message or event.error_code:
        cards.append(
            ChatCard("error", f"Error {event.error_code or ''}".strip(), event.error_message or "")
        )
    if event.actions.artifact_delta:
        saved = ", ".join(f"{k} (version {v})" for k, v in event.actions.artifact_delta.items())
        cards.append(ChatCard("saved", f"Saved {saved}"))
    if raw and event.actions.state_delta:
        cards.append(ChatCard("raw", "state_delta", clipped_json(event.actions.state_delta)))
    return cards
