"""A session's events as ADK's eval sees them: one :class:`Invocation` per turn.

As google-adk 2.13's ``EvaluationGenerator.convert_events_to_eval_invocations``: events are
grouped by invocation id, in order; the user's message is the turn's ``user_content``; the
last final-response event with content is its ``final_response``; every other event with a
function call, a function response, text or inline data is an intermediate event (the final
event's content left out unless it holds calls, so its text is not counted twice).

One difference, for sessions recorded here: a turn's ``user_content`` is its first user
message. Answers to approvals and inputs are user events too (function responses), and ADK,
whose eval never answers one, would take the last of them instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from ..events import Event
from ..history import USER_AUTHOR
from .evalsets import Invocation, InvocationEvent, InvocationEvents

__all__ = ["session_invocations", "user_message"]


def user_message(event: Event) -> bool:
    """Whether ``event`` is a message the user wrote (not an answer to a request)."""
    return (
        event.author.lower() == USER_AUTHOR
        and event.content is not None
        and not event.isolation_scope
        and not event.function_responses()
    )


def _kept(event: Event) -> bool:
    return any(
        p.function_call or p.function_response or p.text or p.inline_data for p in event.parts()
    )


def _turn(invocation_id: str, events: Sequence[Event]) -> Invocation | None:
    message = next((e for e in events if user_message(e)), None)
    if message is None or message.content is None:
        return None
    final: Event | None = None
    kept: list[Event] = []
    for event in events:
        if event.author.lower() == USER_AUTHOR or not event.parts():
            continue
        if event.is_final_response():
            final = event
        if _kept(event):
            kept.append(event)
    return Invocation(
        invocation_id=invocation_id,
        user_content=message.content,
        final_response=final.content if final is not None else None,
        intermediate_data=InvocationEvents(
            invocation_events=[
                InvocationEvent(
                    author=e.author,
                    content=e.content if e is not final or e.function_calls() else None,
                    usage_metadata=e.usage_metadata,
                )
                for e in kept
            ]
        ),
        creation_timestamp=message.timestamp,
    )


def session_invocations(events: Sequence[Event]) -> list[Invocation]:
    """The session's turns, in order; invocations without a user message (a rewind, a
    compaction) are left out."""
    grouped: dict[str, list[Event]] = {}
    for event in events:
        if not event.partial:
            grouped.setdefault(event.invocation_id, []).append(event)
    turns = (_turn(invocation_id, group) for invocation_id, group in grouped.items())
    return [turn for turn in turns if turn is not None]


def content_text(content: types.Content | None) -> str:
    """The text parts of ``content``, joined without separator (thoughts left out)."""
    if content is None:
        return ""
    return "".join(p.text for p in content.parts or () if p.text and not p.thought)
