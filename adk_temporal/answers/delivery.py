"""How an answer reaches a run: the checked update when a worker takes it in time, else the
signal, which Temporal keeps until a worker picks the run up.

The mechanics under the desk's delivery policies: ``update_first`` sends the update first
and reads the run only when no worker took it at once (``vet``), so with a worker running
an answer costs one call to Temporal, as a bare signal does; ``check_first`` checks before
anything is sent (``check``), since a person waits on its refusals either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError

__all__ = ["VET_AFTER_SECONDS", "AnswerDelivery", "deliver_answer"]

AnswerDelivery = Literal["applied", "accepted"]
"""How an answer went: a worker checked and applied it, or Temporal holds it for one."""

VET_AFTER_SECONDS = 0.5
"""How long an update sent first may go untaken before the run is read to vet the answer."""

_TRAILING_REPLY_SECONDS = 0.5
"""How long a vetted-out answer waits for its update's reply: the update may be what closed
the request, its reply trailing the description that shows the request closed."""

Check = Callable[[], Awaitable[None]]


async def deliver_answer(
    send: Callable[[bool], Awaitable[None]],
    *,
    wait: float,
    fallback: bool = True,
    check: Check | None = None,
    vet: Check | None = None,
    vet_after: float = VET_AFTER_SECONDS,
) -> AnswerDelivery:
    """Send an answer checked when a worker takes it within ``wait`` seconds, else unchecked.

    Args:
        send: Sends the answer; ``send(True)`` as the checked update (a worker validates it
            and raises its refusal here), ``send(False)`` as the signal, which Temporal
            keeps until a worker picks the run up.
        wait: Seconds to wait for a worker to take the update.
        fallback: Send the signal when no worker took the update in time.
        check: Raises when the answer must not be sent (the desk's check of the run);
            called before the update and again before the signal, since another answer
            may have become a signal while this one waited for a worker.
        vet: Raises when the answer must not be sent, from what Temporal shows of the run
            (the request is not open, another answer is held). Given, the update goes
            first and ``vet`` replaces the first ``check``: it is called only when no worker
            took the update within ``vet_after`` seconds or the update could not reach the
            run (not found, closed). A worker's own refusal is the answer's, unvetted.
        vet_after: Seconds the update may go untaken before ``vet`` is called.

    Raises:
        TimeoutError: No worker took the update in time and ``fallback`` is false (Temporal
            may still apply it once one picks the run up).
        Exception: What ``check`` or ``vet`` raised to refuse the answer (nothing sent, or
            only the update, which the worker then refuses as already answered), or the
            worker's own refusal of the update.
    """
    if check is not None and vet is None:
        await check()
    vetting = min(vet_after, wait) if vet is not None else 0.0
    update = asyncio.ensure_future(send(True))
    try:
        if vet is not None and await _vetted(update, vet, vetting):
            return "applied"
        async with asyncio.timeout(wait - vetting):
            await asyncio.shield(update)
        return "applied"
    # Cancelled by the timeout, the update call reports its own error type.
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        if not fallback:
            raise TimeoutError(f"no worker checked the answer within {wait:g} s") from None
    finally:
        if not update.done():
            # Temporal keeps the update for a worker to take; only the wait for it ends.
            update.add_done_callback(_drop_outcome)
            update.cancel()
    if check is not None:
        await check()
    await send(False)
    return "accepted"


def _drop_outcome(update: asyncio.Future[None]) -> None:
    """Retrieve a given-up update's outcome, so asyncio does not report it unretrieved."""
    if not update.cancelled():
        update.exception()


async def _vetted(update: asyncio.Future[None], vet: Check, after: float) -> bool:
    """Whether ``update`` was applied within ``after`` seconds; else ``vet`` the answer.

    Returns ``False`` when the answer passed ``vet`` and its update is still on its way;
    raises a worker's refusal, or ``vet``'s.
    """
    await asyncio.wait({update}, timeout=after)
    if _answered_by_worker(update):
        update.result()  # a worker's refusal is raised as it is
        return True
    try:
        await vet()
    except Exception:
        await asyncio.wait({update}, timeout=_TRAILING_REPLY_SECONDS)
        if _answered_by_worker(update):
            update.result()
            return True
        raise
    if update.done():
        update.result()  # the run is there and the request open, yet Temporal refused
    return False


def _answered_by_worker(update: asyncio.Future[None]) -> bool:
    """Whether ``update`` is done with a worker's answer (applied or refused), not with
    Temporal's refusal to take it (not found, closed)."""
    return update.done() and not isinstance(update.exception(), RPCError)
