"""The compaction step's input and result, as they cross history (see ``..compaction``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..budgets import Budgets
from ..compaction import EventsCompactionConfig
from ..usage import TokenUsage
from .messages import InvocationRef

__all__ = ["CompactionInput", "CompactionResult"]


class CompactionInput(BaseModel):
    """The compaction step's input: where, the config, and the ids the workflow decided."""

    ref: InvocationRef
    config: EventsCompactionConfig
    event_id: str
    """The compaction event's id: a retried step finds its event stored and stops."""
    timestamp: float = 0.0
    """``0.0`` in what a baseline run's workflow sends: the time the step was scheduled."""
    budgets: Budgets = Field(default_factory=Budgets)
    """Bounds the summary as a model reply is bounded (``model_reply_bytes``)."""
    timeout_seconds: float | None = None
    """The step's timeout (the invocation's ``model_timeout_seconds``): the summarizer gets
    most of it, then its compaction counts as failed. ``None`` in steps recorded before."""


class CompactionResult(BaseModel):
    """What the compaction step did, small: the summary itself stays in the session store."""

    compacted: bool = False
    event_id: str = ""
    covered_events: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """The summarizer's tokens (zero when an earlier attempt already stored the event)."""
    failed: str | None = None
    """Why the summarizer failed, when it did: the session holds a note of it, and the
    turn goes on uncompacted."""
