"""``InvocationWorkflow``: one ADK invocation, run durably by Temporal.

The flow itself (:class:`~adk_temporal.flow.InvocationFlow`) is engine-neutral; this module
is its Temporal executor — steps are activities, waiting is ``workflow.wait_condition``,
ids and time come from the workflow, a long run continues as new — plus what only Temporal
has: the answering signals and checked updates, the queries, the search attributes and the
UI's current details.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Literal, TypeVar, cast

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    WorkflowAlreadyStartedError,
)
from temporalio.workflow import (
    ActivityCancellationType,
    ChildWorkflowCancellationType,
    ParentClosePolicy,
)

# Pure data and logic modules, and the activity classes referenced by type: passed through
# so the sandbox does not re-import google.genai/pydantic for every workflow run (and
# because google.genai's httpx import trips the sandbox's urllib restriction).
with workflow.unsafe.imports_passed_through():
    from adk_temporal.activities.rewind import RewindActivity, RewindSessionInput
    from adk_temporal.activities.short_ids import StepInput
    from adk_temporal.activities.steps import (
        AppendEventsActivity,
        CompactionActivity,
        ModelStepActivity,
        NodeStepActivity,
        RemoteStepActivity,
        ToolCallActivity,
    )
    from adk_temporal.budgets import json_size
    from adk_temporal.double_texting import MessageAck, QueuedSummary
    from adk_temporal.errors import AdkRequestError, StepFailedError, UnknownRequestIdError
    from adk_temporal.flow import InvocationFlow, RequestBook, gates
    from adk_temporal.flow.compacting import CompactionInput, CompactionResult
    from adk_temporal.flow.graph_messages import NodeStepInput, NodeStepResult
    from adk_temporal.flow.invocation import FLOW_CHANGES
    from adk_temporal.flow.messages import (
        AdkStatus,
        AgentSpec,
        AppendEventsInput,
        DelegateStep,
        InvocationCarry,
        InvocationRef,
        InvocationResult,
        InvocationStatus,
        ModelStepInput,
        ModelStepReply,
        ModelStepResult,
        NotifyEvent,
        NotifyPlan,
        OverBudgetStep,
        PendingRequest,
        Refusal,
        RouteStep,
        ToolCallInput,
        ToolCallResult,
    )
    from adk_temporal.flow.remote import RemoteStepInput, RemoteStepResult
    from adk_temporal.flow.requests import (
        Answer,
        AnswerKind,
        answer_id,
        refused,
        requesters_of,
        stamped,
    )
    from adk_temporal.model_limits import model_queue
    from adk_temporal.notifications import Notice, notice_id
    from adk_temporal.workflows.details import render_details
    from adk_temporal.workflows.messages import (
        ADK_AGENT,
        ADK_APP,
        ADK_SESSION,
        ADK_STATUS,
        ADK_USER,
        CONFIRM_CHECKED_UPDATE,
        CONFIRM_SIGNAL,
        INBOX_CHECKED_UPDATE,
        INBOX_SIGNAL,
        MESSAGE_CHECKED_UPDATE,
        MESSAGE_SIGNAL,
        PENDING_QUERY,
        QUEUE_QUERY,
        REFUSED_IN_MEMO,
        REFUSED_MEMO,
        REQUESTS_MEMO,
        RESUME_CHECKED_UPDATE,
        RESUME_SIGNAL,
        STATUS_QUERY,
        WITHDRAW_UPDATE,
        InvocationInput,
        graph_memo,
    )
    from adk_temporal.workflows.notify import NotifyInput, NotifyWorkflow, notify_workflow_id
    from adk_temporal.workflows.short_ids import RunIds, whole_result
    from adk_temporal.workflows.step_queues import StepQueues, handed_back_route
    from adk_temporal.workflows.texting import Inbox, StopRequest
    from adk_temporal.workflows.under_way import StepsUnderWay, under_way

__all__ = ["InvocationWorkflow", "TemporalExecutor"]

T = TypeVar("T")

_APPEND_TIMEOUT = timedelta(seconds=60)

_BASELINE_1 = FLOW_CHANGES | {
    gates.PUBLISH_REQUESTS,
    gates.APP_QUEUES,
    gates.NOTIFY,
    gates.SHORT_NOTIFY_IDS,
}

_BASELINE_3 = _BASELINE_1 | {
    gates.PUBLISH_AFTER_RESUMING,
    gates.HAND_BACK,
    gates.GRAPH_HAND_OVER,
    gates.GRAPH_STATUS_MEMO,
    gates.DOUBLE_TEXTING,
    gates.APPROVAL_ESCALATION,
}

_BASELINE_CHANGES: dict[int, frozenset[str]] = {
    1: _BASELINE_1,
    2: _BASELINE_1 | {gates.PUBLISH_AFTER_RESUMING},
    3: _BASELINE_3,
    4: _BASELINE_3 | {gates.LOCAL_STEPS},
}
"""The behaviour changes a run of each baseline has from its start. A change made after a
baseline stays out of it: runs of that baseline that started before the change replay
without it."""

_LOCAL_STEPS_PER_TASK = 20
"""The most local steps one workflow task runs: an answer, a cancellation or a message sent
while a chain of them runs is taken when the task ends, so a long chain (a fan-out of
thousands of calls) ends its task every so many steps with a step scheduled as an activity.
Temporal also ends such a task at 80 % of its timeout (8 s by default)."""

_EARLY_ANSWERS = 16
"""How many answers a run lets through as maybe early: each is two events in history even
when it is then refused, so a sender of unknown ids cannot grow the history without end."""

_EARLY_WAIT = timedelta(milliseconds=200)
"""How long an answer let through as maybe early waits for a step to end and open its
request: under the half second the answer desk waits for a worker's reply."""

_PUBLISH_HOLD = timedelta(seconds=1)
"""The longest an accepted answer's upserts wait when no other workflow task comes first (a
long tool): about what Temporal's own listings may lag behind a run."""


def _patched(baseline: int, change: str) -> bool:
    """Whether the run takes ``change``'s new path.

    A run on a baseline that has the change took it from its start and records nothing: a
    patch marker and the search-attribute upsert Temporal pairs with it are 280 bytes of
    history per change per run, more than a short step's own input. A baseline newer than
    this code knows (a client upgraded before its workers) has at least the newest known.
    """
    known = [b for b in _BASELINE_CHANGES if b <= baseline]
    if known and change in _BASELINE_CHANGES[max(known)]:
        return True
    return workflow.patched(change)


def _step_failure(err: ActivityError) -> BaseException:
    """The flow's view of an activity that failed for good: a step failure, or the
    cancellation of the invocation when the activity was cancelled with it."""
    cause = err.cause
    if isinstance(cause, CancelledError):
        return asyncio.CancelledError()
    if isinstance(cause, ApplicationError):
        return StepFailedError(cause.type or "ActivityError", cause.message)
    return StepFailedError("ActivityError", str(cause or err))


def _refusal(err: AdkRequestError) -> ApplicationError:
    """The error a checked update reports for the book's refusal ``err``."""
    return ApplicationError(str(err), type=type(err).__name__, non_retryable=True)


class _Notifier:
    """Starts this run's notifications, each an ``adk_notify`` child workflow.

    Which events the app notifies is learnt from the agent trees the model steps describe
    (or the one the previous run carried), so it is in history and a replay never depends
    on the worker's configuration; runs of apps without notifications start nothing and
    record nothing new. A child is abandoned by the run and awaited only until it started.

    Args:
        inp: The run's start input (the session's ids, a carried tree).
        book: The requests; a pause notifies those not notified by this run yet.
        invocation_id: The invocation's id.
    """

    def __init__(self, inp: InvocationInput, book: RequestBook, invocation_id: str) -> None:
        self._inp = inp
        self._book = book
        self._invocation_id = invocation_id
        tree = inp.carry.tree if inp.carry is not None else None
        self._plan: NotifyPlan | None = tree.notify if tree is not None else None
        # A run hands over right after opening requests, before waiting on them: the
        # requests a run carries were never notified, and the next run notifies them.
        self._notified: set[str] = set()
        self.task_queue: str | None = inp.carry.app_queue if inp.carry is not None else None
        """Where the children run: the app's own queue once the run's steps moved there,
        so only a worker holding the app's endpoints and secret delivers its notices."""

    def waits(self) -> bool:
        """Whether requests are open: a wait now is a wait for their answers."""
        return bool(self._book.unanswered())

    def learn(self, tree: AgentSpec | None) -> None:
        """Take the notifications a model step's description of the tree carries."""
        if tree is not None:
            self._plan = tree.notify

    async def paused(self) -> None:
        """Notify the open requests no notification of this run named yet."""
        fresh = [p for p in self._book.unanswered() if p.id not in self._notified]
        if fresh and self._wanted("paused"):
            self._notified.update(p.id for p in fresh)
            await self._start("paused", fresh, first=fresh[0].id)

    async def escalated(self, request: PendingRequest, step: str) -> None:
        """Notify the paused request again: reminded of, or reassigned."""
        if step in ("reminded", "reassigned") and self._wanted("paused"):
            reason = cast(Literal["reminded", "reassigned"], step)
            await self._start("paused", [request], first=f"{request.id}/{step}", reason=reason)

    async def ended(self, event: NotifyEvent, error: str | None = None) -> None:
        """Notify that the invocation completed or failed."""
        if self._wanted(event):
            await self._start(event, [], error=error)

    def _wanted(self, event: NotifyEvent) -> bool:
        # The patch is asked only when the app notifies: other runs record no marker.
        plan = self._plan
        return (
            plan is not None and event in plan.events and _patched(self._inp.baseline, gates.NOTIFY)
        )

    async def _start(
        self,
        event: NotifyEvent,
        requests: list[PendingRequest],
        *,
        first: str = "",
        error: str | None = None,
        reason: Literal["reminded", "reassigned"] | None = None,
    ) -> None:
        assert self._plan is not None
        info = workflow.info()
        what = (
            f"invocation.{event}: {len(requests)} request(s)" if requests else f"invocation.{event}"
        )
        # The long ids named the parent whole (over 100 characters in the UI's list); runs
        # recorded before short ids start their children with those (notified_pause.json):
        # keep the old arm until no such run waits.
        if _patched(self._inp.baseline, gates.SHORT_NOTIFY_IDS):
            child_id = notify_workflow_id(info.workflow_id, self._invocation_id, event, first)
            summary = f"{what} · for {info.workflow_id}"
        else:
            suffix = f"/{first}" if first else ""
            child_id = f"notify/{info.workflow_id}/{self._invocation_id}/{event}{suffix}"
            summary = what
        ids = [r.id for r in requests]
        notice = Notice(
            id=notice_id(info.workflow_id, self._invocation_id, event, ids, reason),
            reason=reason,
            event=event,
            app_name=self._inp.app_name,
            user_id=self._inp.user_id,
            session_id=self._inp.session_id,
            workflow_id=info.workflow_id,
            run_id=info.run_id,
            invocation_id=self._invocation_id,
            created_at=workflow.now().timestamp(),
            requests=requests,
            error=error,
        )
        try:
            await workflow.start_child_workflow(
                NotifyWorkflow.run,
                NotifyInput(notice=notice, plan=self._plan),
                id=child_id,
                task_queue=self.task_queue,
                parent_close_policy=ParentClosePolicy.ABANDON,
                cancellation_type=ChildWorkflowCancellationType.ABANDON,
                static_summary=summary,
            )
        except WorkflowAlreadyStartedError:
            # The same notice (same invocation id, event and requests: a reused invocation id,
            # a reset run) is still being delivered; a notification never fails the run.
            workflow.logger.warning("notice %s is already being delivered", notice.id)


class TemporalExecutor:
    """The flow's steps as activities; waiting, ids, time and handing over as a workflow's.

    Args:
        inp: The invocation's start input (timeouts, attempts, the continue-as-new bound).
        publish: Publishes the invocation's status (search attribute, current details).
        notifier: Learns the notifications from model steps; notified before each wait.
        ids: The run's ids (baseline runs): step inputs are written short with them.
        inbox: The messages sent while the run is busy: one that stops the invocation is
            obeyed before each model step and wait (raised as a cancellation), and the
            queue is carried when the run hands over.
    """

    def __init__(
        self,
        inp: InvocationInput,
        publish: Callable[[], None],
        notifier: _Notifier,
        ids: RunIds | None = None,
        details: Callable[[], None] = lambda: None,
        inbox: Inbox | None = None,
    ) -> None:
        self._inp = inp
        self._ids = ids
        self._inbox = inbox
        self._publish = publish
        self._notifier = notifier
        self._steps_this_run = 0
        self._groups: dict[str, str | None] = {}
        tree = inp.carry.tree if inp.carry is not None else None
        self._local_agents: set[str] = tree.local_agents() if tree is not None else set()
        """The agents whose model steps may run locally, as the latest tree said."""
        self._local_off = False
        """Set once a local step reached a worker of another app: the run's steps stay
        activities from then on."""
        self._task_length = 0
        self._local_in_task = 0
        self.steps = StepsUnderWay()
        """The steps that may open a request, while they run (an answer may come early)."""
        self.queues = StepQueues(
            inp.app_name,
            inp.carry.app_queue if inp.carry is not None else None,
            lambda change: _patched(inp.baseline, change),
            details,
        )
        """Where the run's steps go; its note is part of the run's details."""
        self._priority = (
            Priority(priority_key=inp.priority, fairness_key=inp.fairness_key)
            if inp.priority is not None or inp.fairness_key is not None
            else Priority.default
        )

    @under_way
    async def model_step(self, inp: ModelStepInput, *, summary: str) -> ModelStepResult:
        """Run ``adk_model_step``, on the task queue of the agent's model limit if it has one.

        Which limit an agent's model has is the worker's configuration: the first step of
        an agent in a run asks (the worker answers :class:`RouteStep` without calling the
        model when the step is on the wrong queue), and the answer is kept for the run. A
        step handed back by a worker of another app is scheduled again, uncounted.
        """
        self._stop_point()
        agent = inp.ref.agent_name
        # A route to the app's queue, then one to a limit's queue: three tries at most.
        tries = pauses = 0
        while True:
            group = self._groups.get(agent)
            step = inp.model_copy(update={"model_group": group}) if group else inp
            local = group is None and not inp.stream and self._local(agent in self._local_agents)
            try:
                result = await self._schedule_model(step, group, local, summary)
            except ActivityError as err:
                raise _step_failure(err) from err
            if not isinstance(result, RouteStep):
                break
            if local and result.app is not None:
                self._local_off = True  # the worker holding the run serves another app
            if result.app is None:
                self._groups[agent] = result.group
            elif await self._route(result, pauses):
                pauses += 1
                continue
            tries += 1
            if tries == 3:
                raise StepFailedError(
                    "ModelLimitMismatch",
                    f"the workers disagree on the model limit of agent {agent!r}: give every "
                    "worker of the task queue the same --model-limit",
                )
        self.queues.settled()
        if isinstance(result, OverBudgetStep):
            return result  # no model was called: nothing to learn or count
        self._notifier.learn(result.tree)
        if result.tree is not None:
            self._local_agents = result.tree.local_agents()
        if self._inbox is not None:
            self._inbox.learn(result.tree)
        if self.queues.learn(result.tree):
            self._notifier.task_queue = self.queues.current
        if not isinstance(result, DelegateStep):
            self._steps_this_run += 1
        return result

    async def _schedule_model(
        self, step: ModelStepInput, group: str | None, local: bool, summary: str
    ) -> ModelStepReply:
        """One try of a model step: a local activity, or an activity on its queue (the
        limit's, when its model has one)."""
        timeout = timedelta(seconds=self._inp.model_timeout_seconds)
        retry = RetryPolicy(maximum_attempts=self._inp.model_maximum_attempts)
        if local:
            # The input never enters history: it goes whole.
            return await workflow.execute_local_activity_method(
                ModelStepActivity.run,
                step,
                start_to_close_timeout=timeout,
                retry_policy=retry,
                summary=summary,
            )
        return await workflow.execute_activity_method(
            ModelStepActivity.run,
            self._short(step),
            task_queue=model_queue(self.queues.base(), group) if group else self.queues.next_try(),
            start_to_close_timeout=timeout,
            heartbeat_timeout=timedelta(seconds=self._inp.heartbeat_seconds),
            retry_policy=retry,
            priority=self._priority,
            summary=summary,
        )

    def _local(self, wanted: bool) -> bool:
        """Whether a step the serving app lets run locally (``wanted``) does: only where
        the worker that runs the run's workflow task takes its steps too (the run's own
        queue), in runs that take the change, and at most :data:`_LOCAL_STEPS_PER_TASK` in
        one workflow task."""
        if not (
            wanted
            and not self._local_off
            and self.queues.local()
            and _patched(self._inp.baseline, gates.LOCAL_STEPS)
        ):
            return False
        # The history grows only when a task ends: the same length is the same task.
        length = workflow.info().get_current_history_length()
        if length != self._task_length:
            self._task_length, self._local_in_task = length, 0
        self._local_in_task += 1
        return self._local_in_task <= _LOCAL_STEPS_PER_TASK

    async def _route(self, route: RouteStep, pauses: int) -> bool:
        """Send the run's steps where a worker of another app said (``StepQueues.route``);
        the app's notifications go with them."""
        paused = await self.queues.route(route, pauses)
        self._notifier.task_queue = self.queues.current
        return paused

    async def _handing_back(self, schedule: Callable[[str | None], Awaitable[T]]) -> T:
        """``schedule`` on the steps' queue, again wherever a worker of another app that
        refused it says (a worker before hand-backs failed such steps without saying)."""
        pauses = 0
        while True:
            try:
                result = await schedule(self.queues.next_try())
            except ActivityError as err:
                route = handed_back_route(err)
                if route is None:
                    raise _step_failure(err) from err
                if await self._route(route, pauses):
                    pauses += 1
                continue
            self.queues.settled()
            return result

    @under_way
    async def tool_call(self, inp: ToolCallInput, *, summary: str) -> ToolCallResult:
        """Run ``adk_tool_call`` with the options the tool declared."""
        opts = inp.call.options
        settings = opts.retry()
        retry = RetryPolicy(
            maximum_attempts=settings.maximum_attempts,
            initial_interval=timedelta(seconds=settings.initial_interval),
            backoff_coefficient=settings.backoff_coefficient,
            maximum_interval=timedelta(seconds=settings.maximum_interval),
            non_retryable_error_types=settings.non_retryable_error_types,
        )
        # A cancelled invocation waits for its running tools, so that what a tool did
        # after the cancellation was requested is stored (a charge made is recorded).
        cancellation = (
            ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
            if _patched(self._inp.baseline, gates.KEEP_CANCELLED_OUTCOMES)
            else ActivityCancellationType.TRY_CANCEL
        )
        # An answered call (its re-entry after an approval or an input) runs once, as an
        # activity: a local one would run again if its worker died before the task ended.
        if inp.tool_confirmation is None and not inp.resume_inputs and self._local(opts.local):
            ran = await self._local_tool(inp, retry, cancellation, summary)
            if ran is not None:
                return whole_result(ran, inp.ref.invocation_id)
        result = await self._handing_back(
            lambda queue: workflow.execute_activity_method(
                ToolCallActivity.run,
                self._short(inp),
                task_queue=queue,
                start_to_close_timeout=timedelta(
                    seconds=opts.start_to_close_seconds or self._inp.tool_timeout_seconds
                ),
                heartbeat_timeout=timedelta(
                    seconds=opts.heartbeat_seconds or self._inp.heartbeat_seconds
                ),
                retry_policy=retry,
                cancellation_type=cancellation,
                priority=self._priority,
                summary=summary,
            )
        )
        return whole_result(result, inp.ref.invocation_id)

    async def _local_tool(
        self,
        inp: ToolCallInput,
        retry: RetryPolicy,
        cancellation: ActivityCancellationType,
        summary: str,
    ) -> ToolCallResult | None:
        """Run ``adk_tool_call`` as a local activity; ``None`` when the worker holding the
        run serves another app (the call then goes where its app's workers poll)."""
        opts = inp.call.options
        try:
            return await workflow.execute_local_activity_method(
                ToolCallActivity.run,
                inp,
                start_to_close_timeout=timedelta(
                    seconds=opts.start_to_close_seconds or self._inp.tool_timeout_seconds
                ),
                retry_policy=retry,
                cancellation_type=cancellation,
                summary=summary,
            )
        except ActivityError as err:
            if handed_back_route(err) is None:
                raise _step_failure(err) from err
        self._local_off = True
        return None

    @under_way
    async def node_step(self, inp: NodeStepInput, *, summary: str) -> NodeStepResult:
        """Run ``adk_node_step``: a node's own errors are its result, so the activity is
        retried only when its worker is lost (a missed heartbeat) or the store fails; a
        cancelled node (its timeout passed) is waited for, so nothing it stores lands
        after the timeout's error event."""
        try:
            result = await workflow.execute_activity_method(
                NodeStepActivity.run,
                inp,
                task_queue=self.queues.current,
                start_to_close_timeout=timedelta(seconds=self._inp.tool_timeout_seconds),
                heartbeat_timeout=timedelta(seconds=self._inp.heartbeat_seconds),
                cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                priority=self._priority,
                summary=summary,
            )
        except ActivityError as err:
            raise _step_failure(err) from err
        self._steps_this_run += 1  # a graph's progress: it may hand over from here
        return result

    @under_way
    async def remote_step(self, inp: RemoteStepInput, *, summary: str) -> RemoteStepResult:
        """Run ``adk_remote_step``: a worker lost while it follows the remote task is noticed
        by the heartbeat, and the next attempt asks the task where it stands; the step hands
        back before its timeout (``follow_seconds``), so a long remote task is followed by
        one step after another."""
        try:
            return await workflow.execute_activity_method(
                RemoteStepActivity.run,
                inp,
                task_queue=self.queues.current,
                start_to_close_timeout=timedelta(seconds=self._inp.tool_timeout_seconds),
                heartbeat_timeout=timedelta(seconds=self._inp.heartbeat_seconds),
                retry_policy=RetryPolicy(maximum_attempts=self._inp.model_maximum_attempts),
                priority=self._priority,
                summary=summary,
            )
        except ActivityError as err:
            raise _step_failure(err) from err

    async def append_events(self, inp: AppendEventsInput, *, summary: str) -> None:
        """Run ``adk_append_events``."""
        await self._handing_back(
            lambda queue: workflow.execute_activity_method(
                AppendEventsActivity.run,
                self._short(inp),
                task_queue=queue,
                start_to_close_timeout=_APPEND_TIMEOUT,
                summary=summary,
            )
        )

    async def compact(self, inp: CompactionInput, *, summary: str) -> CompactionResult:
        """Run ``adk_compact``: a model call, timed and retried as model steps are."""
        return await self._handing_back(
            lambda queue: workflow.execute_activity_method(
                CompactionActivity.run,
                self._short(inp),
                task_queue=queue,
                start_to_close_timeout=timedelta(seconds=self._inp.model_timeout_seconds),
                retry_policy=RetryPolicy(maximum_attempts=self._inp.model_maximum_attempts),
                priority=self._priority,
                summary=summary,
            )
        )

    async def wait_until(
        self, condition: Callable[[], bool], *, timeout: float | None = None
    ) -> bool:
        """``workflow.wait_condition``: durable however long the wait; a timeout is a
        durable timer, so a deadline passes even while no worker runs. A wait for answers
        (requests are open) notifies them first, and is a safe point where a message that
        interrupts the invocation stops it; other waits (a graph node's timeout or retry
        delay) run out as they would."""
        for_answers = self._notifier.waits()
        if for_answers:
            self._stop_point()
        await self._notifier.paused()
        stops = for_answers and self._inbox is not None
        try:
            await workflow.wait_condition(
                lambda: condition() or (stops and self._stopping()), timeout=timeout
            )
        except TimeoutError:
            return False
        if stops and not condition():
            self._stop_point()
        return True

    def _stopping(self) -> bool:
        return self._inbox is not None and self._inbox.stopping() is not None

    def _stop_point(self) -> None:
        """A safe point: stop here when a message asks to (double texting's interrupt).

        Inside a parallel branch or an agent tool (another task than the run's), the run's
        own task is cancelled too, as Temporal's cancellation would: the branch alone
        stopping would let the agent around it go on as if it had ended.

        Raises:
            asyncio.CancelledError: The invocation is to stop: the flow stores what it has
                and its cancellation event, as for a cancellation.
        """
        if self._stopping():
            assert self._inbox is not None
            self._inbox.stop_elsewhere()
            raise asyncio.CancelledError()

    async def rewind(self, ref: InvocationRef) -> None:
        """Run ``adk_rewind``: the session as it was before ``ref``'s invocation (a
        rollback). A rewind that cannot be done (a version to restore was deleted) is
        logged and skipped: the next message runs either way."""
        try:
            await workflow.execute_activity_method(
                RewindActivity.run,
                RewindSessionInput(ref=ref, event_id=f"rewind-{self.new_id()}"),
                task_queue=self.queues.current,
                start_to_close_timeout=_APPEND_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=10),
                summary=f"rewind before {ref.invocation_id}",
            )
        except ActivityError as err:
            workflow.logger.warning("rollback of %s not rewound: %s", ref.invocation_id, err.cause)

    def _short(self, inp: StepInput) -> StepInput:
        """``inp`` as it crosses history: short, in baseline runs."""
        return self._ids.short(inp) if self._ids is not None else inp

    async def escalated(self, request: PendingRequest, step: str) -> None:
        """A reminder or reassignment was taken: notify the request again."""
        await self._notifier.escalated(request, step)

    def new_id(self) -> str:
        """Drawn from the run id (baseline runs), else ``workflow.uuid4()``: the same on
        every replay either way."""
        return self._ids.draw() if self._ids is not None else str(workflow.uuid4())

    def now(self) -> float:
        """``workflow.now()``: the same on every replay."""
        return workflow.now().timestamp()

    def status_changed(self) -> None:
        """Publish the status to the search attribute and the current details."""
        self._publish()

    def patched(self, change: str) -> bool:
        """``workflow.patched``: histories recorded before ``change`` replay the old path."""
        return _patched(self._inp.baseline, change)

    def should_hand_over(self) -> bool:
        """Temporal suggests continue-as-new, or the run passed its history bound."""
        # A run that has not made progress yet never hands over: with a tiny bound the new
        # run would otherwise continue as new again at once, forever.
        if self._steps_this_run == 0 or self._stopping():
            return False
        info = workflow.info()
        limit = self._inp.continue_as_new_after_events
        return info.is_continue_as_new_suggested() or (
            limit is not None and info.get_current_history_length() >= limit
        )

    async def hand_over(self, carry: Callable[[], InvocationCarry]) -> None:
        """Continue as new, once running signal and update handlers have finished."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        carried = carry()
        if self.queues.current is not None:
            carried = carried.model_copy(update={"app_queue": self.queues.current})
        update: dict[str, Any] = {"message": None, "carry": carried}
        if self._inbox is not None:
            update.update(self._inbox.carried())
        workflow.continue_as_new(self._inp.model_copy(update=update))


# Outside the sandbox: the sandbox re-creates its module world for every run (a quarter of
# the worker's CPU for short invocations), to catch nondeterminism in code it cannot trust.
# This workflow runs only adk-temporal's own code — agents, tools and callbacks run in
# activities — and that code is checked deterministic by replaying recorded histories and
# by every integration test replaying each workflow task from scratch. Other workflows on
# the same worker keep their sandbox.
@workflow.defn(name="InvocationWorkflow", sandboxed=False)
class InvocationWorkflow:
    """Runs one ADK invocation of one agent (and its sub-agents) in one session."""

    @workflow.init
    def __init__(self, inp: InvocationInput) -> None:
        # Answers may arrive before the run starts (signal-with-start): the book exists
        # from the start and the flow is given it.
        self._book = RequestBook(inp.budgets, requesters=requesters_of(inp.started_by, inp.user_id))
        if inp.carry is not None:
            self._book.restore(inp.carry)
        self._address = inp.answer_address
        self._baseline = inp.baseline
        self._flow: InvocationFlow | None = None
        self._published: AdkStatus | None = None
        self._published_agent = inp.agent_name
        self._memo: dict[str, Any] = {REQUESTS_MEMO: [], REFUSED_MEMO: []}
        self._graph_memo: dict[str, Any] = {}
        self._holding: asyncio.Task[None] | None = None
        self._queues: StepQueues | None = None
        self._steps: StepsUnderWay | None = None
        self._early_answers = 0
        """Answers let through as maybe early (:meth:`_may_be_early`) in this run."""
        self._held_at = 0
        """The history length of the task that holds the upserts (:meth:`_hold_publishing`)."""
        self._inbox = Inbox(inp, lambda: _patched(inp.baseline, gates.DOUBLE_TEXTING))
        self._inbox.stop_elsewhere = self._cancel_main
        self._main: asyncio.Task[Any] | None = None
        """The task running the invocation's flow, while it runs: a rollback cancels it."""
        self._main_cancelled = False

    @workflow.run
    async def run(self, inp: InvocationInput) -> InvocationResult:
        """Run the agent until a final answer, an end, an error or the step limit."""
        info = workflow.info()
        carry = inp.carry
        ids = (
            RunIds(info.run_id, info.first_execution_run_id, info.continued_run_id)
            if inp.baseline >= 1
            else None
        )
        invocation_id = (
            carry.invocation_id
            if carry
            else inp.invocation_id
            or (ids.invocation_id if ids is not None else f"e-{workflow.uuid4()}")
        )
        ref = InvocationRef(
            app_name=inp.app_name,
            user_id=inp.user_id,
            session_id=inp.session_id,
            agent_name=inp.agent_name,
            invocation_id=invocation_id,
        ).without_session_ids(info.workflow_id)
        # The client sets these at start; a run started some other way (the temporal CLI, a
        # continue-as-new) gets them here. Only missing values are written: each upsert is
        # a history event.
        present = info.typed_search_attributes
        wanted = [
            (ADK_APP, inp.app_name),
            (ADK_USER, inp.user_id),
            (ADK_SESSION, inp.session_id),
            (ADK_AGENT, inp.agent_name),
        ]
        updates = [key.value_set(value) for key, value in wanted if present.get(key) != value]
        if updates:
            workflow.upsert_search_attributes(updates)
        status = present.get(ADK_STATUS)
        if status in ("running", "awaiting_confirmation", "awaiting_input"):
            self._published = cast(AdkStatus, status)
        self._inbox.running = invocation_id
        notifier = _Notifier(inp, self._book, invocation_id)
        executor = TemporalExecutor(
            inp, self._publish, notifier, ids, self._show_details, self._inbox
        )
        self._queues = executor.queues
        self._steps = executor.steps
        self._flow = InvocationFlow(
            executor,
            ref,
            config=inp.options(),
            budgets=inp.budgets,
            book=self._book,
        )
        try:
            result = await self._run_flow(inp, executor, ref)
        except StepFailedError as err:
            await notifier.ended("failed", err.message)
            await self._hand_on(inp, self._flow.result_of("failed", err.message))
            raise ApplicationError(err.message, type=err.kind, non_retryable=True) from err
        finally:
            self._stop_holding()  # a run that ends or continues as new publishes its last
        if result.status in ("completed", "failed"):
            await notifier.ended(cast(NotifyEvent, result.status), result.error)
        await self._hand_on(inp, result)
        return result

    # ------------------------------------------------------- double texting

    async def _run_flow(
        self, inp: InvocationInput, executor: TemporalExecutor, ref: InvocationRef
    ) -> InvocationResult:
        """The flow's run; stopped for a message that interrupts or rolls it back, its
        result says so (``cancelled``), and a rollback first rewinds the session."""
        assert self._flow is not None
        self._main = asyncio.current_task()
        try:
            return await self._flow.run(inp.message, inp.carry)
        except asyncio.CancelledError:
            stop = self._inbox.stopping()
            if stop is None:
                raise  # Temporal's cancellation: the whole workflow, queue and all
            return await self._stopped(stop, executor, ref)
        finally:
            self._main = None

    async def _stopped(
        self, stop: StopRequest, executor: TemporalExecutor, ref: InvocationRef
    ) -> InvocationResult:
        assert self._flow is not None
        if stop.policy == "rollback":
            await executor.rewind(
                ref.model_copy(update={"invocation_id": self._flow.invocation_id})
            )
        return self._flow.result_of("cancelled", stop.reason)

    def _took(self) -> None:
        """After a message was queued: tell the flow why it is to stop, if it is, and stop a
        rolled-back invocation at once, as Temporal's cancellation would (once)."""
        stop = self._inbox.stopping()
        if stop is not None and self._main is not None and self._flow is not None:
            self._flow.stop_reason = stop.reason
            if stop.policy == "rollback":
                self._cancel_main()
        self._publish()

    def _cancel_main(self) -> None:
        """Cancel the task running the invocation (once), from another task."""
        main = self._main
        if main is not None and main is not asyncio.current_task() and not self._main_cancelled:
            self._main_cancelled = True
            main.cancel()

    async def _hand_on(self, inp: InvocationInput, result: InvocationResult) -> None:
        """Continue as new into the next queued message, if one waits (the ended
        invocation's result goes with it, for its caller); return when none does."""
        if not self._inbox.queue.items and workflow.all_handlers_finished():
            return  # the common case asks nothing, so recorded runs replay unchanged
        self._inbox.ended = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        if not self._inbox.queue.items:
            return
        self._stop_holding()
        nxt = self._inbox.next_run(result)
        assert nxt is not None
        workflow.continue_as_new(nxt[0], **nxt[1])

    # ------------------------------------------------------ signals/updates
    #
    # Answers arrive as any JSON at all: a payload the SDK could not decode into a declared
    # type would be dropped before the workflow saw it, so the handlers take it raw and the
    # book checks shape and size, recording what it refuses.

    @workflow.signal(name=CONFIRM_SIGNAL)
    def confirm(self, answer: Any) -> None:
        """Answer a confirmation request; unknown ids are buffered, duplicates ignored."""
        self._accept("confirmation", answer, "signal")

    @workflow.signal(name=RESUME_SIGNAL)
    def resume(self, answer: Any) -> None:
        """Answer an input request; unknown ids are buffered, duplicates ignored."""
        self._accept("input", answer, "signal")

    @workflow.update(name=CONFIRM_CHECKED_UPDATE)
    async def confirm_checked(self, answer: Any) -> None:
        """Answer a confirmation request, rejecting unknown or already-answered ids."""
        await self._take_checked("confirmation", answer)

    @confirm_checked.validator
    def _validate_confirm(self, answer: Any) -> None:
        self._check("confirmation", answer)

    @workflow.update(name=RESUME_CHECKED_UPDATE)
    async def resume_checked(self, answer: Any) -> None:
        """Answer an input request, rejecting unknown ids and schema violations."""
        await self._take_checked("input", answer)

    @resume_checked.validator
    def _validate_resume(self, answer: Any) -> None:
        self._check("input", answer)

    @workflow.signal(name=MESSAGE_SIGNAL)
    async def message(self, raw: Any) -> None:
        """A message sent while the session is busy (double texting); a refusal is listed."""
        if await self._inbox.take_signalled(raw):
            self._took()

    @workflow.update(name=MESSAGE_CHECKED_UPDATE)
    async def message_checked(self, raw: Any) -> MessageAck:
        """A message sent while the session is busy; its sender learns where it waits."""
        ack = await self._inbox.take(raw, "update")
        self._took()
        return ack

    @message_checked.validator
    def _validate_message(self, raw: Any) -> None:
        self._inbox.check(raw)

    @workflow.update(name=WITHDRAW_UPDATE)
    def withdraw(self, raw: Any) -> QueuedSummary:
        """Take a queued message out before it runs."""
        withdrawn = self._inbox.withdraw(raw)
        self._publish()
        return withdrawn

    @workflow.signal(name=INBOX_SIGNAL)
    def inbox(self, action: Any) -> None:
        """Claim, release or assign an open request; a refused action is recorded."""
        self._inbox_action(action)

    @workflow.update(name=INBOX_CHECKED_UPDATE)
    def inbox_checked(self, action: Any) -> None:
        """Claim, release or assign an open request, rejecting what cannot be taken."""
        self._inbox_action(action)

    @inbox_checked.validator
    def _validate_inbox(self, action: Any) -> None:
        action = self._book.parse_inbox(action)
        problem = (
            refused(action)
            if isinstance(action, Refusal)
            else self._book.inbox_problem(action, workflow.now().timestamp())
        )
        if problem is not None:
            raise _refusal(problem) from None

    def _inbox_action(self, raw: Any) -> None:
        action = self._book.parse_inbox(raw)
        now = workflow.now().timestamp()
        if not isinstance(action, Refusal):
            # Stamped by the run, as answers are: its clock, the channel it came by.
            action = action.model_copy(update={"at": now, "channel": action.channel or "signal"})
        self._book.take_inbox(action, now)
        self._publish()

    def _check(self, kind: AnswerKind, raw: Any) -> None:
        """Raise the error a checked update reports; never changes state. An answer that
        may be early (:meth:`_may_be_early`) passes, for its handler to check."""
        try:
            self._book.check(kind, raw, now=workflow.now().timestamp())
        except UnknownRequestIdError as err:
            if not self._may_be_early(kind, raw):
                raise _refusal(err) from None
        except AdkRequestError as err:
            raise _refusal(err) from None

    def _may_be_early(self, kind: AnswerKind, raw: Any) -> bool:
        """Whether ``raw`` names a request never opened while a step that may open it runs
        (:mod:`~adk_temporal.workflows.under_way`): the step's result may be in this very
        task. At most :data:`_EARLY_ANSWERS` a run are let through so."""
        answer = self._book.parse(kind, raw)
        return (
            self._steps is not None
            and self._steps.running > 0
            and self._early_answers < _EARLY_ANSWERS
            and not isinstance(answer, Refusal)
            and self._book.unheard_of(answer_id(answer))
        )

    async def _take_checked(self, kind: AnswerKind, raw: Any) -> None:
        """A checked update's answer, parsed once: one the validator let through as maybe
        early is checked again first (:meth:`_early_checked`)."""
        answer = self._book.parse(kind, raw)
        steps = self._steps
        if steps is not None and not isinstance(answer, Refusal):
            request_id = answer_id(answer)
            if self._book.unheard_of(request_id):
                await self._early_checked(kind, raw, request_id, steps)
        self._accept(kind, raw, "update", answer)

    async def _early_checked(
        self, kind: AnswerKind, raw: Any, request_id: str, steps: StepsUnderWay
    ) -> None:
        """Check again, once one of ``steps`` ended (or :data:`_EARLY_WAIT` passed), an
        answer to ``request_id`` the validator let through as maybe early; raises its
        refusal."""
        self._early_answers += 1
        ended = steps.ended
        # A step result that came in this task with the answer is applied after it, in
        # the same task: no timer fires then. Otherwise the answer is refused soon after.
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: steps.ended > ended or not self._book.unheard_of(request_id),
                timeout=_EARLY_WAIT,
            )
        try:
            self._book.check(kind, raw, now=workflow.now().timestamp())
        except AdkRequestError as err:
            raise _refusal(err) from None

    def _accept(
        self, kind: AnswerKind, raw: Any, channel: str, parsed: Answer | Refusal | None = None
    ) -> None:
        answer = parsed if parsed is not None else self._book.parse(kind, raw)
        if not isinstance(answer, Refusal):
            # The record's time is the run's, never the sender's clock.
            answer = stamped(answer, now=workflow.now().timestamp(), channel=channel)
        outcome = self._book.accept(answer)
        if (
            outcome == "accepted"
            and self._flow is not None
            and _patched(self._baseline, gates.PUBLISH_AFTER_RESUMING)
        ):
            self._hold_publishing()
        if outcome not in ("accepted", "voted"):
            # Ids and sizes only: a payload may hold secrets and may be megabytes.
            request_id = answer.id if isinstance(answer, Refusal) else answer_id(answer)
            workflow.logger.warning(
                "%s answer for %r %s (%d bytes)",
                kind,
                request_id,
                outcome,
                json_size(raw, "the answer"),
            )
        self._publish()

    # --------------------------------------------------------------- queries

    @workflow.query(name=PENDING_QUERY)
    def pending(self) -> list[PendingRequest]:
        """The open, unanswered requests whose events are stored."""
        return self._book.unanswered(listed_only=True)

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> InvocationStatus:
        """The invocation's status."""
        assert self._flow is not None, "queries are served after the run started"
        return self._with_refused(self._flow.snapshot(listed_only=True))

    @workflow.query(name=QUEUE_QUERY)
    def queued(self) -> list[QueuedSummary]:
        """The messages waiting for the session, in the order they run."""
        return self._inbox.queue.summaries()

    def _with_refused(self, status: InvocationStatus) -> InvocationStatus:
        """``status`` listing the refused messages too, when any was."""
        if not self._inbox.refused:
            return status
        refused = [*status.ignored_signals, *self._inbox.refused]
        return status.model_copy(update={"ignored_signals": refused})

    # ------------------------------------------------------------ publishing

    def _hold_publishing(self) -> None:
        """Hold the upserts until the next workflow task, so the task the answer arrived in
        carries only the steps it resumes; a timer bounds the wait (:data:`_PUBLISH_HOLD`)."""
        if self._holding is None:
            self._held_at = workflow.info().get_current_history_length()
            self._holding = asyncio.create_task(self._publish_held())

    async def _publish_held(self) -> None:
        await workflow.sleep(_PUBLISH_HOLD, summary="publish the answer")
        self._holding = None
        self._publish()

    def _stop_holding(self) -> None:
        """Publish what is held now: the run ends or continues as new."""
        if self._holding is not None:
            self._release()
            self._publish()

    def _release(self) -> None:
        """End the hold, and cancel the timer that bounds it."""
        holding, self._holding = self._holding, None
        if holding is not None:
            holding.cancel()

    def _publish(self) -> None:
        """Publish the status to the UI: the current details at once; the search attributes
        and memo when they changed, unless an answer holds them (:meth:`_hold_publishing`)."""
        # Before the run starts (an answer that came with the start) nothing is open yet.
        now = (
            self._with_refused(self._flow.snapshot())
            if self._flow is not None
            else InvocationStatus(status="running", invocation_id="", agent="", step=0)
        )
        pending = self._book.unanswered()
        self._show_details(now, pending)
        info = workflow.info()
        if self._holding is not None and info.get_current_history_length() > self._held_at:
            self._release()  # a later task: the resumed steps are under way
        if self._holding is None:
            self._upsert(now, pending)

    def _show_details(
        self, now: InvocationStatus | None = None, pending: list[PendingRequest] | None = None
    ) -> None:
        """Set the current details the UI shows: a query result, never a history event."""
        if now is None:
            if self._flow is None:
                return
            now = self._flow.snapshot()
        info = workflow.info()
        workflow.set_current_details(
            render_details(
                info.workflow_id,
                now,
                self._book.unanswered() if pending is None else pending,
                address=self._address,
                namespace=info.namespace,
                queue_note=self._queues.note() if self._queues is not None else "",
            )
        )

    def _upsert(self, now: InvocationStatus, pending: list[PendingRequest]) -> None:
        """Upsert what changed of the status, the agent and the memo: each is an event."""
        if now.status != self._published:
            # Each upsert is a history event: publish changes only.
            workflow.upsert_search_attributes([ADK_STATUS.value_set(now.status)])
            self._published = now.status
        if self._flow is not None and now.agent != self._published_agent:
            # A follow-up message went to the agent the conversation is with: the list of
            # runs shows who holds it (only such runs, so no recorded history changes).
            workflow.upsert_search_attributes([ADK_AGENT.value_set(now.agent)])
            self._published_agent = now.agent
        memo = {
            REQUESTS_MEMO: [
                p.summary().model_dump(mode="json", exclude_defaults=True) for p in pending
            ],
            REFUSED_MEMO: now.ignored_signals[-REFUSED_IN_MEMO:],
        }
        memo = self._inbox.memo(memo, self._memo)
        # The memo is what Temporal serves with no worker running: what the run waits for.
        # Runs recorded before it was published must replay without the upsert.
        changed = memo if memo != self._memo else {}
        graph = self._graph_changes()
        if (changed or graph) and _patched(self._baseline, gates.PUBLISH_REQUESTS):
            workflow.upsert_memo({**changed, **graph})
        self._memo = memo

    def _graph_changes(self) -> dict[str, Any]:
        """The graph memo keys that changed since last published: a node's status is one
        small key, the graph itself is published once per run. Graph runs recorded before
        either was published replay without them."""
        flow = self._flow
        if flow is None or flow.graph is None:
            return {}
        memo = graph_memo(flow.graph, flow.graph_nodes)
        changed = {k: v for k, v in memo.items() if self._graph_memo.get(k) != v}
        if not changed or not _patched(self._baseline, gates.GRAPH_STATUS_MEMO):
            return {}
        self._graph_memo = memo
        return changed
