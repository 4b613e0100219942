"""``Executor``: what the invocation flow needs from the engine that runs it.

The flow (:mod:`adk_temporal.flow.invocation`) is plain async code; everything that touches
the world or the clock goes through this narrow interface. Temporal implements it in
``adk_temporal.workflows.invocation`` (steps are activities, waiting is
``workflow.wait_condition``, ids come from ``workflow.uuid4()``, a long run continues as
new); :class:`adk_temporal.runner.Runner` implements it in-process by calling the step
implementations directly. The same flow therefore stores the same events on both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .compacting import CompactionInput, CompactionResult
from .graph_messages import NodeStepInput, NodeStepResult
from .messages import (
    AppendEventsInput,
    InvocationCarry,
    ModelStepInput,
    ModelStepResult,
    PendingRequest,
    ToolCallInput,
    ToolCallResult,
)
from .remote import RemoteStepInput, RemoteStepResult

__all__ = ["Executor"]


class Executor(Protocol):
    """Runs the flow's steps, waits, and hands out ids and the time.

    A step that fails for good raises :class:`~adk_temporal.errors.StepFailedError`; the
    flow records the error in the session and the invocation fails.
    """

    async def model_step(self, inp: ModelStepInput, *, summary: str) -> ModelStepResult:
        """Append ``inp.pending_events``, call the agent's model once, store its reply."""
        ...

    async def tool_call(self, inp: ToolCallInput, *, summary: str) -> ToolCallResult:
        """Run one tool call; return its response and the deltas it recorded."""
        ...

    async def node_step(self, inp: NodeStepInput, *, summary: str) -> NodeStepResult:
        """Run one node of a graph workflow once; its events are stored by the step.

        A node that raises is a result (:class:`~.graph_messages.NodeFailed`), not an
        error: the flow decides about retries. Cancelling the call stops the node.
        """
        ...

    async def remote_step(self, inp: RemoteStepInput, *, summary: str) -> RemoteStepResult:
        """Send a remote agent its turn (or an answer) and follow its task until it ends,
        asks, or has worked for ``inp.follow_seconds``; store its reply."""
        ...

    async def append_events(self, inp: AppendEventsInput, *, summary: str) -> None:
        """Append events the flow decided (pauses, errors, endings), idempotently."""
        ...

    async def compact(self, inp: CompactionInput, *, summary: str) -> CompactionResult:
        """Summarise the session's older events into one compaction event, if due."""
        ...

    async def wait_until(
        self, condition: Callable[[], bool], *, timeout: float | None = None
    ) -> bool:
        """Wait until ``condition()`` is true (it turns true when an answer arrives).

        Args:
            condition: Checked whenever something may have changed it.
            timeout: Give up after this many seconds (a durable timer on Temporal).

        Returns:
            True once the condition holds; False when ``timeout`` passed first.
        """
        ...

    async def escalated(self, request: PendingRequest, step: str) -> None:
        """The runtime reminded of, or reassigned, a request left unanswered (``step`` is
        ``reminded`` or ``reassigned``; ``request`` as it stands after it): notify it
        again, where the engine sends notifications."""
        ...

    def new_id(self) -> str:
        """A new unique id (a UUID string), the same on every replay."""
        ...

    def now(self) -> float:
        """The current time in POSIX seconds, the same on every replay."""
        ...

    def status_changed(self) -> None:
        """The invocation's status, step or open requests changed; publish them."""
        ...

    def patched(self, change: str) -> bool:
        """True when this run may take the new path of behaviour change ``change``.

        A run recorded before the change keeps the old path when it is replayed (Temporal's
        ``workflow.patched``); runs that start after it, and in-process runs, take the new.
        """
        ...

    def should_hand_over(self) -> bool:
        """True when the run should continue in a fresh one (history grew long)."""
        ...

    async def hand_over(self, carry: Callable[[], InvocationCarry]) -> None:
        """Continue the invocation in a fresh run from ``carry()``; never returns normally.

        ``carry`` is called once the executor is ready to hand over, so answers accepted
        while it got ready are carried too.
        """
        ...
