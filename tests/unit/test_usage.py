"""Token usage: one reply's report, sums, and the budget's own validation."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_temporal.usage import TokenUsage, check_token_budget


def test_usage_of_a_reply_and_the_sum_of_several() -> None:
    """A reply's counts are read as reported; a missing total is prompt plus candidates."""
    reported = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=100, candidates_token_count=20, total_token_count=130
    )
    no_total = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=7, candidates_token_count=3
    )
    assert TokenUsage.of(None) == TokenUsage()
    assert TokenUsage.of(reported) == TokenUsage(
        prompt_tokens=100, candidates_tokens=20, total_tokens=130
    )
    assert TokenUsage.of(no_total).total_tokens == 10
    total = TokenUsage.of(reported) + TokenUsage.of(no_total)
    assert total == TokenUsage(prompt_tokens=107, candidates_tokens=23, total_tokens=140)


@pytest.mark.parametrize("budget", [0, -5])
def test_a_token_budget_below_one_is_refused(budget: int) -> None:
    """A budget of no tokens could never let a step run: refused before anything starts."""
    with pytest.raises(
        ValueError, match=f"token_budget must be at least 1 token or None, got {budget}"
    ):
        check_token_budget(budget)
    check_token_budget(None)
    check_token_budget(1)
