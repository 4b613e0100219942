"""What the CLI and the demo print: events, pending requests with their commands, UI links."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from google.genai import types
from rich.console import Console
from rich.text import Text

from .events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from .flow.messages import PendingRequest, RequestSummary
from .workflows.details import answer_commands

__all__ = [
    "StreamPrinter",
    "event_json",
    "event_lines",
    "part_bytes",
    "request_lines",
    "summary_lines",
    "workflows_url",
]

_MAX_ARGS_CHARS = 160


def event_json(event: Event) -> dict[str, Any]:
    """An event as ``--json`` prints it and the gateway's event streams send it."""
    return event.model_dump(mode="json", exclude_none=True)


def _compact(value: Any, limit: int = _MAX_ARGS_CHARS) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    return _clip(text, limit)


def _clip(text: str, limit: int = _MAX_ARGS_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(name: str, args: dict[str, Any] | None) -> str:
    """``name(k='v', n=1)``: the shape of the activity summaries in the Temporal UI."""
    return _clip(f"{name}({', '.join(f'{k}={v!r}' for k, v in (args or {}).items())})")


def _call_line(call: types.FunctionCall) -> str:
    args = dict(call.args or {})
    if call.name == REQUEST_CONFIRMATION_FUNCTION_NAME:
        original = args.get("originalFunctionCall") or {}
        hint = (args.get("toolConfirmation") or {}).get("hint", "")
        target = _call(str(original.get("name", "?")), original.get("args"))
        return f"→ {call.name} {call.id} for {target}: {hint}"
    if call.name == REQUEST_INPUT_FUNCTION_NAME:
        return f"→ {call.name} {call.id}: {args.get('message', '')}"
    return f"→ {_call(call.name or '?', args)}"


def event_lines(event: Event, *, width: int = 14, streamed: bool = False) -> list[Text]:
    """One line per part of ``event`` plus its deltas, for a terminal.

    Text parts print as they are, function calls as ``→ name(args)``, responses as
    ``← name {...}``, then ``state_delta``, ``artifact_delta`` and any error. With
    ``streamed`` the text was already shown as it came: only the other lines are given.
    """
    author = event.author.ljust(width)
    lines: list[Text] = []

    def add(body: str, style: str = "") -> None:
        prefix = author if not lines and not streamed else " " * len(author)
        lines.append(Text.assemble((prefix, "bold cyan"), "  ", (body, style)))

    for part in event.parts():
        if part.function_call is not None:
            add(_call_line(part.function_call), "yellow")
        elif part.function_response is not None:
            response = part.function_response
            add(f"← {response.name} {_compact(response.response)}", "green")
        elif part.text and not part.thought and not streamed:
            add(part.text)
    if event.actions.state_delta:
        add(f"state_delta {_compact(event.actions.state_delta)}", "magenta")
    if event.actions.artifact_delta:
        add(f"artifact_delta {_compact(event.actions.artifact_delta)}", "magenta")
    if event.error_code or event.error_message:
        add(f"error {event.error_code or ''}: {event.error_message or ''}", "bold red")
    if not lines and not streamed:
        add("(no content)", "dim")
    return lines


class StreamPrinter:
    """Prints events for a terminal, a streamed reply's text as it arrives.

    Pieces of one model event print on one growing line; the event itself then adds only
    what the pieces did not show (the rest of its text, calls, deltas, errors). A retried
    step's pieces start a new line marked as a retry. An event that arrives while the line
    grows (the store is polled, the pieces are pushed: one stored just before the reply can
    come after its first pieces) prints on its own line, and the text so far starts again.

    Args:
        console: Where to print.
        width: The author column's width, as :func:`event_lines` uses it.
    """

    def __init__(self, console: Console, *, width: int = 14) -> None:
        self._console = console
        self._width = width
        self._streaming: tuple[str, int | None] | None = None
        self._shown = ""
        self._author = ""

    def feed(self, event: Event) -> None:
        """Print ``event``: a piece continues its line, a final event completes it."""
        if event.partial:
            key = (event.id, event.attempt)
            if key != self._streaming:
                retry = self._streaming is not None and self._streaming[0] == event.id
                self._end_line()
                self._start_line(key, event.author, "(retry) " if retry else "")
            self._write(event.text())
            return
        if self._streaming is not None and self._streaming[0] == event.id:
            text = event.text()
            if text.startswith(self._shown):
                self._write(text[len(self._shown) :])
                self._end_line()
                for line in event_lines(event, width=self._width, streamed=True):
                    self._console.print(line)
                return
        interrupted, shown, author = self._streaming, self._shown, self._author
        self._end_line()
        for line in event_lines(event, width=self._width):
            self._console.print(line)
        # The event that supersedes the pieces ends their line for good, even when its
        # text is not theirs (a callback replaced the reply, a safety stop emptied it).
        if interrupted is not None and interrupted[0] != event.id:
            self._start_line(interrupted, author, "")
            self._write(shown)

    def close(self) -> None:
        """End a line left open by pieces whose event never came."""
        self._end_line()

    def _start_line(self, key: tuple[str, int | None], author: str, label: str) -> None:
        name = Text(author.ljust(self._width), style="bold cyan")
        self._console.print(name, "  ", Text(label, style="dim"), sep="", end="")
        self._streaming, self._shown, self._author = key, "", author

    def _write(self, text: str) -> None:
        self._shown += text
        self._console.print(Text(text), end="")

    def _end_line(self) -> None:
        if self._streaming is not None:
            self._console.print()
            self._streaming, self._shown = None, ""


def request_lines(
    workflow_id: str, request: PendingRequest, address: str, namespace: str = "default"
) -> list[Text]:
    """What a paused request asks and the exact commands that answer it."""
    call = _call(request.tool, request.args)
    lines: list[Text] = []
    if request.kind == "confirmation":
        lines.append(Text.assemble(("waiting for approval ", "bold yellow"), f"of {call}"))
        lines.append(Text(f"  id       {request.id}"))
        lines.append(Text(f"  hint     {request.hint}"))
        lines.append(Text(f"  payload  {_compact(request.payload, 400)}"))
        labels = ("approve  ", "or       ")
    else:
        lines.append(Text.assemble(("waiting for input ", "bold yellow"), f"to {call}"))
        lines.append(Text(f"  id       {request.id}"))
        lines.append(Text(f"  message  {request.message}"))
        lines.append(Text(f"  schema   {_compact(request.input_schema, 400)}"))
        labels = ("answer   ", "or       ")
    if request.branch:
        lines.insert(2, Text(f"  agent    {request.agent} (branch {request.branch})"))
    for label, command in zip(
        labels, answer_commands(workflow_id, request, address, namespace), strict=True
    ):
        lines.append(Text.assemble(f"  {label}", (command, "bold")))
    return lines


def _preview_lines(request: RequestSummary) -> list[Text]:
    """A published confirmation's arguments and payload, as far as the run published them."""
    lines = [] if request.args is None else [Text(f"  args     {_compact(request.args, 400)}")]
    preview = request.payload_preview.replace("\n", "\n           ")
    lines.append(Text(f"  payload  {preview}" if preview else "  payload  (not published)"))
    lines.append(Text(f"           {request.payload_size} bytes, sha256 {request.payload_digest}…"))
    return lines


def _inbox_lines(request: RequestSummary) -> list[Text]:
    """A published request's votes, approvers, assignee and claim, as far as it has them."""
    lines: list[Text] = []
    if request.kind == "confirmation" and (request.approvals > 1 or request.votes):
        voted = ", ".join(f"{v.by} {v.decision}" for v in request.votes)
        lines.append(
            Text(f"  votes    {len(request.votes)} of {request.approvals} {voted}".rstrip())
        )
    if request.approvers:
        lines.append(Text(f"  approve  {', '.join(request.approvers)} (--as NAME --group GROUP)"))
    if request.assignee:
        lines.append(Text(f"  assigned {request.assignee}"))
    if request.claimed_by and request.claimed_until:
        until = datetime.fromtimestamp(request.claimed_until, UTC)
        lines.append(
            Text(f"  claimed  by {request.claimed_by} until {until:%Y-%m-%d %H:%M:%S} UTC")
        )
    return lines


def summary_lines(
    workflow_id: str, request: RequestSummary, address: str, namespace: str = "default"
) -> list[Text]:
    """What a paused request asks, as the run published it, and the commands that answer."""
    if request.kind == "confirmation":
        lines = [Text.assemble(("waiting for approval ", "bold yellow"), f"of {request.call}")]
        lines.append(Text(f"  id       {request.id}"))
        lines.append(Text(f"  hint     {request.hint}"))
        lines.extend(_preview_lines(request))
        labels = ("approve  ", "or       ")
    else:
        lines = [Text.assemble(("waiting for input ", "bold yellow"), f"to {request.call}")]
        lines.append(Text(f"  id       {request.id}"))
        lines.append(Text(f"  message  {request.message}"))
        labels = ("answer   ", "or       ")
    if request.branch:
        lines.insert(2, Text(f"  agent    {request.agent} (branch {request.branch})"))
    if request.expires_at is not None:
        when = datetime.fromtimestamp(request.expires_at, UTC)
        lines.append(Text(f"  expires  {when:%Y-%m-%d %H:%M:%S} UTC"))
    lines.extend(_inbox_lines(request))
    for label, command in zip(
        labels, answer_commands(workflow_id, request, address, namespace), strict=True
    ):
        lines.append(Text.assemble(f"  {label}", (command, "bold")))
    return lines


def workflows_url(ui_url: str, query: str, namespace: str = "default") -> str:
    """The Temporal UI's workflow list filtered by a visibility ``query``."""
    return f"{ui_url}/namespaces/{quote(namespace)}/workflows?query={quote(query)}"


def part_bytes(part: types.Part) -> bytes:
    """The content of an artifact part: its text as UTF-8, or its inline bytes."""
    if part.text is not None:
        return part.text.encode()
    if part.inline_data is not None:
        return part.inline_data.data or b""
    return b""
