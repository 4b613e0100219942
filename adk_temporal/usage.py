"""Token usage: what an invocation's model steps cost, summed from the models' reports."""

from __future__ import annotations

from google.genai import types
from pydantic import BaseModel

__all__ = ["TokenUsage", "check_token_budget"]


def check_token_budget(budget: int | None) -> None:
    """Refuse a token budget below 1 before anything starts.

    Raises:
        ValueError: ``budget`` is less than 1.
    """
    if budget is not None and budget < 1:
        raise ValueError(f"token_budget must be at least 1 token or None, got {budget}")


class TokenUsage(BaseModel):
    """Prompt, candidate and total tokens, as the model's ``usage_metadata`` reports them.

    A model that reports no usage (a scripted one, say) counts nothing; ``total_tokens``
    falls back to prompt plus candidates when a model leaves it out.
    """

    prompt_tokens: int = 0
    candidates_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def of(cls, metadata: types.GenerateContentResponseUsageMetadata | None) -> TokenUsage:
        """The usage one model reply reports (all zero for ``None``)."""
        if metadata is None:
            return cls()
        prompt = metadata.prompt_token_count or 0
        candidates = metadata.candidates_token_count or 0
        return cls(
            prompt_tokens=prompt,
            candidates_tokens=candidates,
            total_tokens=metadata.total_token_count or prompt + candidates,
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            candidates_tokens=self.candidates_tokens + other.candidates_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )
