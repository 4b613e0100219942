"""A graph run's scheduling state, and the form it is carried in across continue-as-new.

The state is ADK's ``_LoopState`` (``google/adk/workflow/_workflow.py``). Its carried form
holds names, counters and small values only: each node's pending starts and run count, which
nodes completed with what output (kept only where a join or the graph's end still reads
it), the joins' arrivals, and the nodes paused for answers with the request ids they wait
on. The requests themselves travel in the book's own carry; the events are in the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from .node_values import NodeValue

__all__ = [
    "CarriedPause",
    "GraphCarry",
    "Loop",
    "NodeRun",
    "NodeStatus",
    "Trigger",
]

NodeStatus: TypeAlias = Literal["pending", "running", "waiting", "done", "failed"]
"""Where a node of a graph stands, as ``show`` and the console list it."""


class NodeRun(BaseModel):
    """One run of a node: where it runs, what it got, and how far it came."""

    name: str
    path: str
    branch: str
    output_for: list[str]
    input: NodeValue
    attempt: int = 1
    answers: dict[str, Any] = Field(default_factory=dict)
    """Answers it was already given (a node that reruns on resume)."""


class Trigger(BaseModel):
    """A node's pending start: its input, and the branch it runs on."""

    input: NodeValue
    use_sub_branch: bool = False
    branch: str | None = None
    """``None``: the graph's own branch."""


class CarriedPause(BaseModel):
    """A node run waiting for answers when the run handed over."""

    run: NodeRun
    waiting: list[str]
    """The ids of the requests it waits on."""


class GraphCarry(BaseModel):
    """The root graph's scheduling state, as ``GraphRun`` resumes it."""

    triggers: dict[str, list[Trigger]] = Field(default_factory=dict)
    completed: list[str] = Field(default_factory=list)
    outputs: dict[str, NodeValue] = Field(default_factory=dict)
    branches: dict[str, str] = Field(default_factory=dict)
    arrivals: dict[str, list[str]] = Field(default_factory=dict)
    runs: dict[str, int] = Field(default_factory=dict)
    paused: list[CarriedPause] = Field(default_factory=list)
    """In the order the nodes started (the order their outcomes are handled in)."""
    statuses: dict[str, NodeStatus] = Field(default_factory=dict)
    """Where each node that ran stands, by its name below the root."""


@dataclass
class Loop:
    """The mutable state of one graph run (ADK's ``_LoopState``)."""

    triggers: dict[str, list[Trigger]] = field(default_factory=dict)
    running: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    completed: set[str] = field(default_factory=set)
    outputs: dict[str, NodeValue] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    arrivals: dict[str, set[str]] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    paused: dict[str, tuple[NodeRun, list[str]]] = field(default_factory=dict)
    """The node runs waiting for answers, with the request ids they wait on."""

    def carry(self, still_read: Collection[str], statuses: dict[str, NodeStatus]) -> GraphCarry:
        """The carried form, while only paused nodes run; outputs only of the nodes in
        ``still_read`` (a join's predecessors, the terminals)."""
        return GraphCarry(
            statuses=dict(statuses),
            triggers=self.triggers,
            completed=sorted(self.completed),
            outputs={n: v for n, v in self.outputs.items() if n in still_read},
            branches=dict(self.branches),
            arrivals={join: sorted(arrived) for join, arrived in self.arrivals.items()},
            runs=dict(self.runs),
            paused=[
                CarriedPause(run=run, waiting=waiting)
                for name in self.running
                for run, waiting in [self.paused[name]]
            ],
        )

    @classmethod
    def restored(cls, carried: GraphCarry) -> Loop:
        """The state a carried run had, its paused nodes not yet waiting again."""
        return cls(
            triggers={name: list(queue) for name, queue in carried.triggers.items()},
            completed=set(carried.completed),
            outputs=dict(carried.outputs),
            branches=dict(carried.branches),
            arrivals={join: set(arrived) for join, arrived in carried.arrivals.items()},
            runs=dict(carried.runs),
        )
