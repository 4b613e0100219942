"""The compaction step's input and result, as they cross history (see ``..compaction``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

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


class CompactionResult(BaseModel):
    """What the compaction step did, small: the summary itself stays in the session store."""

    compacted: bool = False
    event_id: str = ""
    covered_events: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """The summarizer's tokens (zero when an earlier attempt already stored the event)."""
