"""``deliver_answer`` with the update sent first: when the run is read, and what wins."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.service import RPCError, RPCStatusCode

from adk_temporal.answers import deliver_answer
from adk_temporal.errors import UnknownRequestIdError


class Run:
    """A run's side of an answer: how its update goes, and what was asked of it."""

    def __init__(self, update: str, vet_error: Exception | None = None) -> None:
        self.update = update
        """``applied``, ``refused``, ``missing`` (not found), ``late`` (applied after a
        while) or ``never`` (no worker)."""
        self.vet_error = vet_error
        self.sent: list[str] = []
        self.vetted = 0
        self.checked = 0

    async def send(self, checked: bool) -> None:
        """The update goes as :attr:`update` says; the signal is recorded."""
        self.sent.append("update" if checked else "signal")
        if not checked:
            return
        if self.update == "refused":
            raise UnknownRequestIdError("unknown confirmation id 'adk-x'; open requests: none")
        if self.update == "missing":
            raise RPCError("workflow not found", RPCStatusCode.NOT_FOUND, b"")
        if self.update == "late":
            await asyncio.sleep(0.2)
        if self.update == "never":
            await asyncio.Event().wait()

    async def vet(self) -> None:
        """Count the read of the run; raise :attr:`vet_error` if set."""
        self.vetted += 1
        if self.vet_error is not None:
            raise self.vet_error

    async def check(self) -> None:
        """Count the check for a held answer."""
        self.checked += 1


async def _deliver(run: Run, *, wait: float = 1.0, fallback: bool = True) -> str:
    return await deliver_answer(
        run.send, wait=wait, fallback=fallback, check=run.check, vet=run.vet, vet_after=0.05
    )


async def test_an_update_a_worker_applies_reads_nothing() -> None:
    """Applied at once: no vet, no check, no signal."""
    run = Run("applied")
    assert await _deliver(run) == "applied"
    assert (run.sent, run.vetted, run.checked) == (["update"], 0, 0)


async def test_a_worker_refusal_is_raised_unvetted() -> None:
    """The worker's own refusal is the answer's."""
    run = Run("refused")
    with pytest.raises(UnknownRequestIdError, match="adk-x"):
        await _deliver(run)
    assert (run.vetted, run.checked) == (0, 0)


async def test_an_update_that_cannot_reach_the_run_is_vetted() -> None:
    """Not found: the vet names the problem (the gateway's 404 or closed run)."""
    run = Run("missing", vet_error=LookupError("no invocation adk/a/u/s"))
    with pytest.raises(LookupError, match="no invocation"):
        await _deliver(run)
    assert run.sent == ["update"]


async def test_a_vetted_out_answer_waits_for_a_trailing_reply() -> None:
    """The update closed the request itself: the vet saw it closed, the reply came after."""
    run = Run("late", vet_error=UnknownRequestIdError("no open confirmation request"))
    assert await _deliver(run) == "applied"
    assert run.vetted == 1


async def test_no_worker_and_a_closed_request_is_refused_without_a_signal() -> None:
    """Nobody takes the update and the run shows the request closed: refused, no signal."""
    run = Run("never", vet_error=UnknownRequestIdError("already has an answer on its way"))
    with pytest.raises(UnknownRequestIdError, match="on its way"):
        await _deliver(run)
    assert run.sent == ["update"]


async def test_no_worker_leaves_the_answer_as_a_signal_checked_just_before() -> None:
    """Vetted, then no worker until ``wait``: checked for a held answer, then signalled."""
    run = Run("never")
    assert await _deliver(run, wait=0.2) == "accepted"
    assert (run.sent, run.vetted, run.checked) == (["update", "signal"], 1, 1)


async def test_without_fallback_no_worker_is_a_timeout() -> None:
    """``fallback=False``: no signal is sent."""
    run = Run("never")
    with pytest.raises(TimeoutError, match="no worker checked"):
        await _deliver(run, wait=0.2, fallback=False)
    assert run.sent == ["update"]


async def test_without_a_vet_the_check_goes_first() -> None:
    """The CLI's path: the check before the update, and again before the signal."""
    run = Run("never")
    assert await deliver_answer(run.send, wait=0.1, check=run.check) == "accepted"
    assert (run.checked, run.vetted, run.sent) == (2, 0, ["update", "signal"])
