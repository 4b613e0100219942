"""The markdown the Temporal UI shows as an invocation's current details.

While a run waits, its first line says what for (``waiting for approval: charge_card``),
then each request with the exact commands that answer it, so an operator who finds the run
in the UI can approve it without reading any docs.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime

from adk_temporal.flow.messages import (
    InvocationStatus,
    PendingRequest,
    RequestSummary,
    call_summary,
)
from adk_temporal.workflows.messages import CONFIRM_SIGNAL, RESUME_SIGNAL

__all__ = ["answer_commands", "render_details", "waiting_line"]


def _call(request: PendingRequest) -> str:
    return call_summary(request.tool, request.args)


def _where(request: PendingRequest) -> str:
    return f" (agent `{request.agent}`, branch `{request.branch}`)" if request.branch else ""


def answer_commands(
    workflow_id: str,
    request: PendingRequest | RequestSummary,
    address: str | None = None,
    namespace: str = "default",
) -> list[str]:
    """The two shell commands that answer ``request``: ``adk-temporal`` and ``temporal``.

    A confirmation is approved (use ``--reject`` / ``"confirmed": false`` to reject); an
    input request carries the placeholder ``<json>`` where the JSON value goes, unquoted, so
    a pasted object stays an object. Without ``address`` the commands rely on their
    defaults (``TEMPORAL_ADDRESS`` or ``localhost:7233``).
    """
    where = f" --address {shlex.quote(address)}" if address else ""
    if namespace != "default":
        where += f" --namespace {shlex.quote(namespace)}"
    wid = shlex.quote(workflow_id)
    if request.kind == "confirmation":
        body = json.dumps({"confirmation_id": request.id, "confirmed": True})
        ours = f"adk-temporal confirm {wid} {request.id} --approve{where}"
        name = CONFIRM_SIGNAL
    else:
        body = json.dumps({"interrupt_id": request.id, "input": _VALUE}).replace(
            json.dumps(_VALUE), "<json>"
        )
        ours = f"adk-temporal resume {wid} {request.id} --input '<json>'{where}"
        name = RESUME_SIGNAL
    signal = (
        f"temporal workflow signal --workflow-id {wid} --name {name} "
        f"--input {shlex.quote(body)}{where}"
    )
    return [ours, signal]


_VALUE = "\0value"  # stands for the answer while the JSON body is built; no id contains NUL


def waiting_line(pending: Sequence[PendingRequest | RequestSummary]) -> str:
    """What the run waits for in one line, as an operator scans it first: ``waiting for
    approval: charge_card``, ``waiting for input: ask_dates``, or both, by tool."""
    parts = []
    for kind, what in (("confirmation", "approval"), ("input", "input")):
        tools = list(dict.fromkeys(r.tool for r in pending if r.kind == kind))
        if tools:
            parts.append(f"{what}: {', '.join(tools)}")
    return "waiting for " + "; ".join(parts) if parts else "waiting"


def _policy(request: PendingRequest) -> list[str]:
    """What an approval policy adds to a request's details: votes, approvers, assignee,
    claim (none for a request without one)."""
    lines: list[str] = []
    if request.kind == "confirmation" and request.policy is not None:
        policy = request.policy
        voted = ", ".join(
            f"{v.by} {'approved' if v.approve else 'rejected'}" for v in request.votes
        )
        lines.append(
            f"votes: {len(request.votes)} of {policy.approvals}" + (f" ({voted})" if voted else "")
        )
        if policy.approvers:
            lines.append(
                f"approvers: {', '.join(policy.approvers)} (answer with `--as NAME --group GROUP`)"
            )
    if request.assignee:
        lines.append(f"assigned to: {request.assignee}")
    if request.claim is not None:
        until = datetime.fromtimestamp(request.claim.until, UTC)
        lines.append(f"claimed by {request.claim.by} until {until:%Y-%m-%d %H:%M:%S} UTC")
    return lines


def render_details(
    workflow_id: str,
    now: InvocationStatus,
    pending: Sequence[PendingRequest],
    *,
    address: str | None = None,
    namespace: str = "default",
    queue_note: str = "",
) -> str:
    """Markdown describing the run's state and, when it waits, how to answer it.

    The commands name ``address`` and ``namespace`` (the client's, passed at start), so
    they work as pasted on any deployment; refused answers are listed with their reasons.
    A running run adds ``queue_note``: where its steps run, and what to start when no
    worker polls that queue.
    """
    status = now.status
    if status == "running":
        running = f"**Running** `{now.agent}` · step {now.step}"
        return f"{running}\n\n{queue_note}" if queue_note else running
    if status in ("completed", "failed", "cancelled"):
        tail = now.final_text if status == "completed" else now.error or ""
        return f"**{status.capitalize()}** after {now.step} step(s). {tail}".strip()
    blocks: list[str] = [f"### {waiting_line(pending)}"] if pending else []
    for request in pending:
        ours, theirs = answer_commands(workflow_id, request, address, namespace)
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
        if request.expires_at is not None:
            when = datetime.fromtimestamp(request.expires_at, UTC)
            detail += f"\n- expires: {when:%Y-%m-%d %H:%M:%S} UTC"
        detail += "".join(f"\n- {line}" for line in _policy(request))
        # The blank line makes the lines below a markdown list rather than running text.
        blocks.append(f"{head}\n\n{detail}\n- {verb}: `{ours}`\n- or: `{theirs}`")
    if now.ignored_signals:
        refused = "\n".join(f"- `{line}`" for line in now.ignored_signals[-10:])
        blocks.append(f"**Refused answers** (they changed nothing):\n\n{refused}")
    return "\n\n".join(blocks)
