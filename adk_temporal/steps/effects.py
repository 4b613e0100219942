"""Running a call of a tool with external effects: its receipt first, and never twice.

Right before such a tool's code runs, the step begins the call's receipt in the session
store (:class:`~adk_temporal.sessions.EffectReceipts`); the receipt is closed when the code
returns. An attempt that finds a receipt begun by another attempt and never closed — its
worker was lost mid-call, or its code raised — does not run the tool: the call is *in doubt*
(:class:`~adk_temporal.flow.messages.InDoubtResult`) until an operator resolves it. Only a
resolution to retry lets the tool run once more, under the same idempotency key; a second
attempt of that retry finds it begun too.

A receipt closed by a run that asked for something (a confirmation, an input) does not count:
the call is dispatched again with the answer and begins a new receipt. One closed by a run
that finished, found by a retry of the same step (its result was lost on the way back), is
answered from the response that run staged.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ..events import Event
from ..faults import fault_point
from ..flow.messages import InDoubtResult, StagedResult, ToolCallInput, stage_id
from ..ids import SessionKey
from ..sessions import SessionService
from ..tools import EffectReceipt, FunctionTool
from .ref import SessionRef

__all__ = ["EffectGuard", "InDoubt", "begin_effect", "call_key"]

_WORKER = f"{socket.gethostname()}:{os.getpid()}"
"""Where a receipt says its call ran: this process."""


class InDoubt(Exception):
    """The call must not run here: its answer is ``result`` (in doubt, or what an earlier
    attempt staged)."""

    def __init__(self, result: InDoubtResult | StagedResult) -> None:
        super().__init__("the call was begun by an earlier attempt")
        self.result = result


def call_key(ref: SessionRef, call_id: str) -> str:
    """The receipt's key: the call's idempotency key (``ctx.idempotency_key``)."""
    return f"{ref.workflow_id}/{ref.invocation_id}/{call_id}"


@dataclass
class EffectGuard:
    """This attempt's receipt of a call it is about to run: notes, then its end."""

    sessions: SessionService
    key: SessionKey
    receipt: EffectReceipt

    async def note(self, details: dict[str, Any]) -> None:
        """Keep ``details`` (merged over what was noted) in the receipt at once, durably."""
        self.receipt = self.receipt.model_copy(
            update={"details": {**self.receipt.details, **details}}
        )
        await self.sessions.put_effect(self.key, self.receipt)

    async def returned(self, waiting: bool) -> None:
        """The tool's code returned (``waiting``: it asked for a confirmation or input)."""
        ended = "waiting" if waiting else "returned"
        self.receipt = self.receipt.model_copy(update={"ended": ended})
        await self.sessions.put_effect(self.key, self.receipt)

    async def raised(self, err: BaseException) -> InDoubtResult:
        """The tool's code raised: the effect may have happened, the call is in doubt."""
        error = f"{type(err).__name__}: {err}"[:1000]
        self.receipt = self.receipt.model_copy(update={"ended": "raised", "error": error})
        await self.sessions.put_effect(self.key, self.receipt)
        return InDoubtResult(in_doubt=self.receipt)


async def begin_effect(
    sessions: SessionService,
    inp: ToolCallInput,
    ref: SessionRef,
    tool: FunctionTool,
    attempt: int,
) -> EffectGuard:
    """Begin the call's receipt, or say why it must not run.

    Raises:
        InDoubt: An earlier attempt began the call and never finished it (the result is in
            doubt), or finished it and staged its response (the result is that).
    """
    mine = EffectReceipt(
        call_key=call_key(ref, inp.call.id),
        tool=tool.name,
        attempt_id=uuid.uuid4().hex,
        started_at=time.time(),
        worker=_WORKER,
        attempt=attempt,
        authorized_by=inp.in_doubt_retry,
    )
    found = await sessions.begin_effect(ref.key, mine)
    if found.attempt_id != mine.attempt_id and not _may_begin_again(found, inp):
        staged = await _staged(sessions, ref, inp)
        if staged is not None:
            raise InDoubt(StagedResult(staged=staged.id, actions=staged.actions))
        raise InDoubt(InDoubtResult(in_doubt=found))
    if found.attempt_id != mine.attempt_id:
        await sessions.put_effect(ref.key, mine)
    fault_point("tool.after_receipt")
    return EffectGuard(sessions, ref.key, mine)


def _may_begin_again(found: EffectReceipt, inp: ToolCallInput) -> bool:
    """Whether a new run of the call may replace ``found``: the run before asked for
    something (this is its answer's dispatch), or an operator's resolution lets it retry
    and this attempt is the first of that retry."""
    if found.ended == "waiting":
        return True
    retry = inp.in_doubt_retry
    return retry is not None and found.authorized_by != retry


async def _staged(sessions: SessionService, ref: SessionRef, inp: ToolCallInput) -> Event | None:
    """The response an earlier attempt of this step staged, if it got that far."""
    sid = stage_id(ref.invocation_id, inp.call.id)
    return (await sessions.staged_events(ref.key, [sid])).get(sid)
