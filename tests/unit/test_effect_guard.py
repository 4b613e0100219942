"""The receipt rules of a call with external effects (``steps/effects.py``): an attempt
that finds another's receipt open never runs the call; an answered request's dispatch and an
operator's retry may begin anew, the retry once."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_temporal.events import Event, EventActions
from adk_temporal.flow.messages import (
    InDoubtResult,
    InvocationRef,
    PlannedCall,
    StagedResult,
    ToolCallInput,
    stage_id,
)
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.steps import SessionRef
from adk_temporal.steps.effects import InDoubt, begin_effect
from adk_temporal.tools import FunctionTool

KEY = SessionKey("payments", "u-1", "s-1")
INVOCATION = InvocationRef(agent_name="payer", invocation_id="e-1")
REF = SessionRef.resolve(INVOCATION, "adk/payments/u-1/s-1")
INP = ToolCallInput(ref=INVOCATION, call=PlannedCall(id="call-1", name="charge"))


def charge(amount: int) -> dict[str, int]:
    """Charge."""
    return {"charged": amount}


TOOL = FunctionTool(charge, effects="external")


async def _store() -> InMemorySessionService:
    sessions = InMemorySessionService()
    await sessions.create(KEY)
    return sessions


async def test_an_open_receipt_of_another_attempt_puts_the_call_in_doubt() -> None:
    """Attempt 1 began the call and was lost: attempt 2 is told the call is in doubt, with
    attempt 1's receipt, and begins nothing."""
    sessions = await _store()
    first = await begin_effect(sessions, INP, REF, TOOL, attempt=1)
    with pytest.raises(InDoubt) as doubt:
        await begin_effect(sessions, INP, REF, TOOL, attempt=2)
    assert isinstance(doubt.value.result, InDoubtResult)
    assert doubt.value.result.in_doubt == first.receipt
    assert (await sessions.effect(KEY, first.receipt.call_key)) == first.receipt


async def test_a_response_staged_before_the_worker_was_lost_answers_the_retry() -> None:
    """Attempt 1 ran the call and staged its response, then was lost before closing the
    receipt: attempt 2 returns that staged response instead of calling it in doubt."""
    sessions = await _store()
    await begin_effect(sessions, INP, REF, TOOL, attempt=1)
    actions = EventActions(state_delta={"paid": True})
    staged = Event(
        id=stage_id("e-1", "call-1"),
        invocation_id="e-1",
        author="payer",
        content=types.Content(role="user", parts=[types.Part(text="x")]),
        actions=actions,
    )
    await sessions.stage_events(KEY, [staged])
    with pytest.raises(InDoubt) as doubt:
        await begin_effect(sessions, INP, REF, TOOL, attempt=2)
    assert doubt.value.result == StagedResult(staged=staged.id, actions=actions)


async def test_a_run_that_asked_for_something_lets_its_answers_dispatch_begin_anew() -> None:
    """The first dispatch returned asking for a confirmation: the dispatch with the answer
    begins its own receipt and runs."""
    sessions = await _store()
    asked = await begin_effect(sessions, INP, REF, TOOL, attempt=1)
    await asked.returned(waiting=True)
    answered = await begin_effect(sessions, INP, REF, TOOL, attempt=1)
    assert answered.receipt.attempt_id != asked.receipt.attempt_id
    assert (await sessions.effect(KEY, answered.receipt.call_key)) == answered.receipt


async def test_an_operators_retry_runs_once_and_its_own_loss_is_in_doubt_again() -> None:
    """A resolution to retry lets one attempt begin over the open receipt; a second attempt
    of that retry (its worker lost too) finds the retry's receipt and is in doubt again."""
    sessions = await _store()
    await begin_effect(sessions, INP, REF, TOOL, attempt=1)
    retry = INP.model_copy(update={"in_doubt_retry": "adk-doubt-1"})
    retried = await begin_effect(sessions, retry, REF, TOOL, attempt=1)
    assert retried.receipt.authorized_by == "adk-doubt-1"
    with pytest.raises(InDoubt) as doubt:
        await begin_effect(sessions, retry, REF, TOOL, attempt=2)
    assert isinstance(doubt.value.result, InDoubtResult)
    assert doubt.value.result.in_doubt.attempt_id == retried.receipt.attempt_id
