"""``RetryConfig``: how often a failing node runs again, and how long it waits between.

The rules are ADK 2.13's (``google/adk/workflow/_retry_config.py`` and
``utils/_retry_utils.py``): 5 attempts unless told, only the listed exception classes (or
their subclasses, by class name) are retried, the delay doubles from 1 s up to 60 s, with a
jitter of ±100 % unless told otherwise. On a durable engine the wait is a timer that
survives a worker's loss, and the jitter comes from the engine's replayed random source.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, field_validator

from ..errors import WorkflowConfigurationError

__all__ = ["RetryConfig", "retry_delay", "should_retry"]


class RetryConfig(BaseModel):
    """When and how a failing node is retried (ADK 2's ``RetryConfig``).

    Attributes:
        max_attempts: Attempts in all, the first included (``None``: 5; 0 or 1: no retry).
        initial_delay: Seconds before the first retry (``None``: 1.0).
        max_delay: The longest wait between attempts (``None``: 60.0).
        backoff_factor: How the delay grows per attempt (``None``: 2.0).
        jitter: The random share of the delay, ±``jitter`` × delay (``None``: 1.0; 0: none).
        exceptions: The exception classes (or their names) that are retried; ``None``: all.
    """

    max_attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None
    backoff_factor: float | None = None
    jitter: float | None = None
    exceptions: list[str | type[BaseException]] | None = None

    @field_validator("exceptions", mode="before")
    @classmethod
    def _names(cls, value: Sequence[Any] | None) -> list[str] | None:
        if value is None:
            return None
        names: list[str] = []
        for item in value:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            else:
                raise WorkflowConfigurationError(
                    "exceptions must contain exception class names (str) or exception "
                    f"classes, got {type(item).__name__}: {item!r}"
                )
        return names


def should_retry(config: RetryConfig | None, error_names: Sequence[str], attempt: int) -> bool:
    """Whether a node whose attempt ``attempt`` (1-based) failed runs again.

    Args:
        config: The node's retry configuration (``None``: never retried).
        error_names: The names of the error's class and every class it inherits from.
        attempt: The attempt that failed.
    """
    if config is None:
        return False
    limit = config.max_attempts if config.max_attempts is not None else 5
    if attempt >= limit:
        return False
    return config.exceptions is None or not set(error_names).isdisjoint(config.exceptions)


def retry_delay(config: RetryConfig | None, attempt: int, draw: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` before the next one.

    Args:
        config: The node's retry configuration.
        attempt: The attempt that failed (1-based).
        draw: A uniform random number in [0, 1), from the engine's replayed source.
    """
    if config is None:
        return 1.0
    initial = config.initial_delay if config.initial_delay is not None else 1.0
    longest = config.max_delay if config.max_delay is not None else 60.0
    factor = config.backoff_factor if config.backoff_factor is not None else 2.0
    jitter = config.jitter if config.jitter is not None else 1.0
    delay = initial * factor ** max(0, attempt - 1)
    if jitter > 0.0:
        # As ADK: capped before the jitter, so the widest offset still lands on the cap.
        delay = min(delay, longest / (1.0 + jitter))
        delay = max(0.0, delay + (2.0 * draw - 1.0) * jitter * delay)
    return min(delay, longest)
