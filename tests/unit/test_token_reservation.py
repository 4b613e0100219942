"""What a model step reserves under cumulative budgets, and how a reservation is judged."""

from __future__ import annotations

from google.genai import types

from adk_temporal.models import LlmRequest
from adk_temporal.sessions import TokenTotals
from adk_temporal.sessions.ledger import judge_reservation
from adk_temporal.steps.reservation import input_token_bound, worst_case
from adk_temporal.usage import TokenBudgets


def _request(text: str, cap: int | None = None) -> LlmRequest:
    config = types.GenerateContentConfig(max_output_tokens=cap) if cap is not None else None
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return LlmRequest(model="m", contents=[content], generation_config=config)


def test_the_input_bound_counts_every_byte_of_the_text() -> None:
    """A token covers a byte or more, so the bound is at least the text's UTF-8 bytes."""
    text = "天气" * 1000
    assert input_token_bound(_request(text)) >= len(text.encode())


def test_the_worst_case_adds_the_output_cap_or_the_default_cap() -> None:
    """max_output_tokens bounds the output reserved; without it the budgets' default cap."""
    budgets = TokenBudgets(user=10, default_output_cap=5000)
    bound = input_token_bound(_request("hi"))
    assert worst_case(_request("hi", cap=20), budgets) == bound + 20
    assert worst_case(_request("hi"), budgets) == bound + 5000


def test_a_reservation_is_over_held_or_granted() -> None:
    """Spending alone at the budget is over; with reservations at it, held; else granted."""
    budgets = TokenBudgets(session=500)
    spent = TokenTotals(used={"session": 500, "user": 500, "app": 500})
    assert judge_reservation(budgets, spent).over is not None
    held = TokenTotals(reserved={"session": 500, "user": 500, "app": 500})
    judged = judge_reservation(budgets, held)
    assert judged.held is not None and (judged.held.used, judged.held.reserved) == (0, 500)
    granted = spent.model_copy(update={"granted": {"session": 1, "user": 0, "app": 0}})
    assert judge_reservation(budgets, granted).reserved
