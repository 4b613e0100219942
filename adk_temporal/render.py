"""What the CLI and the demo print: events, pending requests with their commands, UI links."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from google.genai import types
from rich.text import Text

from .events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from .flow.messages import PendingRequest, RequestSummary
from .workflows.details import answer_commands

__all__ = ["event_lines", "part_bytes", "request_lines", "summary_lines", "workflows_url"]

_MAX_ARGS_CHARS = 160


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


def event_lines(event: Event, *, width: int = 14) -> list[Text]:
    """One line per part of ``event`` plus its deltas, for a terminal.

    Text parts print as they are, function calls as ``→ name(args)``, responses as
    ``← name {...}``, then ``state_delta``, ``artifact_delta`` and any error.
    """
    author = event.author.ljust(width)
    lines: list[Text] = []

    def add(body: str, style: str = "") -> None:
        prefix = author if not lines else " " * len(author)
        lines.append(Text.assemble((prefix, "bold cyan"), "  ", (body, style)))

    for part in event.parts():
        if part.function_call is not None:
            add(_call_line(part.function_call), "yellow")
        elif part.function_response is not None:
            response = part.function_response
            add(f"← {response.name} {_compact(response.response)}", "green")
        elif part.text and not part.thought:
            add(part.text)
    if event.actions.state_delta:
        add(f"state_delta {_compact(event.actions.state_delta)}", "magenta")
    if event.actions.artifact_delta:
        add(f"artifact_delta {_compact(event.actions.artifact_delta)}", "magenta")
    if event.error_code or event.error_message:
        add(f"error {event.error_code or ''}: {event.error_message or ''}", "bold red")
    if not lines:
        add("(no content)", "dim")
    return lines


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


def summary_lines(
    workflow_id: str, request: RequestSummary, address: str, namespace: str = "default"
) -> list[Text]:
    """What a paused request asks, as the run published it, and the commands that answer."""
    if request.kind == "confirmation":
        lines = [Text.assemble(("waiting for approval ", "bold yellow"), f"of {request.call}")]
        lines.append(Text(f"  id       {request.id}"))
        lines.append(Text(f"  hint     {request.hint}"))
        lines.append(
            Text(f"  payload  {request.payload_size} bytes, sha256 {request.payload_digest}…")
        )
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
