"""Estimated cost of model tokens: prices per million prompt and output tokens, by model.

The defaults are Google's published list prices for the Gemini API (standard tier, text,
prompts up to 200k tokens) as of 2026-01; prices change, so pass your own with
``--price PATTERN=PROMPT,OUTPUT`` (US dollars per million tokens; ``fnmatch`` patterns, the
first match wins). A model without a price (the scripted ones) costs nothing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from ..usage import TokenUsage

__all__ = ["DEFAULT_PRICES", "Price", "cost_of", "parse_price"]


class Price(BaseModel):
    """US dollars per million prompt tokens and per million output tokens."""

    prompt_per_million: float
    output_per_million: float

    def cost(self, usage: TokenUsage) -> float:
        """What ``usage`` costs at this price."""
        return (
            usage.prompt_tokens * self.prompt_per_million
            + usage.candidates_tokens * self.output_per_million
        ) / 1_000_000


DEFAULT_PRICES: Mapping[str, Price] = {
    "gemini-2.5-pro*": Price(prompt_per_million=1.25, output_per_million=10.0),
    "gemini-2.5-flash-lite*": Price(prompt_per_million=0.10, output_per_million=0.40),
    "gemini-2.5-flash*": Price(prompt_per_million=0.30, output_per_million=2.50),
    "gemini-2.0-flash-lite*": Price(prompt_per_million=0.075, output_per_million=0.30),
    "gemini-2.0-flash*": Price(prompt_per_million=0.10, output_per_million=0.40),
}
"""List prices of common Gemini models (see the module for their date)."""


def parse_price(text: str) -> tuple[str, Price]:
    """Read ``PATTERN=PROMPT,OUTPUT`` (dollars per million tokens).

    Raises:
        ValueError: The text is not of that shape or a price is negative.
    """
    pattern, sep, numbers = text.partition("=")
    parts = numbers.split(",")
    try:
        if not sep or not pattern or len(parts) != 2:
            raise ValueError
        prompt, output = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(
            f"a price looks like MODEL=PROMPT,OUTPUT in dollars per million tokens "
            f"(gemini-2.5-flash=0.30,2.50), got {text!r}"
        ) from None
    if prompt < 0 or output < 0:
        raise ValueError(f"a price cannot be negative, got {text!r}")
    return pattern, Price(prompt_per_million=prompt, output_per_million=output)


def cost_of(
    usage: Mapping[str, TokenUsage],
    model_of: Mapping[str, str],
    prices: Sequence[tuple[str, Price]],
) -> float:
    """What tokens spent by agents cost, each at its model's price.

    Args:
        usage: Tokens by agent name.
        model_of: Each agent's model.
        prices: ``(pattern, price)`` pairs, the first matching pattern wins.
    """
    total = 0.0
    for agent, spent in usage.items():
        model = model_of.get(agent, "")
        price = next((p for pat, p in prices if fnmatch.fnmatchcase(model, pat)), None)
        if price is not None:
            total += price.cost(spent)
    return total
