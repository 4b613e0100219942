"""``RunConfig``: an invocation's limits and switches, with the defaults every engine uses.

The client, the in-process runner, the CLI and the gateway start invocations with these
options, and the workflow's start input carries them; their defaults live here only.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .usage import check_token_budget

__all__ = ["Escalation", "RunConfig", "RunOptions", "with_options"]

Escalation = Literal["adk", "stop"]
"""What an escalation does; see :attr:`RunConfig.escalation`."""


class RunConfig(BaseModel):
    """Limits and switches for one invocation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=25, ge=1)
    """The most model calls an invocation makes before it stops."""
    token_budget: int | None = None
    """The most model tokens (as the models report them) the invocation may use; past it,
    it fails with ``TokenBudgetExceeded``. ``None``: no budget."""
    stream: bool = False
    """Model steps forward their text to the session's followers as it is produced (ADK's
    streaming mode SSE); history is the same but for this flag."""
    model_timeout_seconds: float = Field(default=120.0, gt=0)
    """Start-to-close timeout of each model step; also how long a step whose worker died
    waits before another worker retries it."""
    model_maximum_attempts: int = Field(default=10, ge=1)
    """How often a failing model step runs in all before the invocation fails."""
    tool_timeout_seconds: float = Field(default=300.0, gt=0)
    """Default start-to-close timeout of each tool call (a tool's own timeout wins)."""
    heartbeat_seconds: float = Field(default=20.0, gt=0)
    """Heartbeat timeout of model steps, and of tools that declare none: how soon a step
    learns the invocation was cancelled, and how soon a step whose worker died is retried."""
    continue_as_new_after_events: int | None = Field(default=None, ge=1)
    """Continue as a new run once a run's history has this many events (Temporal's own
    suggestion is honoured regardless); Temporal only."""
    priority: int | None = Field(default=None, ge=1, le=5)
    """Temporal's task priority of the invocation and its steps, 1 (first) to 5 (last;
    Temporal's default is 3): where workers or a model limit are the bottleneck, steps of
    an interactive invocation at 1 go ahead of a batch at 5. Temporal only."""
    pin_agent: bool = False
    """Run exactly the agent named at start. Otherwise, started at the root of its tree, the
    invocation runs the agent the conversation is with (a sub-agent transferred to earlier,
    ADK's runner rule)."""
    escalation: Escalation = "adk"
    """What an escalation (``EventActions.escalate``) does. ``"adk"``: ADK's rule — the
    escalating agent finishes its turn, then every loop agent around it stops; sequential
    agents run on. ``"stop"``: the escalating agent stops at once and control returns to
    its parent, which also ends a sequence (the rule before 2026-12)."""
    fairness_key: str | None = Field(default=None, min_length=1, max_length=64)
    """Temporal's fairness key (a tenant, a user): invocations of one key get their share of
    a busy queue, so one tenant's burst cannot starve the others. Temporal only; a
    self-hosted server needs ``matching.enableFairness``."""

    def options(self) -> RunConfig:
        """These options alone: a subclass (a workflow's start input) drops its own fields."""
        return RunConfig.model_validate(self.model_dump(include=set(RunConfig.model_fields)))

    @field_validator("token_budget")
    @classmethod
    def _budget(cls, value: int | None) -> int | None:
        check_token_budget(value)
        return value


class RunOptions(TypedDict, total=False):
    """:class:`RunConfig`'s fields as keyword arguments of ``start()``."""

    max_steps: int
    token_budget: int | None
    stream: bool
    model_timeout_seconds: float
    model_maximum_attempts: int
    tool_timeout_seconds: float
    heartbeat_seconds: float
    continue_as_new_after_events: int | None
    priority: int | None
    fairness_key: str | None
    pin_agent: bool
    escalation: Escalation


def with_options(config: RunConfig | None, options: RunOptions) -> RunConfig:
    """``config`` (the defaults when ``None``) with ``options`` replacing its fields.

    Raises:
        ValueError: An option is unknown or out of range (a pydantic ``ValidationError``).
    """
    base = config or RunConfig()
    return RunConfig.model_validate({**base.model_dump(), **options}) if options else base
