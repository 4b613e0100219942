"""The markdown the Temporal UI shows as an invocation's current details.

While a run waits, it says what for and gives the exact commands that answer it, so an
operator who finds the run in the UI can approve it without reading any docs.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from adk_temporal.flow.messages import InvocationStatus, PendingRequest
from adk_temporal.workflows.messages import CONFIRM_SIGNAL, RESUME_SIGNAL

__all__ = ["answer_commands", "render_details"]


def _call(request: PendingRequest) -> str:
    return f"{request.tool}({', '.join(f'{k}={v!r}' for k, v in request.args.items())})"


def _where(request: PendingRequest) -> str:
    return f" (agent `{request.agent}`, branch `{request.branch}`)" if request.branch else ""


def answer_commands(
    workflow_id: str,
    request: PendingRequest,
    address: str | None = None,
    namespace: str = "default",
) -> list[str]:
    """The two shell commands that answer ``request``: ``adk-temporal`` and ``temporal``.

    A confirmation is approved (use ``--reject`` / ``"confirmed": false`` to reject); an
    input request carries the placeholder ``<json>`` for the value. Without ``address``
    the commands rely on their defaults (``TEMPORAL_ADDRESS`` or ``localhost:7233``).
    """
    where = f" --address {shlex.quote(address)}" if address else ""
    if namespace != "default":
        where += f" --namespace {shlex.quote(namespace)}"
    wid = shlex.quote(workflow_id)
    if request.kind == "confirmation":
        body: dict[str, Any] = {"confirmation_id": request.id, "confirmed": True}
        ours = f"adk-temporal confirm {wid} {request.id} --approve{where}"
        name = CONFIRM_SIGNAL
    else:
        body = {"interrupt_id": request.id, "input": "<json>"}
        ours = f"adk-temporal resume {wid} {request.id} --input '<json>'{where}"
        name = RESUME_SIGNAL
    signal = (
        f"temporal workflow signal --workflow-id {wid} --name {name} "
        f"--input {shlex.quote(json.dumps(body))}{where}"
    )
    return [ours, signal]


def render_details(
    workflow_id: str, now: InvocationStatus, pending: Sequence[PendingRequest]
) -> str:
    """Markdown describing the run's state and, when it waits, how to answer it."""
    status = now.status
    if status == "running":
        return f"**Running** `{now.agent}` · step {now.step}"
    if status in ("completed", "failed"):
        tail = now.final_text if status == "completed" else now.error or ""
        return f"**{status.capitalize()}** after {now.step} step(s). {tail}".strip()
    blocks: list[str] = []
    for request in pending:
        ours, theirs = answer_commands(workflow_id, request)
        if request.kind == "confirmation":
            head = (
                f"**Waiting for approval** of `{_call(request)}`{_where(request)}: {request.hint}"
            )
            detail = f"- payload: `{json.dumps(request.payload, default=str)}`"
            verb = "approve"
        else:
            head = (
                f"**Waiting for input** to `{_call(request)}`{_where(request)}: {request.message}"
            )
            detail = f"- schema: `{json.dumps(request.input_schema)}`"
            verb = "answer"
        # The blank line makes the lines below a markdown list rather than running text.
        blocks.append(f"{head}\n\n{detail}\n- {verb}: `{ours}`\n- or: `{theirs}`")
    return "\n\n".join(blocks)
