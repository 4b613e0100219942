"""``StepsUnderWay``: the run's steps that may open a request, counted while they run.

A step's result can open a request (a tool asks for approval, a graph node for input) that
is visible before the workflow task that applies the result: the step stored its event,
and a query answered from the whole history already applies it. An answer sent on that
sight comes in the same workflow task as the result, and Temporal's Python SDK runs an
update's validator before it resolves the activity. While a step runs, the checked update
lets an answer to a request never opened through to its handler, which checks it again
once a step ended or a moment passed (a bounded number per run: each is in history).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

__all__ = ["StepsUnderWay", "under_way"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class StepsUnderWay:
    """How many of the run's steps that may open a request run now, and ended so far."""

    def __init__(self) -> None:
        self.running = 0
        self.ended = 0

    @contextmanager
    def one(self) -> Iterator[None]:
        """Count one step while the block runs."""
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self.ended += 1


class _Stepping(Protocol):
    steps: StepsUnderWay


_S = TypeVar("_S", bound=_Stepping)


def under_way(
    step: Callable[Concatenate[_S, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[_S, _P], Coroutine[Any, Any, _T]]:
    """Count the executor method ``step`` in its executor's ``steps`` while it runs."""

    @functools.wraps(step)
    async def counted(executor: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with executor.steps.one():
            return await step(executor, *args, **kwargs)

    return counted
