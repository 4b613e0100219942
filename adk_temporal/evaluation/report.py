"""A replay's report: per session what changed, and the totals, as JSON for CI.

Per session: the first divergence (the turn, and the call or the text where the candidate
first did otherwise), the calls added and dropped over the whole session (by name and
arguments), the calls no recorded call answered, the final responses' similarity (ADK's
``response_match_score``: ROUGE-1 F-measure, 1.0 for identical text, averaged over the
turns), and tokens and estimated cost before (as recorded) and after (as replayed). The
report holds no timing and no generated id, so the same replay gives the same JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..usage import TokenUsage

__all__ = ["Divergence", "ReplayReport", "SessionReplay", "TurnReplay"]


class Divergence(BaseModel):
    """Where a candidate first did otherwise than the record."""

    turn: int
    """The turn, counted from 1."""
    kind: Literal["call", "text"]
    """``call``: the tool calls differ (``recorded`` and ``candidate`` are the first calls
    that differ, or ``-`` for none); ``text``: same calls, another final response."""
    recorded: str
    candidate: str


class TurnReplay(BaseModel):
    """One turn, recorded and replayed."""

    message: str
    recorded_calls: list[str]
    candidate_calls: list[str]
    recorded_text: str
    candidate_text: str
    similarity: float
    status: str
    """How the candidate's invocation ended (``completed``, ``failed``, ``cancelled`` when
    it waited for an answer the record does not hold)."""


class SessionReplay(BaseModel):
    """One session's replay (see the module)."""

    app_name: str
    user_id: str
    session_id: str
    turns: list[TurnReplay] = Field(default_factory=list)
    first_divergence: Divergence | None = None
    calls_added: list[str] = Field(default_factory=list)
    calls_dropped: list[str] = Field(default_factory=list)
    unmatched_calls: list[str] = Field(default_factory=list)
    """Candidate calls no recorded call answered (answered with an error, or by the
    sandbox app)."""
    sandbox_calls: int = 0
    similarity: float = 0.0
    tokens_before: TokenUsage = Field(default_factory=TokenUsage)
    tokens_after: TokenUsage = Field(default_factory=TokenUsage)
    cost_before: float = 0.0
    cost_after: float = 0.0
    error: str | None = None

    @property
    def diverged(self) -> bool:
        """Whether the candidate did otherwise somewhere, or the replay failed."""
        return self.first_divergence is not None or self.error is not None


class ReplayReport(BaseModel):
    """Every replayed session, in the order asked, and the totals."""

    candidate: dict[str, Any]
    """What was replayed: the app, the changes and the seed."""
    sessions: list[SessionReplay]

    @property
    def diverged(self) -> int:
        """How many sessions diverged."""
        return sum(1 for s in self.sessions if s.diverged)

    def totals(self) -> dict[str, Any]:
        """Sessions, divergences, mean similarity, tokens and cost before and after."""
        count = len(self.sessions) or 1
        before = sum((s.tokens_before for s in self.sessions), TokenUsage())
        after = sum((s.tokens_after for s in self.sessions), TokenUsage())
        return {
            "sessions": len(self.sessions),
            "diverged": self.diverged,
            "errors": sum(1 for s in self.sessions if s.error is not None),
            "unmatched_calls": sum(len(s.unmatched_calls) for s in self.sessions),
            "mean_similarity": round(sum(s.similarity for s in self.sessions) / count, 6),
            "tokens_before": before.total_tokens,
            "tokens_after": after.total_tokens,
            "cost_before": round(sum(s.cost_before for s in self.sessions), 6),
            "cost_after": round(sum(s.cost_after for s in self.sessions), 6),
        }

    def as_json(self) -> dict[str, Any]:
        """The report as CI reads it: the candidate, the totals and every session."""
        return {
            "candidate": self.candidate,
            "totals": self.totals(),
            "sessions": [s.model_dump(mode="json") for s in self.sessions],
        }
