"""Model traffic limits shared by every worker: requests per second and concurrent calls.

Model steps of a limited model run on a task queue of their own,
``<task queue>/models/<limit name>``; Temporal's matching service enforces the queue's
dispatch rate across every worker polling it, and each worker runs at most ``concurrency`` of
them at once. A limit therefore holds across processes and machines without a server of our
own. Workers that configure different rates for one queue leave the rate to whichever polled
last (Temporal keeps one rate per queue); a worker without the limit runs that model's steps
unlimited on the main queue, so give every worker of a deployment the same limits.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import AdkRequestError

__all__ = ["ModelLimit", "ModelLimitError", "limit_for", "model_queue", "parse_model_limit"]


class ModelLimitError(AdkRequestError, ValueError):
    """A model limit is malformed (an empty pattern, a rate or concurrency below its minimum)."""


_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ModelLimit:
    """A limit on the model steps of the models whose names match ``models`` (fnmatch).

    Args:
        models: A model-name pattern, e.g. ``gemini-*`` or ``gemini-2.5-flash``.
        requests_per_second: Model calls started per second, across all workers; ``None``:
            no rate.
        concurrency: Model calls running at once on one worker; ``None``: the worker's
            default.
        name: The limit's name (its task queue's last segment); from ``models`` when
            ``None``. Limits of the same name share one queue, rate and concurrency.

    Raises:
        ModelLimitError: The pattern is empty, the rate not positive, or the concurrency
            below 1.
    """

    models: str
    requests_per_second: float | None = None
    concurrency: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.models.strip():
            raise ModelLimitError("a model limit needs a model-name pattern")
        if self.requests_per_second is not None and self.requests_per_second <= 0:
            raise ModelLimitError(
                f"model limit {self.models!r}: requests_per_second must be above 0, got "
                f"{self.requests_per_second}"
            )
        if self.concurrency is not None and self.concurrency < 1:
            raise ModelLimitError(
                f"model limit {self.models!r}: concurrency must be at least 1, got "
                f"{self.concurrency}"
            )

    @property
    def group(self) -> str:
        """The name that keys the limit's task queue."""
        return self.name or _NAME.sub("_", self.models).strip("_-.") or "models"


def limit_for(limits: Sequence[ModelLimit], model: str) -> ModelLimit | None:
    """The first limit whose pattern matches ``model``, or ``None``."""
    return next((limit for limit in limits if fnmatch.fnmatchcase(model, limit.models)), None)


def model_queue(task_queue: str, group: str) -> str:
    """The task queue of a limit's model steps, beside the invocations' ``task_queue``."""
    return f"{task_queue}/models/{group}"


def parse_model_limit(spec: str) -> ModelLimit:
    """A limit from the worker CLI's ``PATTERN=RATE/s[,CONCURRENCY][@NAME]``.

    ``gemini-*=5/s`` limits every Gemini model to 5 calls per second in all;
    ``gemini-*=5/s,4`` adds at most 4 at once per worker; ``gemini-*=,4`` only the latter;
    ``@name`` names the limit.

    Raises:
        ModelLimitError: The spec does not have this shape.
    """
    pattern, sep, rest = spec.partition("=")
    rest, _, name = rest.partition("@")
    rate_text, _, concurrency_text = rest.partition(",")
    rate_text = rate_text.strip().removesuffix("/s")
    try:
        rate = float(rate_text) if rate_text else None
        concurrency = int(concurrency_text) if concurrency_text.strip() else None
    except ValueError:
        raise ModelLimitError(
            f"--model-limit {spec!r}: expected PATTERN=RATE/s[,CONCURRENCY][@NAME], e.g. "
            "'gemini-*=5/s,4'"
        ) from None
    if not sep or (rate is None and concurrency is None):
        raise ModelLimitError(
            f"--model-limit {spec!r}: expected PATTERN=RATE/s[,CONCURRENCY][@NAME], e.g. "
            "'gemini-*=5/s,4'"
        )
    return ModelLimit(
        models=pattern.strip(),
        requests_per_second=rate,
        concurrency=concurrency,
        name=name.strip() or None,
    )
