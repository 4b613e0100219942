"""The input request an invocation opens when a cumulative token budget is reached.

A model step that would start over a budget (:class:`~adk_temporal.usage.TokenBudgets`)
calls no model and answers :class:`~.messages.OverBudgetStep`; the flow then pauses on this
request. Any answer path can answer it — the CLI's ``resume``, the gateway, a signal — with
``{"allow": N}``: N more tokens for the budget's scope (an integer, at most
:data:`~adk_temporal.usage.MAX_TOKENS`), or 0 to end the invocation.
"""

from __future__ import annotations

from typing import Any

from adk_temporal.events import InputRequest
from adk_temporal.usage import MAX_TOKENS

from .messages import OverBudgetStep, PendingInput

__all__ = ["BUDGET_REQUEST_PREFIX", "BUDGET_SCHEMA", "BUDGET_TOOL", "allowed", "budget_request"]

BUDGET_TOOL = "adk_token_budget"
"""The tool name budget requests are listed under (no such tool runs)."""

BUDGET_REQUEST_PREFIX = "adk-budget-"
"""How a budget request's id begins; the rest is a new id of the workflow's."""

BUDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "integer", "minimum": 0, "maximum": MAX_TOKENS}},
    "required": ["allow"],
    "additionalProperties": False,
}
"""The answer's shape: how many more tokens to allow, at most :data:`MAX_TOKENS` (a larger
number — ``10**30``, ``2**63``, ``1e30`` — is refused as it arrives, typed, and changes
nothing); 0 refuses."""


def budget_request(
    over: OverBudgetStep,
    request_id: str,
    *,
    agent: str,
    branch: str,
    now: float,
) -> tuple[PendingInput, InputRequest]:
    """The request asking whether to allow more tokens than ``over``'s budget, as the
    request book lists it and as the session records it."""
    held = f", {over.reserved} reserved by steps running now" if over.reserved else ""
    message = (
        f"the token budget of the {over.scope} ({over.limit} tokens) is reached: "
        f'{over.used} used{held}. Allow more? Answer {{"allow": N}} for N more tokens, '
        '{"allow": 0} to end the invocation'
    )
    request = InputRequest(
        interrupt_id=request_id,
        function_call_id=request_id,
        message=message,
        input_schema=BUDGET_SCHEMA,
    )
    pending = PendingInput(
        kind="input",
        id=request_id,
        function_call_id=request_id,
        tool=BUDGET_TOOL,
        args=over.model_dump(exclude={"kind"}, exclude_defaults=True),
        message=message,
        input_schema=BUDGET_SCHEMA,
        agent=agent,
        branch=branch,
        opened_at=now,
    )
    return pending, request


def allowed(answer: Any) -> int:
    """The tokens an answer allows (the schema was checked when it arrived); 0 refuses."""
    return int(answer["allow"]) if isinstance(answer, dict) else 0
