"""The markdown the Temporal UI shows as an invocation's current details.

While a run waits, it says what for and gives the exact commands that answer it, so an
operator who finds the run in the UI can approve it without reading any docs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from adk_temporal.workflows.messages import (
    CONFIRM_SIGNAL,
    RESUME_SIGNAL,
    AdkStatus,
    PendingRequest,
)

__all__ = ["render_details"]


def _call(request: PendingRequest) -> str:
    return f"{request.tool}({', '.join(f'{k}={v!r}' for k, v in request.args.items())})"


def _where(request: PendingRequest) -> str:
    return f" (agent `{request.agent}`, branch `{request.branch}`)" if request.branch else ""


def render_details(
    *,
    workflow_id: str,
    status: AdkStatus,
    agent: str,
    step: int,
    pending: Sequence[PendingRequest],
    final_text: str = "",
    error: str | None = None,
) -> str:
    """Markdown describing the run's state and, when it waits, how to answer it."""
    if status == "running":
        return f"**Running** `{agent}` · step {step}"
    if status in ("completed", "failed"):
        tail = final_text if status == "completed" else error or ""
        return f"**{status.capitalize()}** after {step} step(s). {tail}".strip()
    lines: list[str] = []
    for request in pending:
        if request.kind == "confirmation":
            body = json.dumps({"confirmation_id": request.id, "confirmed": True})
            lines += [
                f"**Waiting for approval** of `{_call(request)}`{_where(request)}: {request.hint}",
                f"- payload: `{json.dumps(request.payload, default=str)}`",
                f"- approve: `adk-temporal confirm '{workflow_id}' {request.id} --approve`",
                f"- or: `temporal workflow signal --workflow-id '{workflow_id}' "
                f"--name {CONFIRM_SIGNAL} --input '{body}'`",
            ]
        else:
            body = json.dumps({"interrupt_id": request.id, "input": "<value>"})
            lines += [
                f"**Waiting for input** to `{_call(request)}`{_where(request)}: {request.message}",
                f"- schema: `{json.dumps(request.input_schema)}`",
                f"- answer: `adk-temporal resume '{workflow_id}' {request.id} --input '<json>'`",
                f"- or: `temporal workflow signal --workflow-id '{workflow_id}' "
                f"--name {RESUME_SIGNAL} --input '{body}'`",
            ]
    return "\n".join(lines)
