"""``AnswerDesk``: whether an answer from outside a run may reach it, and how it goes.

Checked here, from what Temporal serves with no worker (the run's description, its memo,
its history): the run exists and runs, the request is open and of the answer's kind, it
was not answered before (and if so, when and by whom), Temporal does not hold another
answer to it, a link's invocation is the run's current one. The workflow stays the final
judge: it checks the same rules (open request, digest, schema) in its update validator and
signal handler, and a worker's refusal comes back here as the same reasons.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from temporalio.client import WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from ..approvals import GrantTerms, InboxAction, PolicyRefusalError
from ..client import AdkClient, InvocationHandle
from ..errors import AdkRequestError, UnknownRequestIdError
from ..flow.messages import ConfirmInput, Refusal, ResumeInput
from ..flow.requests import AnswerKind, answer_id, parse_answer, refused
from ..visibility import run_status
from ..workflows.messages import Published
from .delivery import VET_AFTER_SECONDS, deliver_answer
from .history import read_answers
from .outcome import Accepted, Applied, DeliveryPolicy, Outcome, RefusalReason, Refused
from .policy import policy_refusal
from .task import once_signals_show

__all__ = ["AnswerDesk"]

_QUERY_SECONDS = 2.0
"""How long the desk asks a worker for the run's invocation id before doing without."""


class _Refusal(Exception):
    """Carries a refusal out of a check run inside :func:`deliver_answer`."""

    def __init__(self, refusal: Refused) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclass(frozen=True)
class _Target:
    """One answer on its way: the run, the request, the answer."""

    handle: InvocationHandle
    answer: ConfirmInput | ResumeInput
    invocation_id: str | None

    @property
    def request_id(self) -> str:
        return answer_id(self.answer)

    @property
    def kind(self) -> AnswerKind:
        return "confirmation" if isinstance(self.answer, ConfirmInput) else "input"

    @property
    def workflow_id(self) -> str:
        return self.handle.workflow_id


class AnswerDesk:
    """Admits answers from outside a run: each surface asks here and translates the outcome.

    Args:
        adk: A client of the run's namespace (its data converter reads the run's payloads;
            its budgets bound the answers).
        vet_after: With ``update_first``, how long an update may go untaken before the run
            is read to vet the answer.
    """

    def __init__(self, adk: AdkClient, *, vet_after: float = VET_AFTER_SECONDS) -> None:
        self._adk = adk
        self._vet_after = vet_after

    async def confirm(
        self,
        workflow_id: str,
        confirmation_id: str,
        confirmed: bool,
        payload: Any = None,
        *,
        call_digest: str | None = None,
        answered_by: str | None = None,
        channel: str | None = None,
        edited_args: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
        grant: GrantTerms | None = None,
        **delivery: Any,
    ) -> Outcome:
        """Approve or reject one confirmation request (``delivery`` as :meth:`submit`); the
        answerer is ``answered_by`` in ``groups``, as the surface authenticated them."""
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
        return await self.submit(workflow_id, answer, **delivery)

    async def confirm_batch(
        self,
        workflow_id: str,
        confirmed: bool,
        request_ids: Sequence[str] | None = None,
        **answer: Any,
    ) -> list[tuple[str, Outcome]]:
        """Approve or reject several confirmation requests of one run in one action, each
        admitted as its own answer (its own vote under a policy).

        Args:
            workflow_id: The run.
            confirmed: Approve or reject them all.
            request_ids: The requests; ``None``: every confirmation the run published as open.
            answer: What :meth:`confirm` takes besides the ids (who answers, the channel,
                the delivery).

        Returns:
            Each request id with its outcome, in order; one refusal never stops the rest.

        Raises:
            RPCError: ``request_ids`` is ``None`` and the run cannot be described (no run).
        """
        if request_ids is None:
            published = await self._adk.handle(workflow_id).published()
            request_ids = [r.id for r in published.requests if r.kind == "confirmation"]
        return [
            (request_id, await self.confirm(workflow_id, request_id, confirmed, **answer))
            for request_id in request_ids
        ]

    async def resume(
        self,
        workflow_id: str,
        interrupt_id: str,
        value: Any,
        *,
        answered_by: str | None = None,
        channel: str | None = None,
        groups: Sequence[str] | None = None,
        **delivery: Any,
    ) -> Outcome:
        """Answer one input request (``delivery`` as :meth:`submit`)."""
        answer = ResumeInput(
            interrupt_id=interrupt_id,
            input=value,
            answered_by=answered_by,
            channel=channel,
            groups=list(groups) if groups is not None else None,
        )
        return await self.submit(workflow_id, answer, **delivery)

    async def submit(
        self,
        workflow_id: str,
        answer: ConfirmInput | ResumeInput,
        *,
        policy: DeliveryPolicy = "check_first",
        wait: float = 5.0,
        fallback: bool = True,
        invocation_id: str | None = None,
    ) -> Outcome:
        """Admit ``answer`` to the run ``workflow_id`` and send it.

        Args:
            workflow_id: The run's workflow id.
            answer: The answer, naming who gave it and through which channel.
            policy: Read the run before sending, or send the checked update first
                (:data:`~adk_temporal.answers.DeliveryPolicy`).
            wait: Seconds to wait for a worker to take the checked update before the answer
                is left with Temporal as a signal.
            fallback: Leave the answer as a signal when no worker took it in time.
            invocation_id: Refuse unless the run is this invocation (an answer link's).

        Returns:
            :class:`Applied`, :class:`Accepted` or :class:`Refused` with its reason.

        Raises:
            TimeoutError: No worker took the update in time and ``fallback`` is false
                (Temporal may still apply it once one picks the run up).
        """
        kind: AnswerKind = "confirmation" if isinstance(answer, ConfirmInput) else "input"
        # Python values, not their JSON: JSON mode would turn an infinity into null.
        parsed = parse_answer(kind, answer.model_dump(), self._adk.budgets)
        if isinstance(parsed, Refusal):
            error = refused(parsed)
            return Refused("invalid", str(error), error=error)
        target = _Target(self._adk.handle(workflow_id), answer, invocation_id)
        try:
            return await self._deliver(target, policy, wait, fallback)
        except _Refusal as refusal:
            return refusal.refusal
        except AdkRequestError as err:  # the worker's refusal
            return await self._worker_refused(target, err)
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            # The run closed while the answer was sent (its memo still listed the request).
            return await self._explain(target)

    async def _deliver(
        self, target: _Target, policy: DeliveryPolicy, wait: float, fallback: bool
    ) -> Outcome:
        async def send(checked: bool) -> None:
            await target.handle.answer(target.answer, checked=checked)

        async def check() -> None:
            refusal = await self._check(target)
            if refusal is not None:
                raise _Refusal(refusal)

        vet = check if policy == "update_first" and target.invocation_id is None else None
        way = await deliver_answer(
            send, wait=wait, fallback=fallback, check=check, vet=vet, vet_after=self._vet_after
        )
        return Applied() if way == "applied" else Accepted()

    async def _check(self, target: _Target) -> Refused | None:
        """Why the answer must not be sent, from what Temporal shows of the run; ``None``
        when it may go."""
        try:
            description = await target.handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return Refused(
                    "no_run",
                    f"no invocation {target.workflow_id!r} in namespace "
                    f"{self._adk.client.namespace!r}",
                )
            raise
        published = Published.from_memo(await description.memo())
        open_kinds = {r.id: r.kind for r in published.requests}
        running = description.status == WorkflowExecutionStatus.RUNNING
        if running and open_kinds.get(target.request_id) == target.kind:
            [request] = [r for r in published.requests if r.id == target.request_id]
            early = policy_refusal(request, target.answer, target.workflow_id)
            return early or await self._may_take(target, description)
        if running and target.request_id in open_kinds:
            other = open_kinds[target.request_id]
            return Refused(
                "wrong_kind",
                f"{target.request_id!r} of {target.workflow_id} is an open {other} request, "
                f"not a {target.kind} request",
            )
        return await self._not_open(target, description, published)

    async def _may_take(
        self, target: _Target, description: WorkflowExecutionDescription
    ) -> Refused | None:
        """An open request: refused only for another invocation, or another answer held."""
        if target.invocation_id is not None:
            current = await self._invocation_id(target.handle)
            if current is not None and current != target.invocation_id:
                return Refused(
                    "wrong_run",
                    f"the answer is for invocation {target.invocation_id}, but "
                    f"{target.workflow_id} now runs invocation {current}",
                )
        described = await once_signals_show(target.handle.describe, description)
        # A signal leaves a task pending until a worker completes one started after it:
        # with none pending, nothing can be held and the history is not read.
        if not described.raw_description.HasField("pending_workflow_task"):
            return None
        held = (await read_answers(self._adk.client, target.workflow_id)).held
        earlier = held.get(target.request_id)
        if earlier is None:
            return None
        return Refused(
            "held",
            f"request {target.request_id!r} of {target.workflow_id} already has an answer on "
            f"its way ({earlier.describe()}, held by Temporal until a worker picks the run up); "
            "this answer was not sent. If that one is refused, the run lists it under its "
            "refused answers and the request stays open",
            earlier,
        )

    async def _not_open(
        self, target: _Target, description: WorkflowExecutionDescription, published: Published
    ) -> Refused:
        """A request the run does not list open: answered before, closed with its run, or
        never there."""
        earlier = (await read_answers(self._adk.client, target.workflow_id)).first.get(
            target.request_id
        )
        if earlier is not None:
            return Refused(
                "already_answered",
                f"request {target.request_id!r} of {target.workflow_id} was already answered: "
                f"{earlier.describe()}; this answer was not sent",
                earlier,
            )
        if description.status != WorkflowExecutionStatus.RUNNING:
            return Refused(
                "run_closed",
                f"{target.workflow_id} is {run_status(description)}: it takes no more answers",
            )
        listed = [r.id for r in published.requests if r.kind == target.kind]
        return Refused(
            "not_open",
            f"{target.workflow_id} has no open {target.kind} request {target.request_id!r}; "
            f"open {target.kind} requests: {', '.join(listed) or 'none'}",
        )

    async def _explain(self, target: _Target) -> Refused:
        """The reason the run gives no way for this answer, read after the fact."""
        refusal = await self._check(target)
        if refusal is not None:
            return refusal
        return Refused("run_closed", f"{target.workflow_id} closed before the answer reached it")

    async def _worker_refused(self, target: _Target, err: AdkRequestError) -> Refused:
        """A worker's refusal as a reason: an unknown id is explained from the history
        (answered before, by whom), other refusals are the answer's own."""
        if isinstance(err, PolicyRefusalError):
            return Refused(cast(RefusalReason, err.reason), str(err), error=err)
        if not isinstance(err, UnknownRequestIdError):
            return Refused("invalid", str(err), error=err)
        text = str(err)
        if " expired at " in text:
            return Refused("expired", text, error=err)
        if "answer it with adk_" in text:
            return Refused("wrong_kind", text, error=err)
        refusal = await self._check(target)
        if refusal is not None:
            return refusal
        return Refused("not_open", text, error=err)

    async def inbox(self, workflow_id: str, action: InboxAction, *, wait: float = 5.0) -> Outcome:
        """Claim, release or assign one open request of the run ``workflow_id``.

        Checked first from what the run published (the run, the request open, another's
        claim), then sent as the checked update; Temporal keeps it as a signal when no
        worker takes it within ``wait`` seconds (the run then records a refusal if it does
        not fit).

        Returns:
            :class:`Applied`, :class:`Accepted` or :class:`Refused` (``claimed``,
            ``not_an_approver``, ``not_open``, ``run_closed``, ``no_run``).
        """
        handle = self._adk.handle(workflow_id)
        probe = ResumeInput(
            interrupt_id=action.request_id, answered_by=action.answered_by, groups=action.groups
        )
        target = _Target(handle, probe, None)

        async def check() -> None:
            refusal = await self._inbox_check(target)
            if refusal is not None:
                raise _Refusal(refusal)

        async def send(checked: bool) -> None:
            await handle.inbox(action, checked=checked)

        try:
            way = await deliver_answer(send, wait=wait, check=check)
        except _Refusal as refusal:
            return refusal.refusal
        except AdkRequestError as err:
            return await self._worker_refused(target, err)
        return Applied() if way == "applied" else Accepted()

    async def _inbox_check(self, target: _Target) -> Refused | None:
        """Why an inbox action must not be sent: the run or its request, or another's claim."""
        try:
            description = await target.handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return Refused("no_run", f"no invocation {target.workflow_id!r}")
            raise
        published = Published.from_memo(await description.memo())
        found = [r for r in published.requests if r.id == target.request_id]
        if description.status != WorkflowExecutionStatus.RUNNING:
            return Refused(
                "run_closed", f"{target.workflow_id} is {run_status(description)}: no requests"
            )
        if not found:
            listed = ", ".join(r.id for r in published.requests) or "none"
            return Refused(
                "not_open",
                f"{target.workflow_id} has no open request {target.request_id!r}; open "
                f"requests: {listed}",
            )
        claimed = policy_refusal(found[0], target.answer, target.workflow_id)
        return claimed if claimed is not None and claimed.reason == "claimed" else None

    async def _invocation_id(self, handle: InvocationHandle) -> str | None:
        """The run's current invocation id; ``None`` when no worker answers.

        Without a worker the open request ids still bind an answer to its invocation: they
        are generated by the run, so no other invocation has them.
        """
        try:
            async with asyncio.timeout(_QUERY_SECONDS):
                return (await handle.status()).invocation_id
        except (RPCError, TimeoutError):
            return None
