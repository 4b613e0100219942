"""How a run is recorded for comparison: the stored events, reduced to what both must share.

Used on both sides (the ADK side's script imports it too, so it imports nothing of
either): ids and timestamps differ by nature, everything else is compared.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["event_record", "normal"]


def normal(value: Any) -> Any:
    """``value`` as JSON would carry it (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value, default=str))


def event_record(event: Any) -> dict[str, Any]:
    """One stored event as compared: author, node path, output, route, state, branch,
    error, and the function calls and responses it carries."""
    info = getattr(event, "node_info", None)
    record: dict[str, Any] = {"author": event.author, "path": info.path if info else ""}
    if event.output is not None:
        record["output"] = normal(event.output)
        record["output_for"] = list(info.output_for) if info else []
    delta = {k: v for k, v in event.actions.state_delta.items() if not k.startswith("temp:")}
    if delta:
        record["state_delta"] = normal(delta)
    if event.actions.route is not None:
        record["route"] = normal(event.actions.route)
    if event.branch:
        record["branch"] = event.branch
    if event.error_code:
        record["error"] = [event.error_code, event.error_message]
    parts = event.content.parts if event.content and event.content.parts else []
    for part in parts:
        if part.text:
            record.setdefault("text", []).append(part.text)
        if part.function_call:
            call = part.function_call
            record.setdefault("calls", []).append([call.name, call.id, normal(call.args)])
        if part.function_response:
            response = part.function_response
            record.setdefault("responses", []).append(
                [response.name, response.id, normal(response.response)]
            )
    return record
