"""Running an eval set as ADK's ``adk eval`` does, on either engine.

For each eval case (google-adk 2.13 ``local_eval_service.py`` and
``evaluation_generator.py``): a session is created from the case's ``session_input``
(user ``test_user_id`` and a fresh session id when it names none), each user turn of the
conversation is sent in order to the root agent, the session's events become the actual
turns (:mod:`.conversions`), and each metric of the criteria scores them against the
expected ones. A case whose run fails, or yields another number of turns, fails with no
metric. As in ADK, nobody answers an approval or an input request: a turn that pauses ends
there (its invocation is cancelled) and the next turn goes on.

The engine is anything that starts an invocation and hands back something to wait on —
the in-process :class:`~adk_temporal.runner.Runner` (the default) or the Temporal client
(``--on-temporal``, in the command) — plus the session store both read.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from google.genai import types
from pydantic import BaseModel, Field

from ..app import App, Stores
from ..artifacts import InMemoryArtifactService
from ..flow.messages import AdkStatus, InvocationResult, InvocationStatus
from ..ids import SessionKey
from ..runner import Runner
from ..sessions import InMemorySessionService, SessionService, create_session
from .conversions import session_invocations
from .criteria import Criterion
from .evalsets import EvalCase, EvalSet, EvalSetError, Invocation, tool_calls
from .metrics import EvalStatus, MetricResult, case_status, evaluate_metric, response_text

__all__ = [
    "CaseResult",
    "EvalEngine",
    "EvalReport",
    "StartedRun",
    "TurnDetail",
    "call_text",
    "in_process_engine",
    "run_case",
    "run_eval_set",
]

DEFAULT_USER_ID = "test_user_id"
"""The user of a case whose ``session_input`` names none (ADK's default)."""

_STOPPED: tuple[AdkStatus, ...] = (
    "awaiting_confirmation",
    "awaiting_input",
    "completed",
    "failed",
    "cancelled",
)


class StartedRun(Protocol):
    """A started invocation: ``LocalInvocation`` in-process, ``InvocationHandle`` on Temporal."""

    async def wait_for_status(self, *statuses: AdkStatus, timeout: float = ...) -> InvocationStatus:
        """Wait until the status is one of ``statuses`` (or the run ended)."""
        ...

    async def cancel(self) -> None:
        """Cancel the invocation."""
        ...

    async def result(self) -> InvocationResult:
        """The invocation's result once it ended."""
        ...


@dataclass(frozen=True)
class EvalEngine:
    """Where eval cases run: a session store, and how one turn is started on it.

    Args:
        sessions: The store the engine's invocations write to and the eval reads.
        start: Starts ``agent`` with a message in a session; returns the run.
        turn_timeout: Seconds a turn may take before the case fails.
    """

    sessions: SessionService
    start: Callable[[SessionKey, str, types.Content], Awaitable[StartedRun]]
    turn_timeout: float = 300.0


def in_process_engine(app: App, *, turn_timeout: float = 300.0) -> EvalEngine:
    """Cases run by an in-process :class:`~adk_temporal.runner.Runner` of ``app`` over
    in-memory stores, as ADK's eval runs over its in-memory services: nothing is kept."""
    sessions = InMemorySessionService()
    runner = Runner(app, stores=Stores(sessions, InMemoryArtifactService()))

    async def start(key: SessionKey, agent: str, message: types.Content) -> StartedRun:
        return await runner.start(*key, agent, message)

    return EvalEngine(sessions, start, turn_timeout)


class TurnDetail(BaseModel):
    """One turn of a case, as printed: prompt, responses and tool calls, each side."""

    prompt: str
    expected_response: str
    actual_response: str
    expected_tool_calls: list[str]
    actual_tool_calls: list[str]


class CaseResult(BaseModel):
    """One eval case's verdict, metric by metric."""

    eval_set_id: str
    eval_id: str
    status: EvalStatus
    metrics: list[MetricResult] = Field(default_factory=list)
    turns: list[TurnDetail] = Field(default_factory=list)
    session_id: str = ""
    error: str | None = None


class EvalReport(BaseModel):
    """Every case's verdict; ``passed`` when each case passed (ADK's exit status rule)."""

    criteria: dict[str, Criterion]
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        """Whether there were cases and every one passed."""
        return bool(self.cases) and all(c.status is EvalStatus.PASSED for c in self.cases)


def call_text(call: types.FunctionCall) -> str:
    """A call as one line: ``name(key=value, ...)`` with the values as JSON-ish reprs."""
    args = ", ".join(f"{k}={v!r}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


def _details(actual: Sequence[Invocation], expected: Sequence[Invocation]) -> list[TurnDetail]:
    return [
        TurnDetail(
            prompt=response_text(e.user_content),
            expected_response=response_text(e.final_response),
            actual_response=response_text(a.final_response),
            expected_tool_calls=[call_text(c) for c in tool_calls(e.intermediate_data)],
            actual_tool_calls=[call_text(c) for c in tool_calls(a.intermediate_data)],
        )
        for a, e in zip(actual, expected, strict=True)
    ]


async def _run_turns(
    engine: EvalEngine, key: SessionKey, agent: str, turns: Sequence[Invocation]
) -> list[Invocation]:
    for turn in turns:
        run = await engine.start(key, agent, turn.user_content)
        status = await run.wait_for_status(*_STOPPED, timeout=engine.turn_timeout)
        if status.status in ("awaiting_confirmation", "awaiting_input"):
            await run.cancel()
        result = await run.result()
        if result.status == "failed":
            raise RuntimeError(f"turn {turn.invocation_id or '?'} failed: {result.error}")
    return session_invocations((await engine.sessions.get(key)).events)


async def run_case(
    engine: EvalEngine,
    eval_set_id: str,
    case: EvalCase,
    *,
    app_name: str,
    agent: str,
    criteria: dict[str, Criterion],
) -> CaseResult:
    """Run one case's conversation and score it (see the module)."""
    given = case.session_input
    key = SessionKey(
        app_name,
        (given.user_id if given is not None else "") or DEFAULT_USER_ID,
        (given.session_id if given is not None else None) or f"eval-{uuid.uuid4().hex[:12]}",
    )
    result = CaseResult(
        eval_set_id=eval_set_id,
        eval_id=case.eval_id,
        status=EvalStatus.FAILED,
        session_id=key.session_id,
    )
    expected = case.conversation
    if expected is None:
        result.error = "a conversation_scenario needs ADK's user simulator; give a conversation"
        return result
    try:
        await create_session(
            engine.sessions,
            app_name=key.app_name,
            user_id=key.user_id,
            session_id=key.session_id,
            state=given.state if given is not None else None,
        )
        actual = await _run_turns(engine, key, agent, expected)
    except Exception as err:  # a failed inference fails its case, as in ADK
        result.error = f"{type(err).__name__}: {err}"
        return result
    if len(actual) != len(expected):
        result.error = f"the agent ran {len(actual)} turns for {len(expected)} in the case"
        return result
    result.metrics = [evaluate_metric(n, c, actual, expected) for n, c in criteria.items()]
    result.status = case_status(result.metrics)
    result.turns = _details(actual, expected)
    return result


async def run_eval_set(
    engine: EvalEngine,
    eval_set: EvalSet,
    *,
    app_name: str,
    agent: str,
    criteria: dict[str, Criterion],
    case_ids: Sequence[str] = (),
    parallelism: int = 4,
) -> list[CaseResult]:
    """Run the chosen cases of ``eval_set`` (every case when ``case_ids`` is empty).

    Args:
        engine: Where the cases run.
        eval_set: The eval set.
        app_name: The app the sessions belong to.
        agent: The agent each turn is sent to (the root agent).
        criteria: The metrics and their thresholds.
        case_ids: The ids of the cases to run.
        parallelism: How many cases run at once.

    Returns:
        The cases' results, in the eval set's order.

    Raises:
        EvalSetError: A chosen case id is not in the eval set.
    """
    known = {case.eval_id for case in eval_set.eval_cases}
    missing = [case_id for case_id in case_ids if case_id not in known]
    if missing:
        raise EvalSetError(
            f"eval set {eval_set.eval_set_id!r} has no case {', '.join(map(repr, missing))}; "
            f"it has {', '.join(sorted(known)) or 'none'}"
        )
    chosen = [c for c in eval_set.eval_cases if not case_ids or c.eval_id in case_ids]
    slots = asyncio.Semaphore(parallelism)

    async def one(case: EvalCase) -> CaseResult:
        async with slots:
            return await run_case(
                engine,
                eval_set.eval_set_id,
                case,
                app_name=app_name,
                agent=agent,
                criteria=criteria,
            )

    return list(await asyncio.gather(*(one(case) for case in chosen)))
