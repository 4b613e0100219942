"""The session workflow's side of double texting: the messages a busy run holds.

A run takes a message sent while it is busy (signal ``adk_message`` or the checked update
``adk_message_checked``) under its sender's policy, or the app's, which the run learns from
its first model step (a message sent before then waits for it). ``reject`` refuses it;
the others queue it (:class:`~adk_temporal.double_texting.MessageQueue`), and
``interrupt`` and ``rollback`` also stop the running invocation: at its next model step or
wait (the step it is in finishes and is stored), or, for a rollback, at once. When the
invocation ends the run continues as new into the next message, whose first run carries the
ended invocation's result for its caller (``InvocationInput.before``) and the rest of the
queue; a run handing over mid-invocation carries the queue too, so a message is lost only
if its sender withdraws it or the workflow is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from adk_temporal.double_texting import (
        InvalidQueuedMessageError,
        MessageAck,
        MessageQueue,
        QueuedMessage,
        QueuedSummary,
        WithdrawInput,
        message_problem,
    )
    from adk_temporal.double_texting.policy import DoubleTexting
    from adk_temporal.errors import AdkRequestError, SessionBusyError
    from adk_temporal.flow.messages import AgentSpec, InvocationResult
    from adk_temporal.ids import SessionKey
    from adk_temporal.workflows.messages import (
        QUEUED_MEMO,
        REFUSED_MEMO,
        REQUESTS_MEMO,
        SCHEDULE_MEMO,
        InvocationInput,
        start_attributes,
    )

__all__ = ["REFUSED_KEPT", "Inbox", "StopRequest"]

REFUSED_KEPT = 20
"""How many refused messages a run lists (the latest): a signal's refusal has no caller to
tell, so it is reported in ``adk_status`` and the memo's refused list."""


class StopRequest:
    """The running invocation is to stop for the next message: how, and what it says."""

    def __init__(self, policy: DoubleTexting, invocation_id: str) -> None:
        self.policy = policy
        verb = "interrupted" if policy == "interrupt" else "rolled back"
        self.reason = f"{verb} by a new message (invocation {invocation_id})"


class Inbox:
    """The messages a run holds for after its invocation, and the policy it takes them under.

    Args:
        inp: The run's start input: its budgets, the queue and the tree a previous run
            carried.
        admit: Whether the run takes messages at all: asked when one comes, so a run of an
            earlier baseline records the change there, before anything it changes (a
            replayed run recorded before the change ignores the message, as it did).
    """

    def __init__(self, inp: InvocationInput, admit: Callable[[], bool]) -> None:
        self._inp = inp
        self._admit = admit
        self.queue = MessageQueue(inp.queued)
        tree = inp.carry.tree if inp.carry is not None else None
        self._app_policy: DoubleTexting | None = tree.double_texting if tree else None
        self.ended = False
        """The invocation ended: a message no longer finds the session busy."""
        self.running: str | None = inp.carry.invocation_id if inp.carry else inp.invocation_id
        """The running invocation's id (set by the workflow once drawn): no message may
        take it."""
        self.refused: list[str] = []
        self.stop_elsewhere: Callable[[], None] = lambda: None
        """Set by the workflow: stops the invocation's own task when a safe point is reached
        in another (a parallel branch, an agent tool)."""

    def learn(self, tree: AgentSpec | None) -> None:
        """Take the app's policy from a model step's description of the agent tree."""
        if tree is not None:
            self._app_policy = tree.double_texting

    def stopping(self) -> StopRequest | None:
        """How the running invocation is to stop for the next message, if it is."""
        policy = self.queue.stopping()
        if policy is None:
            return None
        return StopRequest(policy, self.queue.items[0].invocation_id)

    def check(self, raw: Any) -> QueuedMessage:
        """The message ``raw`` carries, or the error a checked update reports.

        Raises:
            ApplicationError: It is malformed or over its budget
                (``InvalidQueuedMessageError``), or the queue is full (``QueueFullError``).
        """
        message, problem = message_problem(raw, self._inp.budgets)
        if message is not None and message.invocation_id == self.running:
            problem = f"invocation id {message.invocation_id!r} is the running invocation's"
            message = None
        if message is None:
            raise _refusal(InvalidQueuedMessageError(problem or "malformed queued message"))
        try:
            # A probe: the real queue is not changed by a validator.
            probe = message.model_copy(update={"policy": message.policy or "enqueue"})
            MessageQueue(self.queue.items).add(probe)
        except AdkRequestError as err:
            raise _refusal(err) from None
        return message

    async def take(self, raw: Any, channel: str) -> MessageAck:
        """Queue the message ``raw`` carries under its policy, or the app's once known.

        Raises:
            ApplicationError: The message is refused: malformed, over its budget, the
                queue is full, or the policy is ``reject`` while the invocation runs.
        """
        message = self.check(raw)
        if not self._admit():
            raise _refusal(SessionBusyError("its run was started before double texting"))
        policy = message.policy
        if policy is None:
            await workflow.wait_condition(lambda: self._app_policy is not None or self.ended)
            policy = self._app_policy or "enqueue"
        if policy == "reject" and not self.ended:
            raise _refusal(
                SessionBusyError(
                    "its app refuses a second message while an invocation runs: send it "
                    "with double_texting='enqueue' to queue it (App.double_texting='reject')"
                )
            )
        taken = message.model_copy(
            update={
                "policy": "enqueue" if policy == "reject" else policy,
                "channel": message.channel or channel,
                "queued_at": workflow.now().timestamp(),
            }
        )
        try:
            position, superseded = self.queue.add(taken)
        except AdkRequestError as err:
            raise _refusal(err) from None
        return MessageAck(
            invocation_id=taken.invocation_id,
            run_id=workflow.info().run_id,
            position=position,
            policy=taken.policy or "enqueue",
            superseded=[s.invocation_id for s in superseded],
        )

    async def take_signalled(self, raw: Any) -> bool:
        """:meth:`take` for a signal: a refusal has no caller, so it is listed instead.

        Returns:
            Whether the run took or listed anything (``False``: a run replayed from before
            double texting, which ignored the signal).
        """
        if not self._admit():
            workflow.logger.warning("message signal ignored: the run predates double texting")
            return False
        try:
            await self.take(raw, "signal")
        except ApplicationError as err:
            invocation_id = raw.get("invocation_id") if isinstance(raw, dict) else None
            workflow.logger.warning("message %r refused: %s", invocation_id, err.message)
            self.refused = [*self.refused, f"message {invocation_id!r}: {err.message}"][
                -REFUSED_KEPT:
            ]
        return True

    def withdraw(self, raw: Any) -> QueuedSummary:
        """Take a queued message out; what it was.

        Raises:
            ApplicationError: ``QueuedMessageNotFoundError`` (no such queued message) or
                ``InvalidQueuedMessageError`` (a malformed request).
        """
        try:
            request = WithdrawInput.model_validate(raw)
            withdrawn = self.queue.withdraw(request.invocation_id)
        except AdkRequestError as err:
            raise _refusal(err) from None
        except ValueError as err:
            raise _refusal(InvalidQueuedMessageError(f"malformed withdrawal: {err}")) from None
        return withdrawn.summary(0)

    def memo(self, published: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
        """``published`` plus the queue, once the memo (``before``) ever held one: an
        upsert leaves out no key, so an emptied queue is written as empty."""
        if self.queue.items or QUEUED_MEMO in before:
            return {**published, QUEUED_MEMO: self._summaries()}
        return published

    def _summaries(self) -> list[dict[str, Any]]:
        return [s.model_dump(mode="json", exclude_defaults=True) for s in self.queue.summaries()]

    def carried(self) -> dict[str, Any]:
        """What a run handing over mid-invocation puts in its successor's input: the queue,
        and no result of an earlier invocation (its caller read it in this run's)."""
        return {"queued": list(self.queue.items), "before": None}

    def next_run(self, after: InvocationResult) -> tuple[InvocationInput, dict[str, Any]] | None:
        """The next message's invocation, as the input, search attributes and memo of the
        run that starts it; ``None`` when no message waits. Takes it out of the queue."""
        message = self.queue.pop()
        if message is None:
            return None
        inp = self._inp
        key = SessionKey(inp.app_name, inp.user_id, inp.session_id)
        nxt = InvocationInput.of_message(
            message,
            key,
            budgets=inp.budgets,
            answer_address=inp.answer_address,
            queued=list(self.queue.items),
            before=after,
        )
        memo: dict[str, Any] = {
            REQUESTS_MEMO: [],
            REFUSED_MEMO: [],
            QUEUED_MEMO: self._summaries(),
            SCHEDULE_MEMO: message.schedule_id,
        }
        attributes = start_attributes(key, message.agent_name, message.schedule_id)
        return nxt, {"search_attributes": attributes, "memo": memo}


def _refusal(err: AdkRequestError) -> ApplicationError:
    """The error a sender sees, typed with the class name as every refusal is."""
    return ApplicationError(str(err), type=type(err).__name__, non_retryable=True)
