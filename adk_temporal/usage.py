"""Token usage: what an invocation's model steps cost, summed from the models' reports,
and the cumulative budgets that bound what a session, a user or an app may spend."""

from __future__ import annotations

from typing import Literal, TypeAlias

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_TOKENS",
    "SCOPES",
    "BudgetScope",
    "OverBudget",
    "TokenBudgets",
    "TokenGrant",
    "TokenUsage",
    "check_token_budget",
]

BudgetScope: TypeAlias = Literal["session", "user", "app"]
"""Whose spending a budget bounds: one session, one user of an app, or a whole app."""

SCOPES: tuple[BudgetScope, ...] = ("session", "user", "app")
"""Every scope, narrowest first: the order budgets are checked and reported in."""

MAX_TOKENS = 10**12
"""The most tokens one ledger entry counts: a step's spending, a grant, a reservation. A
trillion is far beyond any model call or sensible grant, and keeps the ledger's sums of
millions of entries within the 64-bit integers SQLite and PostgreSQL store."""


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


class TokenBudgets(BaseModel):
    """Cumulative token budgets, counted across invocations and continue-as-new in the
    session store's ledger; ``None`` leaves a scope unbounded.

    When a model step would start with a scope's spending at or over its budget (plus what
    was granted), the invocation pauses with an input request that grants more or refuses.
    A step reserves its worst case (its input, counted, plus its output cap) before it calls
    the model and settles at what the model reported, so steps running at once pass a
    budget by one step's reservation at most; a step that finds the rest of a budget
    reserved by others waits for them to settle.
    """

    model_config = ConfigDict(frozen=True)

    session: int | None = Field(default=None, gt=0)
    """Tokens one session may spend in all."""
    user: int | None = Field(default=None, gt=0)
    """Tokens one user may spend across all their sessions of the app."""
    app: int | None = Field(default=None, gt=0)
    """Tokens the whole app may spend."""
    default_output_cap: int = Field(default=65_536, gt=0, le=MAX_TOKENS)
    """The output tokens a step reserves when its agent sets no ``max_output_tokens`` (the
    most Gemini 2.5 models write); set ``max_output_tokens`` to reserve less."""

    def limit(self, scope: BudgetScope) -> int | None:
        """The budget of ``scope``, or ``None`` when it has none."""
        limit: int | None = getattr(self, scope)
        return limit

    def bounded(self) -> bool:
        """Whether any scope has a budget (else nothing needs counting)."""
        return any(self.limit(scope) is not None for scope in SCOPES)

    def crossed(
        self,
        used: dict[BudgetScope, int],
        granted: dict[BudgetScope, int],
        reserved: dict[BudgetScope, int] | None = None,
    ) -> OverBudget | None:
        """The narrowest scope whose spending (plus ``reserved``, the reservations of steps
        running now, when given) reached its budget plus its grants."""
        for scope in SCOPES:
            limit = self.limit(scope)
            held = reserved[scope] if reserved is not None else 0
            if limit is not None and used[scope] + held >= limit + granted[scope]:
                return OverBudget(
                    scope=scope, limit=limit + granted[scope], used=used[scope], reserved=held
                )
        return None


class OverBudget(BaseModel):
    """A budget reached: whose, how large with its grants, what was spent, and what steps
    running now hold reserved of it."""

    scope: BudgetScope
    limit: int
    used: int
    reserved: int = 0


class TokenGrant(BaseModel):
    """More tokens allowed for a scope, granted by answering a budget request ``id``."""

    id: str
    scope: BudgetScope
    tokens: int = Field(gt=0)
    """Checked against :data:`MAX_TOKENS` where the answer enters (the request's schema);
    not here, so that a grant a run recorded before the bound still replays."""
