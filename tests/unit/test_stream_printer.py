"""How a terminal shows a streamed reply: pieces on one growing line, completed by the event."""

from __future__ import annotations

import io

from google.genai import types
from rich.console import Console

from adk_temporal.events import Event
from adk_temporal.render import StreamPrinter


def _event(event_id: str, text: str, *, partial: bool = False, author: str = "agent") -> Event:
    return Event(
        id=event_id,
        invocation_id="inv",
        author=author,
        partial=partial or None,
        attempt=1 if partial else None,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def _printed(*events: Event) -> list[str]:
    out = io.StringIO()
    printer = StreamPrinter(Console(file=out, width=200, color_system=None))
    for event in events:
        printer.feed(event)
    printer.close()
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_the_reply_completes_the_line_its_pieces_began() -> None:
    lines = _printed(
        _event("r", "Hello wor", partial=True),
        _event("r", "ld", partial=True),
        _event("r", "Hello world."),
    )
    assert lines == ["agent           Hello world."]


def test_an_event_stored_meanwhile_prints_alone_and_the_line_starts_again() -> None:
    lines = _printed(
        _event("r", "Hello", partial=True),
        _event("u", "a question", author="user"),
        _event("r", "Hello world."),
    )
    assert lines == [
        "agent           Hello",
        "user            a question",
        "agent           Hello world.",
    ]


def test_a_reply_that_replaced_its_pieces_ends_their_line_for_good() -> None:
    """A callback or a safety stop stored other text than was streamed: the streamed text is
    shown once, the stored reply after it, and later events never bring the old text back."""
    lines = _printed(
        _event("r", "Hello wor", partial=True),
        _event("r", "Redacted."),
        _event("n1", "next"),
        _event("n2", "after"),
    )
    assert lines == [
        "agent           Hello wor",
        "agent           Redacted.",
        "agent           next",
        "agent           after",
    ]
