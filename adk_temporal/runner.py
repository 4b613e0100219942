"""``Runner``: the invocation flow in this process, without a Temporal server.

For developing an agent and for fast tests. The runner executes exactly the flow Temporal
runs (:class:`~adk_temporal.flow.InvocationFlow`) by calling the engine-neutral steps
(:mod:`adk_temporal.steps`) directly against the same session, artifact and memory
services, with the same retry policies and timeouts; it never imports Temporal.
Confirmations and inputs are answered through :class:`LocalInvocation` with the rules of the
checked updates. Nothing survives the process: a run that waits for an answer waits in
memory.

.. code-block:: python

    runner = Runner(App([agent]), stores=Stores(InMemorySessionService()))
    run = await runner.start("app", "u-1", "s-1", "weather_agent", "Buy a report")
    status = await run.wait_for_status("awaiting_confirmation", "completed")
    [request] = await run.pending()
    await run.confirm(request.id, True)
    result = await run.result()
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar, Unpack

from google.genai import types

from .app import App, Stores
from .approvals import GrantTerms, InboxAction
from .budgets import Budgets
from .errors import (
    AdkRequestError,
    AdkRunError,
    AppNotServedError,
    SessionBusyError,
    StepFailedError,
)
from .events import Event
from .flow import InvocationFlow
from .flow.compacting import CompactionInput, CompactionResult
from .flow.graph_messages import NodeStepInput, NodeStepResult
from .flow.messages import (
    AdkStatus,
    AppendEventsInput,
    ConfirmInput,
    InvocationCarry,
    InvocationRef,
    InvocationResult,
    InvocationStatus,
    ModelStepInput,
    ModelStepResult,
    PendingRequest,
    ResumeInput,
    RouteStep,
    ToolCallInput,
    ToolCallResult,
    ToolOptions,
    as_content,
)
from .flow.remote import RemoteStepInput, RemoteStepResult
from .flow.requests import Answer, AnswerKind, RequestBook, requesters_of, stamped
from .following import StoreReads, follow_events, with_partials
from .ids import SessionKey, workflow_id_for
from .rewind import ForkResult, RewindResult, fork_session, rewind_session
from .run_config import RunConfig, RunOptions, with_options
from .sessions import Session, create_session
from .steps import SessionRef, StepServices, append_events, model_step, tool_call
from .steps.compaction import compact_events
from .steps.node_step import node_step
from .steps.remote_step import remote_step

__all__ = ["LocalInvocation", "Runner"]

T = TypeVar("T")


class _Retry:
    """Temporal's retry policy semantics, applied in-process."""

    def __init__(
        self,
        *,
        maximum_attempts: int = 0,
        initial_interval: float = 1.0,
        backoff_coefficient: float = 2.0,
        maximum_interval: float | None = None,
        non_retryable: Sequence[str] = (),
        timeout: float | None = None,
    ) -> None:
        self.maximum_attempts = maximum_attempts
        self.initial_interval = initial_interval
        self.backoff_coefficient = backoff_coefficient
        self.maximum_interval = maximum_interval or 100 * initial_interval
        self.non_retryable = set(non_retryable)
        self.timeout = timeout

    @classmethod
    def for_tool(cls, opts: ToolOptions, default_timeout: float) -> _Retry:
        """The policy ``adk_tool_call`` runs under on Temporal, for the same options."""
        settings = opts.retry()
        return cls(
            maximum_attempts=settings.maximum_attempts,
            initial_interval=settings.initial_interval,
            backoff_coefficient=settings.backoff_coefficient,
            maximum_interval=settings.maximum_interval,
            non_retryable=settings.non_retryable_error_types,
            timeout=opts.start_to_close_seconds or default_timeout,
        )

    async def call(self, step: Callable[[int], Awaitable[T]]) -> T:
        """Run ``step(attempt)`` until it succeeds or fails for good (:class:`StepFailedError`)."""
        attempt = 1
        delay = self.initial_interval
        while True:
            try:
                async with asyncio.timeout(self.timeout):
                    return await step(attempt)
            except Exception as err:
                kind = type(err).__name__
                final = (
                    isinstance(err, AdkRequestError)
                    or (isinstance(err, AdkRunError) and not err.retryable)
                    or kind in self.non_retryable
                    or attempt == self.maximum_attempts
                )
                if final:
                    raise StepFailedError(kind, str(err) or kind) from err
                # As Temporal's next_retry_delay: the provider's wait replaces the back-off.
                wait = delay
                if isinstance(err, AdkRunError) and err.retry_after is not None:
                    wait = err.retry_after
            await asyncio.sleep(wait)
            delay = min(delay * self.backoff_coefficient, self.maximum_interval)
            attempt += 1


class _Changes:
    """Wakes waiters to re-check their conditions whenever something changed."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def poke(self) -> None:
        """Something changed: every waiter re-checks its condition."""
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        """Return once ``condition()`` is true."""
        while not condition():
            await self._event.wait()


class _LocalExecutor:
    """The flow's steps as direct calls; waiting on answers given to :class:`LocalInvocation`."""

    def __init__(
        self,
        services: StepServices,
        workflow_id: str,
        *,
        model_timeout_seconds: float,
        model_maximum_attempts: int,
        tool_timeout_seconds: float,
    ) -> None:
        self._services = services
        self._workflow_id = workflow_id
        self._model = _Retry(maximum_attempts=model_maximum_attempts, timeout=model_timeout_seconds)
        self._tool_timeout = tool_timeout_seconds
        self._remote = _Retry(maximum_attempts=model_maximum_attempts, timeout=tool_timeout_seconds)
        self._append = _Retry(timeout=60.0)
        self.changes = _Changes()

    async def model_step(self, inp: ModelStepInput, *, summary: str) -> ModelStepResult:
        """The model step, called directly."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        result = await self._model.call(
            lambda attempt: model_step(self._services, inp, ref, attempt=attempt)
        )
        # A runner's services have no model limits, so no step is ever sent elsewhere.
        assert not isinstance(result, RouteStep), "in-process model steps are never routed"
        return result

    async def tool_call(self, inp: ToolCallInput, *, summary: str) -> ToolCallResult:
        """The tool step, called directly under the tool's retry policy."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        retry = _Retry.for_tool(inp.call.options, self._tool_timeout)
        return await retry.call(
            lambda attempt: tool_call(self._services, inp, ref, attempt=attempt)
        )

    async def node_step(self, inp: NodeStepInput, *, summary: str) -> NodeStepResult:
        """The node step, called directly; retried only on infrastructure errors (a node's
        own exceptions are its result, retried by the flow under its ``RetryConfig``)."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        return await self._append.call(lambda _: node_step(self._services, inp, ref))

    async def remote_step(self, inp: RemoteStepInput, *, summary: str) -> RemoteStepResult:
        """The remote step, called directly: retried as model steps are, timed as tools."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        return await self._remote.call(
            lambda attempt: remote_step(self._services, inp, ref, attempt=attempt)
        )

    async def append_events(self, inp: AppendEventsInput, *, summary: str) -> None:
        """The append step, called directly."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        await self._append.call(lambda _: append_events(self._services, inp, ref))

    async def compact(self, inp: CompactionInput, *, summary: str) -> CompactionResult:
        """The compaction step, called directly under the model steps' retry policy."""
        ref = SessionRef.resolve(inp.ref, self._workflow_id)
        return await self._model.call(lambda _: compact_events(self._services, inp, ref))

    async def wait_until(
        self, condition: Callable[[], bool], *, timeout: float | None = None
    ) -> bool:
        """Wait until an answer makes ``condition()`` true, at most ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                await self.changes.wait_for(condition)
        except TimeoutError:
            return False
        return True

    async def escalated(self, request: PendingRequest, step: str) -> None:
        """Nothing to send: in-process runs send no notifications (the trail records it)."""
        self.changes.poke()

    def new_id(self) -> str:
        """A random UUID."""
        return str(uuid.uuid4())

    def now(self) -> float:
        """The wall clock."""
        return time.time()

    def status_changed(self) -> None:
        """Wake whoever waits on the invocation's status."""
        self.changes.poke()

    def patched(self, change: str) -> bool:
        """Always: an in-process run has no recorded history to stay compatible with."""
        return True

    def should_hand_over(self) -> bool:
        """Never: an in-process run has no history to bound."""
        return False

    async def hand_over(self, carry: Callable[[], InvocationCarry]) -> None:
        """Unreachable: :meth:`should_hand_over` is always false."""
        raise NotImplementedError("an in-process invocation never hands over")


class LocalInvocation:
    """One in-process invocation: follow it, inspect it, answer its requests.

    The methods mirror :class:`~adk_temporal.client.InvocationHandle`, so code written
    against one runs against the other.
    """

    def __init__(
        self,
        runner: Runner,
        flow: InvocationFlow,
        executor: _LocalExecutor,
        key: SessionKey,
    ) -> None:
        self._runner = runner
        self._flow = flow
        self._executor = executor
        self._key = key
        self._task: asyncio.Task[InvocationResult] | None = None

    def _begin(self, message: types.Content | None) -> None:
        self._task = asyncio.create_task(self._run(message))

    async def _run(self, message: types.Content | None) -> InvocationResult:
        try:
            return await self._flow.run(message)
        except StepFailedError as err:
            return InvocationResult(
                invocation_id=self._flow.invocation_id,
                status="failed",
                steps=self._flow.step,
                error=f"{err.kind}: {err.message}",
            )
        except asyncio.CancelledError:
            # The flow stored the cancellation; the task ends with that result.
            return InvocationResult(
                invocation_id=self._flow.invocation_id,
                status="cancelled",
                steps=self._flow.step,
                error=self._flow.error,
            )
        finally:
            self._runner._running.discard(self.workflow_id)
            self._executor.changes.poke()

    @property
    def workflow_id(self) -> str:
        """The id the invocation would have on Temporal: ``adk/{app}/{user}/{session}``."""
        return workflow_id_for(self._key)

    @property
    def invocation_id(self) -> str:
        """The invocation id."""
        return self._flow.invocation_id

    async def status(self) -> InvocationStatus:
        """Where the invocation stands (what ``adk_status`` reports on Temporal)."""
        return self._flow.snapshot()

    async def pending(self) -> list[PendingRequest]:
        """The open confirmation and input requests."""
        return self._flow.book.unanswered()

    def done(self) -> bool:
        """True once the invocation has ended (completed or failed)."""
        return self._task is not None and self._task.done()

    async def wait_for_status(
        self, *statuses: AdkStatus, timeout: float = 60.0
    ) -> InvocationStatus:
        """Wait until the status is one of ``statuses``, or the invocation ended.

        Raises:
            TimeoutError: Neither happened within ``timeout`` seconds.
        """
        async with asyncio.timeout(timeout):
            await self._executor.changes.wait_for(
                lambda: self._flow.status in statuses or self.done()
            )
        return self._flow.snapshot()

    async def confirm(
        self,
        confirmation_id: str,
        confirmed: bool,
        payload: Any = None,
        *,
        call_digest: str | None = None,
        answered_by: str | None = None,
        groups: Sequence[str] | None = None,
        edited_args: dict[str, Any] | None = None,
        grant: GrantTerms | None = None,
    ) -> None:
        """Approve or reject one confirmation request, checked like ``adk_confirm_checked``;
        recorded as answered by ``answered_by`` (in ``groups``) through channel
        ``in-process``; an approval with ``edited_args`` runs the call with them, one with
        ``grant`` lets later calls of the tool run unasked (``AdkClient``'s ``confirm``).

        Raises:
            UnknownRequestIdError: No open request has this id, or it was answered.
            InvalidAnswerError: The payload is over its budget.
            ConfirmationMismatchError: ``call_digest`` does not match the call.
            PolicyRefusalError: The request's approval policy or a claim refuses it.
        """
        await self._answer(
            "confirmation",
            ConfirmInput(
                confirmation_id=confirmation_id,
                confirmed=confirmed,
                payload=payload,
                call_digest=call_digest,
                answered_by=answered_by,
                groups=list(groups) if groups is not None else None,
                edited_args=edited_args,
                grant=grant,
            ),
        )

    async def resume(
        self, interrupt_id: str, input: Any, *, answered_by: str | None = None
    ) -> None:
        """Answer one input request (``None`` is an answer), checked like ``adk_resume_checked``,
        recorded as answered by ``answered_by``.

        Raises:
            UnknownRequestIdError: No open input request has this id.
            InvalidResumeInputError: ``input`` violates the request's schema.
            InvalidAnswerError: ``input`` is over its budget.
            RequestClaimedError: Another principal holds a claim on the request.
        """
        answer = ResumeInput(interrupt_id=interrupt_id, input=input, answered_by=answered_by)
        await self._answer("input", answer)

    async def _answer(self, kind: AnswerKind, answer: Answer) -> None:
        book = self._flow.book
        now = self._executor.now()
        checked = book.check(kind, answer.model_dump(), now=now)
        book.accept(stamped(checked, now=now, channel="in-process"))
        self._executor.changes.poke()

    async def inbox(self, action: InboxAction) -> None:
        """Claim, release or assign one open request, checked like ``adk_inbox_checked``.

        Raises:
            UnknownRequestIdError: No open, unanswered request has this id.
            PolicyRefusalError: Another principal holds a claim, or the claimant may not
                answer the request.
        """
        now = self._executor.now()
        stamped_action = action.model_copy(
            update={"at": now, "channel": action.channel or "in-process"}
        )
        problem = self._flow.book.inbox_problem(stamped_action, now)
        if problem is not None:
            raise problem
        self._flow.book.take_inbox(stamped_action, now)
        self._executor.changes.poke()

    async def cancel(self) -> None:
        """Cancel the invocation: the running step sees ``asyncio.CancelledError``, the open
        requests close and one cancellation event is stored."""
        assert self._task is not None
        self._task.cancel()
        await asyncio.wait([self._task])

    async def result(self) -> InvocationResult:
        """Wait for the invocation to end; a failed step gives status ``failed``."""
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def events(
        self, *, poll_interval: float = 0.05, after: str | None = None
    ) -> AsyncIterator[Event]:
        """This invocation's events as they are appended, until it stops running; ``after``
        as for :meth:`InvocationHandle.events <adk_temporal.client.InvocationHandle.events>`."""

        async for event in self._follow(poll_interval, after, None):
            yield event

    def _follow(
        self, poll_interval: float, after: str | None, reads: StoreReads | None
    ) -> AsyncGenerator[Event, None]:
        async def status() -> InvocationStatus:
            return self._flow.snapshot()

        return follow_events(
            self._runner.services.sessions,
            self._key,
            status,
            self.done,
            poll_interval=poll_interval,
            after=after,
            reads=reads,
        )

    async def stream(
        self, *, poll_interval: float = 0.05, after: str | None = None
    ) -> AsyncIterator[Event]:
        """:meth:`events` plus the model's text as it is produced (see
        :meth:`InvocationHandle.stream <adk_temporal.client.InvocationHandle.stream>`)."""

        async def invocation_id() -> str:
            return self._flow.invocation_id

        reads = StoreReads()
        async for event in with_partials(
            self._runner.services.sessions,
            self._key,
            self._follow(poll_interval, after, reads),
            invocation_id,
            reads,
        ):
            yield event


class Runner:
    """Runs invocations in this process against the given stores.

    Args:
        app: What it serves, and every setting of it, as a worker takes it
            (:class:`~adk_temporal.app.App`); ``notifications`` and ``model_limits`` need
            Temporal and are ignored here. A named app's runner starts only that app's runs.
        stores: Where sessions and artifacts live.
        budgets: The size limits of what enters an invocation (a client's setting: an
            ``AdkClient`` takes the same).
    """

    def __init__(self, app: App, *, stores: Stores, budgets: Budgets | None = None) -> None:
        self.app = app
        self.budgets = budgets or Budgets()
        # Notifications are posted by a durable child workflow, and model limits are held by
        # Temporal's task queues: neither exists in-process.
        self.services = StepServices.build(
            replace(app, notifications=None, model_limits=()), stores
        )
        self._running: set[str] = set()

    async def start(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        agent: str,
        message: str | types.Content | None,
        *,
        invocation_id: str | None = None,
        config: RunConfig | None = None,
        started_by: str | None = None,
        **options: Unpack[RunOptions],
    ) -> LocalInvocation:
        """Start an invocation of ``agent`` with ``message``; it runs as a task.

        The arguments mean what they mean for :meth:`AdkClient.start
        <adk_temporal.client.AdkClient.start>`; the heartbeat and continue-as-new options
        have nothing to do in-process.

        Raises:
            InvalidIdError: An id breaks the id grammar.
            BudgetExceededError: The message is over the ``message_bytes`` budget.
            SessionBusyError: An invocation of this runner is still running in the session.
            ValueError: An option is out of range or unknown.
            AppNotServedError: The runner serves a named app, and ``app_name`` is another.
        """
        key = SessionKey(app_name, user_id, session_id)
        workflow_id = workflow_id_for(key)
        run = with_options(config, options)
        content = as_content(message, self.budgets)
        if self.app.name is not None and app_name != self.app.name:
            raise AppNotServedError(
                f"this runner serves app {self.app.name!r}, not {app_name!r}: start the run "
                f"with app_name={self.app.name!r}"
            )
        if workflow_id in self._running:
            raise SessionBusyError(
                f"session {key} is busy: an in-process invocation is still running; answer "
                "its pending requests or wait for it"
            )
        executor = _LocalExecutor(
            self.services,
            workflow_id,
            model_timeout_seconds=run.model_timeout_seconds,
            model_maximum_attempts=run.model_maximum_attempts,
            tool_timeout_seconds=run.tool_timeout_seconds,
        )
        ref = InvocationRef(
            agent_name=agent, invocation_id=invocation_id or f"e-{executor.new_id()}"
        )
        flow = InvocationFlow(
            executor,
            ref,
            config=run,
            budgets=self.budgets,
            book=RequestBook(self.budgets, requesters=requesters_of(started_by, user_id)),
        )
        invocation = LocalInvocation(self, flow, executor, key)
        self._running.add(workflow_id)
        invocation._begin(content)
        return invocation

    async def run(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        agent: str,
        message: str | types.Content | None,
        **options: Any,
    ) -> InvocationResult:
        """Start an invocation and wait for its result (it must not pause)."""
        invocation = await self.start(app_name, user_id, session_id, agent, message, **options)
        status = await invocation.wait_for_status("awaiting_confirmation", "awaiting_input")
        if not invocation.done():
            raise RuntimeError(
                f"the invocation paused ({status.status}); use start() and answer it"
            )
        return await invocation.result()

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session with initial state (:meth:`AdkClient.create_session
        <adk_temporal.client.AdkClient.create_session>`, in this runner's store)."""
        return await create_session(
            self.services.sessions,
            app_name=app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            budgets=self.budgets,
        )

    async def rewind(
        self, key: SessionKey, before_invocation_id: str, *, event_id: str | None = None
    ) -> RewindResult:
        """Rewind a session to before one of its invocations (:mod:`adk_temporal.rewind`).

        State (the initial state included) and session artifacts are restored by one
        appended event and new artifact versions; the model no longer sees the turns since.

        Args:
            key: The session.
            before_invocation_id: The first invocation taken back.
            event_id: The rewind event's id, to retry a rewind without repeating it.

        Raises:
            SessionBusyError: An invocation of this runner runs or waits in the session.
            InvocationNotFoundError: The session has no such invocation.
            SessionNotFoundError: No such session.
        """
        return await rewind_session(
            self.services.sessions,
            self.services.artifacts,
            key,
            before_invocation_id,
            event_id=event_id,
            busy=workflow_id_for(key) in self._running,
        )

    async def fork(
        self,
        key: SessionKey,
        invocation_id: str | None = None,
        *,
        new_session_id: str | None = None,
    ) -> ForkResult:
        """Copy a session as of one of its invocations into a new session (:mod:`.rewind`).

        Args:
            key: The session to copy; it is not changed.
            invocation_id: The last invocation copied; ``None`` copies everything.
            new_session_id: The new session's id (a new ``s-…`` id when ``None``); the same
                id retries a fork without repeating it.

        Raises:
            SessionBusyError: The fork would copy an invocation of this runner that still
                runs or waits.
            InvocationNotFoundError: The session has no such invocation.
            SessionExistsError: ``new_session_id`` is taken.
        """
        return await fork_session(
            self.services.sessions,
            self.services.artifacts,
            key,
            invocation_id,
            new_session_id=new_session_id,
            busy=workflow_id_for(key) in self._running,
        )
