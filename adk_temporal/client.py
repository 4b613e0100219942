"""``AdkClient``: start invocations and answer their requests from any process.

An invocation is a run of workflow ``adk/{app}/{user_id}/{session_id}``; the id-conflict
policy FAIL makes Temporal refuse a second concurrent invocation in the same session. A
message sent meanwhile follows its double-texting policy
(:mod:`adk_temporal.double_texting`): ``reject`` raises
:class:`~adk_temporal.errors.SessionBusyError` here; the others go to the running run, which
queues the message as an invocation of its own (whose handle follows it from the queue to
its result) or refuses it. Approvals and inputs go through the checked updates by default,
so a wrong id is an error the caller sees.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from datetime import timedelta
from typing import Any, Unpack

from google.genai import types
from pydantic import BaseModel
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
    WorkflowContinuedAsNewError,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import (
    Priority,
    WorkflowIDConflictPolicy,
)
from temporalio.converter import PayloadCodec
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from .activities.short_ids import run_invocation_id
from .approvals import GrantTerms, InboxAction, InboxFilter
from .artifacts import ArtifactService
from .budgets import Budgets
from .converter import adk_data_converter
from .double_texting import (
    DoubleTexting,
    InvalidQueuedMessageError,
    MessageAck,
    MessageWithdrawnError,
    QueuedMessage,
    QueuedMessageNotFoundError,
    QueuedSummary,
    QueueFullError,
    WithdrawInput,
)
from .errors import (
    AdkRequestError,
    InvalidIdError,
    InvocationClosedError,
    SessionBusyError,
)
from .events import Event
from .flow.messages import (
    AdkStatus,
    ConfirmInput,
    InvocationResult,
    InvocationStatus,
    PendingRequest,
    Refusal,
    RequestSummary,
    ResumeInput,
    as_content,
)
from .flow.requests import AnswerKind, parse_answer, refusal, refused
from .following import StoreReads, follow_events, with_partials
from .ids import (
    DEFAULT_TASK_QUEUE,
    SessionKey,
    app_task_queue,
    id_problem,
    session_key_of,
    workflow_id_for,
)
from .keys import (
    CannotForgetError,
    DataKeys,
    ForgetEntry,
    RetentionReport,
    SweepRequest,
    Target,
    data_keys_of,
    forget,
    sessions_of,
)
from .rewind import ForkResult, RewindResult, fork_session, rewind_session
from .run_config import RunConfig, RunOptions, with_options
from .sessions import Session, SessionService, create_session
from .start_queues import StartQueues, workflow_pollers
from .tracing import Telemetry
from .visibility import invocations_query, list_page, quoted, run_status, task_queue_clause
from .workflows.messages import (
    BASELINE,
    CONFIRM_CHECKED_UPDATE,
    CONFIRM_SIGNAL,
    INBOX_CHECKED_UPDATE,
    INBOX_SIGNAL,
    MESSAGE_CHECKED_UPDATE,
    PENDING_QUERY,
    RESUME_CHECKED_UPDATE,
    RESUME_SIGNAL,
    STATUS_QUERY,
    WITHDRAW_UPDATE,
    InvocationInput,
    Published,
    start_attributes,
)
from .workflows.retention import retention_schedule_id

__all__ = [
    "DEFAULT_FORGET_GRACE",
    "DEFAULT_TASK_QUEUE",
    "AdkClient",
    "InvocationHandle",
]

DEFAULT_FORGET_GRACE = timedelta(seconds=30)
"""How long a forget waits for a cancelled run to close before terminating it."""


def _waiting_query(
    task_queue: str | None,
    statuses: Sequence[AdkStatus] = ("awaiting_confirmation", "awaiting_input"),
    app_name: str | None = None,
    user_id: str | None = None,
) -> str:
    values = ", ".join(quoted(s, "status") for s in statuses)
    query = f"AdkStatus IN ({values}) AND ExecutionStatus = 'Running'"
    if app_name is not None:
        query += f" AND AdkApp = {quoted(app_name, 'app_name')}"
    if user_id is not None:
        query += f" AND AdkUser = {quoted(user_id, 'user_id')}"
    if task_queue is not None:
        query += f" AND {task_queue_clause(task_queue)}"
    return query


def _rebuilt(err: WorkflowUpdateFailedError) -> Exception | None:
    """A worker's refusal of a checked update as its typed error; ``None`` when it names
    none of ours."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type:
        return refusal(cause.type, cause.message)
    return None


class InvocationHandle:
    """One invocation: follow it, inspect it, answer its requests.

    Args:
        handle: The handle of the run that started the invocation; its result follows
            continue-as-new to the run that finishes.
        current: A handle without a run id, so queries, signals and updates reach the
            latest run even after the invocation continued as new; defaults to ``handle``.
        session_service: Lets :meth:`events` follow the session's events.
        budgets: Answers over ``answer_bytes`` are refused before they are sent.
        key: The session; ``None`` for a run whose workflow id names none.
        client: Lets :meth:`result` follow the session's runs invocation by invocation.
        invocation_id: The invocation's id, when known: its result is its own even when
            the session's workflow goes on into invocations queued behind it.
        queued: The invocation waits in the session's queue (``handle`` is the run that
            took it): it has not started yet.
    """

    def __init__(
        self,
        handle: WorkflowHandle[Any, Any],
        *,
        current: WorkflowHandle[Any, Any] | None = None,
        session_service: SessionService | None = None,
        budgets: Budgets | None = None,
        key: SessionKey | None = None,
        client: Client | None = None,
        invocation_id: str | None = None,
        queued: bool = False,
    ) -> None:
        self._handle = handle
        self._current = current or handle
        self._sessions = session_service
        self._budgets = budgets or Budgets()
        self._key = key or SessionKey("", "", "")
        self._client = client
        self._invocation_id = invocation_id if client is not None else None
        self._queued = queued
        self._result: asyncio.Future[InvocationResult] | None = None

    @property
    def workflow_id(self) -> str:
        """The workflow id, ``adk/{app}/{user_id}/{session_id}``."""
        return self._handle.id

    @property
    def run_id(self) -> str | None:
        """The run id of this invocation, when known (a queued one's: the run that took it)."""
        return self._handle.result_run_id or self._handle.run_id

    @property
    def invocation_id(self) -> str | None:
        """The invocation's id, when the handle knows it (started or queued by a client)."""
        return self._invocation_id

    @property
    def is_queued(self) -> bool:
        """Whether the invocation was queued behind a busy session's (double texting)."""
        return self._queued

    async def status(self) -> InvocationStatus:
        """The invocation's status (query ``adk_status``).

        While the session's workflow runs another invocation: a queued one reports
        ``running`` at step 0 until it starts, one that ended reports how it ended.
        """
        status: InvocationStatus = await self._current.query(
            STATUS_QUERY, result_type=InvocationStatus
        )
        mine = self._invocation_id
        if mine is None or status.invocation_id == mine:
            return status
        if any(q.invocation_id == mine for q in await self.queued()):
            return InvocationStatus(status="running", invocation_id=mine, agent="", step=0)
        return _ended_status(await self.result())

    async def queued(self) -> list[QueuedSummary]:
        """The messages waiting for the session, in the order they run (from the memo the
        run publishes: no worker is needed)."""
        return (await self.published()).queued

    async def withdraw(self) -> QueuedSummary:
        """Take this queued invocation's message out of the session's queue.

        Raises:
            QueuedMessageNotFoundError: It is not queued (it started, ran, or was withdrawn).
            ValueError: The handle is not of a queued invocation.
        """
        if self._invocation_id is None:
            raise ValueError("withdraw() needs a handle whose invocation id is known")
        return await _withdraw(self._current, self._invocation_id, self._key)

    async def pending(self) -> list[PendingRequest]:
        """The open confirmation and input requests (query ``adk_pending``)."""
        pending: list[PendingRequest] = await self._current.query(
            PENDING_QUERY, result_type=list[PendingRequest]
        )
        return pending

    async def wait_for_status(
        self, *statuses: AdkStatus, timeout: float = 60.0, interval: float = 0.1
    ) -> InvocationStatus:
        """Poll ``adk_status`` until it is one of ``statuses``.

        Raises:
            TimeoutError: The status was not reached within ``timeout`` seconds.
        """
        async with asyncio.timeout(timeout):
            while True:
                current = await self.status()
                if current.status in statuses:
                    return current
                await asyncio.sleep(interval)

    async def confirm(
        self,
        confirmation_id: str,
        confirmed: bool,
        payload: Any = None,
        *,
        call_digest: str | None = None,
        checked: bool = True,
        answered_by: str | None = None,
        channel: str | None = None,
        edited_args: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
        grant: GrantTerms | None = None,
    ) -> None:
        """Approve or reject one confirmation request.

        Args:
            confirmation_id: The request's id (``adk-…``), from :meth:`pending`.
            confirmed: ``True`` approves, ``False`` rejects.
            payload: Optional data for the re-entered tool (``ctx.tool_confirmation.payload``).
            call_digest: When given, the reply only applies to a call with this digest.
            checked: Use the checked update (errors raised here) instead of the signal.
            answered_by: Who answers, as the caller authenticated them; recorded with the
                answer in the session's reply event and the audit listing.
            channel: How the answer came (``cli``, ``gateway``…); ``None``: the run records
                ``update`` or ``signal``.
            edited_args: An approval's edited arguments: the call runs with them (its tool
                must be declared ``editable=True``; they must satisfy its parameter schema).
            groups: The groups the caller authenticated ``answered_by`` in (a policy's
                approvers may be groups).
            grant: With an approval, a standing grant: later calls of the tool it covers
                run unasked (:class:`~adk_temporal.approvals.GrantTerms`).

        Raises:
            InvalidAnswerError: ``payload`` is over the ``answer_bytes`` budget (nothing is
                sent).
            UnknownRequestIdError: No open request has this id (checked only).
            ConfirmationMismatchError: ``call_digest`` does not match (checked only).
            EditNotAllowedError: ``edited_args`` for a tool not declared editable, or with
                a rejection (checked only).
            InvalidEditError: ``edited_args`` break the tool's parameter schema (checked
                only).
            PolicyRefusalError: The request's approval policy or a claim refuses the
                answer (checked only): a second vote, a requester's own approval…
        """
        answer = ConfirmInput(
            confirmation_id=confirmation_id,
            confirmed=confirmed,
            payload=payload,
            call_digest=call_digest,
            answered_by=answered_by,
            channel=channel,
            edited_args=edited_args,
            groups=list(groups) if groups is not None else None,
            grant=grant,
        )
        await self.answer(answer, checked=checked)

    async def resume(
        self,
        interrupt_id: str,
        input: Any,
        *,
        checked: bool = True,
        answered_by: str | None = None,
        channel: str | None = None,
        groups: Sequence[str] | None = None,
    ) -> None:
        """Answer one input request; ``None`` is a valid answer (``answered_by``,
        ``channel`` and ``groups`` as in :meth:`confirm`).

        Raises:
            InvalidAnswerError: ``input`` is over the ``answer_bytes`` budget (nothing is sent).
            UnknownRequestIdError: No open input request has this id (checked only).
            InvalidResumeInputError: ``input`` violates the request's schema (checked only).
        """
        answer = ResumeInput(
            interrupt_id=interrupt_id,
            input=input,
            answered_by=answered_by,
            channel=channel,
            groups=list(groups) if groups is not None else None,
        )
        await self.answer(answer, checked=checked)

    async def answer(self, answer: ConfirmInput | ResumeInput, *, checked: bool = True) -> None:
        """Send one answer as it is: the checked update (a worker's refusal is raised here)
        or the signal (Temporal keeps it until a worker picks the run up).

        This is the primitive under :meth:`confirm` and :meth:`resume`; surfaces admit
        answers through :class:`~adk_temporal.answers.AnswerDesk`, which checks first.

        Raises:
            InvalidAnswerError: The answer is malformed or over the ``answer_bytes`` budget
                (nothing is sent).
            AdkRequestError: A worker refused the checked update (its typed error).
        """
        # Refused here, before Temporal: an update over 2 MB cannot even be refused by the
        # workflow (the refusal would echo it), and a signal would sit in history.
        confirming = isinstance(answer, ConfirmInput)
        kind: AnswerKind = "confirmation" if confirming else "input"
        # Python values, not their JSON: JSON mode would turn an infinity into null.
        parsed = parse_answer(kind, answer.model_dump(), self._budgets)
        if isinstance(parsed, Refusal):
            raise refused(parsed)
        if not checked:
            await self._send(CONFIRM_SIGNAL if confirming else RESUME_SIGNAL, answer, checked=False)
            return
        name = CONFIRM_CHECKED_UPDATE if confirming else RESUME_CHECKED_UPDATE
        await self._send(name, answer, checked=True)

    async def inbox(self, action: InboxAction, *, checked: bool = True) -> None:
        """Claim, release or assign one open request (the checked update, whose refusal is
        raised here, or the signal).

        Raises:
            UnknownRequestIdError: No open, unanswered request has the id (checked only).
            PolicyRefusalError: Another principal holds a claim, or the claimant may not
                answer the request (checked only).
        """
        await self._send(INBOX_CHECKED_UPDATE if checked else INBOX_SIGNAL, action, checked=checked)

    async def _send(self, name: str, arg: BaseModel, *, checked: bool) -> None:
        """Send ``arg`` as signal ``name``, or as the checked update ``name``, a worker's
        refusal raised as its typed error."""
        if not checked:
            await self._current.signal(name, arg)
            return
        try:
            await self._current.execute_update(name, arg)
        except WorkflowUpdateFailedError as err:
            known = _rebuilt(err)
            if known is None:
                raise
            raise known from err

    async def cancel(self) -> None:
        """Cancel the invocation (Temporal's workflow cancellation).

        Running model and tool steps learn of it through their heartbeats (tools see
        ``asyncio.CancelledError``), the open requests close, one cancellation event is
        stored, ``AdkStatus`` becomes ``cancelled`` and the session takes the next message.

        Raises:
            InvocationClosedError: The run is no longer running (completed, failed,
                cancelled, terminated); nothing is sent, the error names its state.
        """
        description = await self._current.describe()
        if description.status != WorkflowExecutionStatus.RUNNING:
            # Temporal takes a cancel request for a closed run and does nothing with it.
            raise InvocationClosedError(
                f"{self.workflow_id} is {run_status(description)}: only a running invocation "
                "can be cancelled"
            )
        await self._current.cancel()

    async def result(self) -> InvocationResult:
        """Wait for the invocation to finish and return its result.

        The session's workflow may go on into messages queued behind this invocation
        (double texting): the result is this invocation's all the same, read where its run
        handed the session on.

        Raises:
            MessageWithdrawnError: A queued invocation never ran (withdrawn, superseded by
                an interrupt or rollback, or the workflow was cancelled first).
            WorkflowFailureError: The invocation's run failed, was cancelled or terminated.
        """
        if self._client is None or self._invocation_id is None:
            return InvocationResult.model_validate(await self._handle.result())
        # One walk per handle: followers and callers share it.
        if self._result is None:
            self._result = asyncio.ensure_future(self._walk(self._client, self._invocation_id))
        return await asyncio.shield(self._result)

    async def _walk(self, client: Client, mine: str) -> InvocationResult:
        """Follow the session's runs from :attr:`run_id` to the one that ends ``mine``."""
        run_id, started = self.run_id, not self._queued
        while True:
            run = client.get_workflow_handle(self.workflow_id, run_id=run_id)
            try:
                result = InvocationResult.model_validate(await run.result(follow_runs=False))
            except WorkflowContinuedAsNewError as err:
                run_id = err.new_execution_run_id
                nxt = await _start_input(client, self.workflow_id, run_id)
                if nxt.before is not None and nxt.before.invocation_id == mine:
                    return nxt.before
                running = nxt.carry.invocation_id if nxt.carry else nxt.invocation_id
                started = started or running == mine
                continue
            except WorkflowFailureError as err:
                if started:
                    raise
                raise _withdrawn(mine, "the session's workflow ended first") from err
            if started or result.invocation_id == mine:
                return result
            raise _withdrawn(mine, "the session's workflow completed without running it")

    async def describe(self) -> WorkflowExecutionDescription:
        """Temporal's description of the run (search attributes, status, details)."""
        return await self._current.describe()

    async def published(self) -> Published:
        """The open requests and latest refused answers the run published in its memo.

        Served by Temporal itself: it works while no worker runs, unlike :meth:`pending`
        and :meth:`status` (queries).
        """
        description = await self._current.describe()
        return Published.from_memo(await description.memo())

    async def events(
        self, *, poll_interval: float = 0.2, after: str | None = None
    ) -> AsyncIterator[Event]:
        """Follow the session's events from now until the invocation stops running.

        Needs the session service the workers write to (given to :class:`AdkClient`).
        Yields events already stored for this invocation first, then new ones as they are
        appended; stops after the run completes, fails or pauses for an answer, or once the
        workflow has closed for any reason (terminated, cancelled, timed out). Events of
        the session's earlier invocations are skipped. A follower reconnecting passes the
        id of the last event it got as ``after`` and resumes behind it; an id that is not
        one of this invocation's events starts from the first.
        """
        if self._sessions is None:
            raise ValueError("events() needs AdkClient(session_service=...)")
        async for event in self._follow(self._sessions, poll_interval, after, None):
            yield event

    async def _follow(
        self,
        sessions: SessionService,
        poll_interval: float,
        after: str | None,
        reads: StoreReads | None,
    ) -> AsyncGenerator[Event, None]:
        # A run closed from outside (or by a workflow error) never reports a final
        # adk_status, so following only the status could wait forever.
        closed = asyncio.ensure_future(self.result())

        async def status() -> InvocationStatus | None:
            # A query waits up to half a minute for a worker, while a closed run's result
            # (with its invocation id) is read from history at once: take whichever answers
            # first, so a finished run's events are shown with no worker running.
            asked = asyncio.ensure_future(self._safe_status())
            await asyncio.wait({asked, closed}, return_when=asyncio.FIRST_COMPLETED)
            if asked.done():
                return asked.result()
            if closed.exception() is None:
                # Left to finish, not cancelled: a worker answering a query its client
                # abandoned logs a warning.
                _LINGERING.add(asked)
                asked.add_done_callback(_LINGERING.discard)
                return _ended_status(closed.result())
            return await asked

        try:
            async for event in follow_events(
                sessions,
                self._key,
                status,
                closed.done,
                poll_interval=poll_interval,
                after=after,
                reads=reads,
            ):
                yield event
        finally:
            # The outcome is the caller's to ask for (result()); retrieving it here only
            # keeps asyncio from logging a failed run as an unhandled exception.
            closed.add_done_callback(lambda f: f.cancelled() or f.exception())
            closed.cancel()

    async def stream(
        self, *, poll_interval: float = 0.2, after: str | None = None
    ) -> AsyncIterator[Event]:
        """:meth:`events`, plus the model's text as it is produced (partial events).

        Pieces come only from invocations started with ``stream=True``, through the session
        store's side channel (never through Temporal history). Each is an event with
        ``partial=True`` and the id of the model event it precedes, holding the text new
        since the previous piece; the model event itself (``partial`` unset) supersedes
        them, and no piece of a step follows it. A retried step's pieces carry a higher
        ``attempt``: drop the text shown for the lower one. Ends, and resumes ``after`` an
        event, as :meth:`events` does.
        """
        if self._sessions is None:
            raise ValueError("stream() needs AdkClient(session_service=...)")

        async def invocation_id() -> str | None:
            status = await self._safe_status()
            return status.invocation_id if status is not None else None

        reads = StoreReads()
        async for event in with_partials(
            self._sessions,
            self._key,
            self._follow(self._sessions, poll_interval, after, reads),
            invocation_id,
            reads,
        ):
            yield event

    async def _safe_status(self) -> InvocationStatus | None:
        try:
            return await self.status()
        except Exception:  # not started yet or already gone: keep polling the store
            return None


_LINGERING: set[asyncio.Future[InvocationStatus | None]] = set()
"""Status queries nobody waits for any more, kept referenced until they finish."""


def _check_app_name(app_name: str) -> None:
    problem = id_problem("app_name", app_name) if app_name else "app_name is missing"
    if problem is not None:
        raise InvalidIdError(f"invalid ids: {problem}")


async def _start_input(client: Client, workflow_id: str, run_id: str) -> InvocationInput:
    """The start input of one run, read from its first history event."""
    run = client.get_workflow_handle(workflow_id, run_id=run_id)
    async for event in run.fetch_history_events(page_size=1):
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        [inp] = await client.data_converter.decode(payloads, [InvocationInput])
        return InvocationInput.model_validate(inp)
    raise LookupError(f"run {run_id} of {workflow_id} has no history")


_SEND_ATTEMPTS = 5
"""How often a start and a send alternate: each failed try means the run it found ended
meanwhile, so the next start succeeds unless another caller's began first."""


def _busy(key: SessionKey) -> SessionBusyError:
    return SessionBusyError(
        f"session {key} is busy: invocation {workflow_id_for(key)!r} is still running; "
        "answer its pending requests or wait for it"
    )


async def _withdraw(
    current: WorkflowHandle[Any, Any], invocation_id: str, key: SessionKey
) -> QueuedSummary:
    """Send ``adk_withdraw`` for ``invocation_id`` to the session's running run.

    Raises:
        QueuedMessageNotFoundError: No such message waits (or no run is running).
    """
    try:
        withdrawn: QueuedSummary = await current.execute_update(
            WITHDRAW_UPDATE, WithdrawInput(invocation_id=invocation_id), result_type=QueuedSummary
        )
    except WorkflowUpdateFailedError as err:
        raise _sending_error(err, key) from err
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        raise QueuedMessageNotFoundError(
            f"no queued message has invocation id {invocation_id!r}: the session's workflow "
            "is not running"
        ) from err
    return withdrawn


def _withdrawn(invocation_id: str, why: str) -> MessageWithdrawnError:
    return MessageWithdrawnError(
        f"the queued message of invocation {invocation_id!r} never ran: it was withdrawn or "
        f"superseded, or {why}"
    )


_REFUSALS: dict[str, type[AdkRequestError]] = {
    "InvalidQueuedMessageError": InvalidQueuedMessageError,
    "QueueFullError": QueueFullError,
    "QueuedMessageNotFoundError": QueuedMessageNotFoundError,
}


def _sending_error(err: WorkflowUpdateFailedError, key: SessionKey) -> AdkRequestError:
    """The typed error a run's refusal of a message (or of a withdrawal) stands for."""
    cause = err.cause
    kind = cause.type if isinstance(cause, ApplicationError) else None
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
    if kind == "SessionBusyError":
        return SessionBusyError(f"{_busy(key)} ({message})")
    if kind in _REFUSALS:
        return _REFUSALS[kind](f"session {key}: {message}")
    # A run started before double texting has no handler for the update.
    return SessionBusyError(
        f"session {key} is busy: its invocation takes no second message ({message})"
    )


def _ended_status(result: InvocationResult) -> InvocationStatus:
    """What ``adk_status`` said when the run returned ``result`` (its agent aside)."""
    return InvocationStatus(
        status=result.status,
        invocation_id=result.invocation_id,
        agent="",
        step=result.steps,
        final_text=result.final_text,
        error=result.error,
        usage=result.usage,
    )


class AdkClient:
    """Starts invocations on a task queue and returns handles to them.

    Args:
        client: A Temporal client using :func:`~adk_temporal.converter.adk_data_converter`
            (or use :meth:`connect`).
        task_queue: The queue the workers listen on.
        session_service: Optional; lets handles follow session events.
        budgets: The size limits of what enters the invocations it starts; the message is
            checked here, before anything starts, the rest by the workflow and its steps.
        own_queues: Start a run on its app's own queue (``{task_queue}/apps/{app}``) when a
            worker of the app polls it (:mod:`~adk_temporal.start_queues`); ``False``
            starts every run on ``task_queue``.
    """

    def __init__(
        self,
        client: Client,
        *,
        task_queue: str = DEFAULT_TASK_QUEUE,
        session_service: SessionService | None = None,
        budgets: Budgets | None = None,
        own_queues: bool = True,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self._sessions = session_service
        self.budgets = budgets or Budgets()
        self._start_queues = StartQueues(client, task_queue, own_queues=own_queues)

    @classmethod
    async def connect(
        cls,
        address: str,
        *,
        namespace: str = "default",
        task_queue: str = DEFAULT_TASK_QUEUE,
        session_service: SessionService | None = None,
        budgets: Budgets | None = None,
        payload_codec: PayloadCodec | None = None,
        telemetry: Telemetry | None = None,
    ) -> AdkClient:
        """Connect to Temporal at ``address`` with adk-temporal's data converter.

        ``payload_codec`` (e.g. :class:`~adk_temporal.codec.EncryptionCodec`) encodes every
        payload this client writes and decodes what it reads; a worker built on
        ``self.client`` (``AdkPlugin``) inherits it, so one codec covers both. So does
        ``telemetry`` (:func:`~adk_temporal.tracing.configure_telemetry`): the client's
        tracing interceptor and runtime trace its workers too.
        """
        client = await Client.connect(
            address,
            namespace=namespace,
            data_converter=adk_data_converter(codec=payload_codec),
            interceptors=telemetry.interceptors if telemetry else [],
            runtime=telemetry.runtime if telemetry else None,
        )
        return cls(client, task_queue=task_queue, session_service=session_service, budgets=budgets)

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
        double_texting: DoubleTexting | None = None,
        started_by: str | None = None,
        **options: Unpack[RunOptions],
    ) -> InvocationHandle:
        """Start an invocation of ``agent`` with ``message`` in the session.

        When an invocation of the session is running, ``double_texting`` decides
        (:mod:`~adk_temporal.double_texting`): ``reject`` raises at once; ``enqueue``,
        ``interrupt`` and ``rollback`` send the message to the running run (a worker must
        take it), which queues it as an invocation of its own; ``None`` leaves the choice
        to the app (``App.double_texting``, ``reject`` unless set). The handle of a queued
        invocation follows it from the queue to its own result.

        Args:
            app_name: The app the session belongs to.
            user_id: The user the session belongs to.
            session_id: The session; created on the first step when it does not exist.
            agent: The agent's name, as registered on the workers.
            message: The user's message, or ``None`` to continue without one.
            invocation_id: Keep an id chosen by the caller (``e-<uuid>`` otherwise).
            config: The run's limits and switches (:class:`~adk_temporal.run_config.RunConfig`);
                the defaults when ``None``.
            double_texting: What the message does when the session is busy.
            started_by: Who starts it, as the caller authenticated them: recorded with the
                run, and kept from approving its calls by a policy with
                ``requester_may_approve=False``.
            options: Fields of :class:`~adk_temporal.run_config.RunConfig` that replace
                ``config``'s (``max_steps=3``, ``stream=True``, …).

        Raises:
            InvalidIdError: An id breaks the id grammar (nothing is started).
            BudgetExceededError: The message is over the ``message_bytes`` budget (nothing
                is started).
            SessionBusyError: An invocation is running in this session and the policy is
                ``reject`` (``QueueFullError``: the session's queue is full).
            ValueError: An option is out of range or unknown (nothing is started).
        """
        key = SessionKey(app_name, user_id, session_id)
        run = with_options(config, options)
        content = as_content(message, self.budgets)
        inp = InvocationInput(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            agent_name=agent,
            message=content,
            budgets=self.budgets,
            answer_address=self.client.service_client.config.target_host,
            invocation_id=invocation_id,
            started_by=started_by,
            baseline=BASELINE,
            **run.model_dump(),
        )
        queued = QueuedMessage(
            invocation_id=invocation_id or f"e-{uuid.uuid4()}",
            agent_name=agent,
            message=content,
            policy=double_texting,
            config=run,
            baseline=BASELINE,
            channel="client",
            started_by=started_by,
        )
        for _ in range(_SEND_ATTEMPTS):
            try:
                return await self._start_run(key, inp, run)
            except WorkflowAlreadyStartedError as err:
                if double_texting == "reject":
                    raise _busy(key) from err
            handle = await self._send(key, queued)
            if handle is not None:
                return handle
        raise SessionBusyError(
            f"session {key} changed hands {_SEND_ATTEMPTS} times while the message was sent; "
            "send it again"
        )

    async def _start_run(
        self, key: SessionKey, inp: InvocationInput, run: RunConfig
    ) -> InvocationHandle:
        """Start the run of ``inp``.

        Raises:
            WorkflowAlreadyStartedError: An invocation of the session is running.
        """
        app_name, user_id, session_id = key
        handle = await self.client.start_workflow(
            "InvocationWorkflow",
            inp,
            id=workflow_id_for(key),
            task_queue=await self.start_queue(app_name),
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            search_attributes=start_attributes(key, inp.agent_name),
            static_summary=f"{inp.agent_name} · {app_name}/{user_id}/{session_id}",
            priority=Priority(priority_key=run.priority, fairness_key=run.fairness_key),
            result_type=InvocationResult,
            # A worker polling this task queue on this very client (the demo, a process
            # serving and starting) gets the first workflow task in the start's reply,
            # one round trip sooner; without one the SDK does not ask for it.
            request_eager_start=True,
        )
        # A baseline run given no invocation id draws it from its run id
        # (workflows/short_ids.py); an earlier one draws a random id, unknown here.
        drawn = run_invocation_id(handle.first_execution_run_id or "") if inp.baseline else None
        mine = inp.invocation_id or drawn
        return self._wrap(handle, key, invocation_id=mine)

    async def _send(self, key: SessionKey, message: QueuedMessage) -> InvocationHandle | None:
        """Send ``message`` to the session's running run; the queued invocation's handle, or
        ``None`` when no run is running any more (the caller starts one).

        Raises:
            SessionBusyError: The run refused it (its app's policy is ``reject``, or the
                queue is full: ``QueueFullError``), or no worker polls the task queue to
                take it.
            InvalidQueuedMessageError: The run found it malformed or over its budget.
        """
        if not await self.worker_identities():
            # The run decides on a message, and without a worker an update waits for one
            # for ever; Temporal could still deliver one given up on, queued unbeknown.
            raise SessionBusyError(
                f"{_busy(key)} (and no worker polls task queue {self.task_queue!r} to take "
                "a second message)"
            )
        current = self.client.get_workflow_handle(workflow_id_for(key))
        try:
            ack: MessageAck = await current.execute_update(
                MESSAGE_CHECKED_UPDATE, message, result_type=MessageAck
            )
        except WorkflowUpdateFailedError as err:
            raise _sending_error(err, key) from err
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return None  # it ended between the start and the update
            raise
        taken = self.client.get_workflow_handle(
            current.id, run_id=ack.run_id, result_type=InvocationResult
        )
        return self._wrap(taken, key, invocation_id=ack.invocation_id, queued=True)

    async def withdraw(self, workflow_id: str, invocation_id: str) -> QueuedSummary:
        """Take the queued message of ``invocation_id`` out of the session's queue.

        Raises:
            QueuedMessageNotFoundError: No such message waits (it started, ran, or was
                withdrawn), or the session's workflow is not running.
        """
        key = session_key_of(workflow_id) or SessionKey("", "", "")
        return await _withdraw(self.client.get_workflow_handle(workflow_id), invocation_id, key)

    async def start_queue(self, app_name: str) -> str:
        """The task queue a run of ``app_name`` starts on now: the app's own queue when a
        worker of the app polls it lately, else :attr:`task_queue`."""
        return await self._start_queues.of(app_name)

    def handle(self, workflow_id: str, run_id: str | None = None) -> InvocationHandle:
        """A handle to an existing invocation (the latest run when ``run_id`` is None)."""
        handle = self.client.get_workflow_handle(
            workflow_id, run_id=run_id, result_type=InvocationResult
        )
        key = session_key_of(workflow_id)
        if key is not None:
            return self._wrap(handle, key)
        return InvocationHandle(
            handle, current=self.client.get_workflow_handle(workflow_id), budgets=self.budgets
        )

    async def waiting(
        self,
        statuses: Sequence[AdkStatus] = ("awaiting_confirmation", "awaiting_input"),
        *,
        task_queue: str | None = None,
    ) -> list[str]:
        """Workflow ids of every running invocation whose ``AdkStatus`` is in ``statuses``.

        Args:
            statuses: The statuses to look for; by default both kinds of pause.
            task_queue: Only runs on this task queue; ``None`` looks at every queue.
        """
        query = _waiting_query(task_queue, statuses)
        return [wf.id async for wf in self.client.list_workflows(query)]

    async def worker_identities(self) -> list[str]:
        """The identities of the workers polling this client's task queue lately.

        Temporal keeps a poller listed for a few minutes after its last poll; an empty list
        means no worker has polled the queue recently.
        """
        return [p.identity for p in await workflow_pollers(self.client, self.task_queue)]

    async def waiting_requests(
        self, *, task_queue: str | None = None
    ) -> list[tuple[str, Published]]:
        """Every running invocation waiting for an answer, with what it published.

        One visibility query: no worker is needed, and no run is queried.

        Args:
            task_queue: Only runs on this task queue; ``None`` looks at every queue.
        """
        return [
            (wf.id, Published.from_memo(await wf.memo()))
            async for wf in self.client.list_workflows(_waiting_query(task_queue))
        ]

    async def waiting_page(
        self,
        *,
        task_queue: str | None = None,
        app_name: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
        page_key: bytes | None = None,
        user_id: str | None = None,
    ) -> tuple[list[tuple[str, Published]], str | None]:
        """One page of the running invocations waiting for an answer, newest first, with
        what each published, and the token of the next page (``None``: the last).

        One visibility call per page, whatever the number of waiting runs.

        Args:
            task_queue: Only runs on this task queue; ``None`` looks at every queue.
            app_name: Only this app's runs; ``None`` lists every app's.
            page_size: At most this many runs (1 to 1000).
            page_token: The token the previous page returned; ``None`` for the first.
            page_key: Signs and checks the tokens (``visibility.list_page``'s ``key``).
            user_id: Only this user's (a tenant's) runs; ``None`` lists every user's.

        Raises:
            InvalidPageTokenError: The token was not handed out by a listing.
            UnquotableValueError: A filter cannot stand in a visibility query.
        """
        page = await list_page(
            self.client,
            _waiting_query(task_queue, app_name=app_name, user_id=user_id),
            page_size=page_size,
            page_token=page_token,
            key=page_key,
        )
        runs = [(wf.id, Published.from_memo(await wf.memo())) for wf in page.executions]
        return runs, page.next_page_token

    async def inbox_page(
        self,
        view: InboxFilter,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
        now: float | None = None,
    ) -> tuple[list[tuple[str, RequestSummary]], str | None]:
        """One page of waiting runs (as :meth:`waiting_page`, on this client's task queue),
        their open requests that ``view`` shows (assignee, claimed, overdue, who looks), and
        the next page's token. A page may hold fewer requests than runs: the inbox filters
        read what each run published, after the visibility query.
        """
        runs, token = await self.waiting_page(
            task_queue=self.task_queue,
            app_name=app_name,
            user_id=user_id,
            page_size=page_size,
            page_token=page_token,
        )
        moment = time.time() if now is None else now
        rows = [
            (workflow_id, request)
            for workflow_id, published in runs
            for request in published.requests
            if request.in_view(view, moment)
        ]
        return rows, token

    async def session_busy(self, key: SessionKey) -> bool:
        """Whether an invocation of the session runs or waits for an answer.

        True while the latest run of workflow ``adk/{app}/{user}/{session}`` is open (a run
        waiting for an approval is open); a session never run is not busy. Read from
        Temporal's description of the run, so no worker is needed.

        Raises:
            InvalidIdError: An id breaks the id grammar.
            RPCError: Temporal refused the description for another reason than not found.
        """
        handle = self.client.get_workflow_handle(workflow_id_for(key))
        try:
            description = await handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        return description.status == WorkflowExecutionStatus.RUNNING

    async def rewind(
        self,
        key: SessionKey,
        before_invocation_id: str,
        *,
        event_id: str | None = None,
        artifact_service: ArtifactService | None = None,
    ) -> RewindResult:
        """Rewind a session to before one of its invocations (:mod:`adk_temporal.rewind`).

        The client writes to the session store itself (the one it was given) and to
        ``artifact_service``, the workers' stores; no workflow runs. It refuses while the
        session's workflow is open (:meth:`session_busy`); an invocation started between
        that check and the rewind's write is not held off.

        Args:
            key: The session.
            before_invocation_id: The first invocation taken back.
            event_id: The rewind event's id, to retry a rewind without repeating it.
            artifact_service: The workers' artifact store; needed when artifacts changed.

        Raises:
            SessionBusyError: An invocation of the session runs or waits.
            InvocationNotFoundError: The session has no such invocation.
            SessionNotFoundError: No such session.
            ValueError: The client has no session store.
        """
        return await rewind_session(
            self._session_store("rewind"),
            artifact_service,
            key,
            before_invocation_id,
            event_id=event_id,
            busy=await self.session_busy(key),
        )

    async def fork(
        self,
        key: SessionKey,
        invocation_id: str | None = None,
        *,
        new_session_id: str | None = None,
        artifact_service: ArtifactService | None = None,
    ) -> ForkResult:
        """Copy a session as of one of its invocations into a new session (:mod:`.rewind`).

        Written by the client itself, like :meth:`rewind`; the original is not changed.

        Args:
            key: The session to copy.
            invocation_id: The last invocation copied; ``None`` copies everything.
            new_session_id: The new session's id (a new ``s-…`` id when ``None``); the same
                id retries a fork without repeating it.
            artifact_service: The workers' artifact store; needed when artifacts were saved.

        Raises:
            SessionBusyError: The fork would copy an invocation that still runs or waits.
            InvocationNotFoundError: The session has no such invocation.
            SessionExistsError: ``new_session_id`` is taken.
            ValueError: The client has no session store.
        """
        return await fork_session(
            self._session_store("fork"),
            artifact_service,
            key,
            invocation_id,
            new_session_id=new_session_id,
            busy=await self.session_busy(key),
        )

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session with initial state in the workers' session store (ADK's
        ``SessionService.create_session``); its first invocation then starts from it.

        Args:
            app_name: The app.
            user_id: The user.
            state: Initial state (``app:`` and ``user:`` keys go to the shared scopes).
            session_id: The id; a new ``s-…`` id when ``None``.

        Raises:
            BudgetExceededError: The state is over the ``state_delta_bytes`` budget.
            SessionExistsError: The session exists already.
            InvalidSessionRequestError: An id breaks the id grammar.
            ValueError: The client has no session store.
        """
        return await create_session(
            self._session_store("create_session"),
            app_name=app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            budgets=self.budgets,
        )

    async def forget(
        self,
        target: Target,
        *,
        by: str,
        reason: str,
        artifact_service: ArtifactService | None = None,
        keys: DataKeys | None = None,
        channel: str = "library",
        grace: timedelta = DEFAULT_FORGET_GRACE,
        dry_run: bool = False,
    ) -> ForgetEntry:
        """Forget a session, a user or an app (:func:`adk_temporal.keys.forget`).

        Its open runs are cancelled first — a run that has not closed after ``grace`` (no
        worker took the cancellation) is terminated — so no step writes its data back;
        then its rows, artifacts and data keys are deleted, and the forget log records who,
        why and what. Its payloads in Temporal history then fail to decode with
        :class:`~adk_temporal.errors.ForgottenError`, other sessions' decode as before.

        Args:
            target: What to forget.
            by: Who asks, as their channel authenticated them.
            reason: Why, for the log.
            artifact_service: The workers' artifact store, or ``None``.
            keys: The data keys; default: those of this client's codec.
            channel: How the request came (``cli``, ``gateway``, ``library``).
            grace: How long a cancelled run may take to close.
            dry_run: List what would go (runs included); change nothing.

        Raises:
            CannotForgetError: No data keys, or the forget cannot erase what it promises.
            InvalidIdError: An id breaks the id grammar.
            ValueError: The client has no session store.
        """
        keys = keys or self.data_keys
        if keys is None:
            raise CannotForgetError(
                "forget needs per-session data keys: add a 'data_keys' section to the key "
                "file (see docs/guides/encryption.md), or the history keeps the data"
            )
        sessions = self._session_store("forget")
        target.check()
        covered = await sessions_of(target, sessions, keys)
        runs = await self._open_runs(target, covered)
        if not dry_run:
            await asyncio.gather(*(self._close_run(w, reason, grace) for w in runs))
        return await forget(
            target,
            keys=keys,
            sessions=sessions,
            artifacts=artifact_service,
            by=by,
            reason=reason,
            channel=channel,
            runs_cancelled=runs,
            dry_run=dry_run,
        )

    @property
    def data_keys(self) -> DataKeys | None:
        """The data keys of this client's codec (``EncryptionCodec`` with ``data_keys``)."""
        return data_keys_of(self.client.data_converter.payload_codec)

    async def _open_runs(self, target: Target, covered: Sequence[SessionKey]) -> list[str]:
        """The workflow ids of the target's open runs: each covered session's run (read
        directly, so a run started a moment ago counts) and any visibility still lists."""
        query = invocations_query(
            app_name=target.app_name, user_id=target.user_id, session_id=target.session_id
        )
        listed = {
            wf.id
            async for wf in self.client.list_workflows(f"{query} AND ExecutionStatus = 'Running'")
        }
        for key in covered:
            if workflow_id_for(key) not in listed and await self.session_busy(key):
                listed.add(workflow_id_for(key))
        return sorted(listed)

    async def _close_run(self, workflow_id: str, reason: str, grace: timedelta) -> None:
        handle = self.client.get_workflow_handle(workflow_id)
        await handle.cancel()
        deadline = time.monotonic() + grace.total_seconds()
        while time.monotonic() < deadline:
            description = await handle.describe()
            if description.status != WorkflowExecutionStatus.RUNNING:
                return
            await asyncio.sleep(0.2)
        # No worker took the cancellation in time: ended without one, so nothing runs on.
        try:
            await handle.terminate(reason=f"forgotten: {reason}")
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise

    async def sweep_retention(
        self, app_name: str, *, dry_run: bool = False, task_queue: str | None = None
    ) -> RetentionReport:
        """Run one retention sweep of ``app_name`` now and wait for its report.

        The app's workers do it (``adk_retention``, on the app's own queue unless
        ``task_queue`` says otherwise), with their ``App.retention``, stores and data keys.

        Args:
            app_name: The app.
            dry_run: List the sessions past the limit; forget none.
            task_queue: Where the app's workers poll; default: the app's own queue.
        """
        _check_app_name(app_name)
        report: RetentionReport = await self.client.execute_workflow(
            "adk_retention",
            SweepRequest(app_name=app_name, dry_run=dry_run),
            id=f"{retention_schedule_id(app_name)}-now-{uuid.uuid4().hex[:12]}",
            task_queue=task_queue or app_task_queue(self.task_queue, app_name),
            result_type=RetentionReport,
        )
        return report

    async def schedule_retention(
        self, app_name: str, *, every: timedelta, task_queue: str | None = None
    ) -> str:
        """Create (or update) ``app_name``'s retention schedule: a sweep every ``every``.

        Args:
            app_name: The app.
            every: How often the sweep runs.
            task_queue: Where the app's workers poll; default: the app's own queue.

        Returns:
            The schedule's id (``adk-retention-<app>``).
        """
        _check_app_name(app_name)
        schedule_id = retention_schedule_id(app_name)
        schedule = Schedule(
            action=ScheduleActionStartWorkflow(
                "adk_retention",
                SweepRequest(app_name=app_name),
                id=schedule_id,
                task_queue=task_queue or app_task_queue(self.task_queue, app_name),
            ),
            spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=every)]),
        )
        try:
            await self.client.create_schedule(schedule_id, schedule)
        except ScheduleAlreadyRunningError:

            def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
                return ScheduleUpdate(schedule=schedule)

            await self.client.get_schedule_handle(schedule_id).update(replace)
        return schedule_id

    def _session_store(self, what: str) -> SessionService:
        if self._sessions is None:
            raise ValueError(
                f"{what} writes to the session store, and this client has none: give "
                "AdkClient the workers' session_service"
            )
        return self._sessions

    def _wrap(
        self,
        handle: WorkflowHandle[Any, Any],
        key: SessionKey,
        *,
        invocation_id: str | None = None,
        queued: bool = False,
    ) -> InvocationHandle:
        return InvocationHandle(
            handle,
            current=self.client.get_workflow_handle(handle.id),
            session_service=self._sessions,
            budgets=self.budgets,
            key=key,
            client=self.client,
            invocation_id=invocation_id,
            queued=queued,
        )
