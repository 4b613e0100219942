"""Counterfactual replay: recorded sessions re-run with a candidate, tools served from the
record, nothing written to the live stores.

For each session, the live session store and artifact store are only read: the session's
events, its initial state, and every version of the artifacts its events saved. The replay
runs in-process (:class:`~adk_temporal.runner.Runner`) over in-memory copies — a new
session holding the initial state (plus the app's and user's shared keys as they are now),
the artifacts copied under their version numbers — and sends each recorded user message,
in order, to the candidate (:mod:`.candidate`). Every tool call is answered from the record
(:mod:`.served`); approvals and inputs the candidate asks for again are answered as the
record answered them. A request the record never answered ends the turn there
(``cancelled``). Sessions replay concurrently, at most ``concurrency`` at once; the report
keeps the order asked (:mod:`.report`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agents import AgentRegistry
from ..app import App, Stores
from ..artifacts import ArtifactService, InMemoryArtifactService
from ..errors import AdkError
from ..events import Event
from ..flow.messages import PendingConfirmation, PendingRequest
from ..ids import SessionKey
from ..rewind import artifact_versions, copy_artifact_version
from ..runner import LocalInvocation, Runner
from ..sessions import ConversationStore, InMemorySessionService, create_session
from ..usage import TokenUsage
from .candidate import CandidateChange, candidate_app
from .pricing import DEFAULT_PRICES, Price, cost_of
from .recorded import RecordedSession, RecordedTurn, model_calls, read_recorded
from .report import Divergence, ReplayReport, SessionReplay, TurnReplay
from .rouge import rouge1_fmeasure
from .served import SessionServing, ToolServer, call_signature

__all__ = ["ReplayOptions", "replay_sessions"]

_SHARED_PREFIXES = ("app:", "user:")
_POLL_SECONDS = 0.005


@dataclass(frozen=True)
class ReplayOptions:
    """How a replay runs.

    Args:
        root_agent: The agent each turn is sent to; the app's first agent when ``None``.
        concurrency: How many sessions replay at once.
        turn_timeout: Seconds a turn may take before its session is reported failed.
        prices: ``(pattern, price)`` pairs for the estimated cost, first match wins.
        sandbox: An app whose tools run the calls the record cannot answer.
    """

    root_agent: str | None = None
    concurrency: int = 4
    turn_timeout: float = 300.0
    prices: Sequence[tuple[str, Price]] = field(
        default_factory=lambda: list(DEFAULT_PRICES.items())
    )
    sandbox: App | None = None


@dataclass
class _Replay:
    """What every session's replay shares."""

    live: ConversationStore
    artifacts: ArtifactService | None
    runner: Runner
    server: ToolServer
    options: ReplayOptions
    root: str
    models_before: Mapping[str, str]
    models_after: Mapping[str, str]


def _models(app: App) -> dict[str, str]:
    registry = AgentRegistry(app.agents)
    models = {}
    for name in registry:
        try:
            models[name] = registry.model_of(name)
        except LookupError:
            continue  # a workflow agent calls no model
    return models


async def _copy_in(replay: _Replay, key: SessionKey) -> RecordedSession:
    """Read the recorded session and open its in-memory copy (the live stores only read)."""
    session = await replay.live.get(key)
    initial = await replay.live.get_initial_state(key)
    shared = {k: v for k, v in session.state.items() if k.startswith(_SHARED_PREFIXES)}
    memory = replay.runner.services
    await create_session(
        memory.sessions,
        app_name=key.app_name,
        user_id=key.user_id,
        session_id=key.session_id,
        state={**shared, **initial},
    )
    if replay.artifacts is not None and memory.artifacts is not None:
        for name, last in artifact_versions(session.events).items():
            for version in range(last + 1):
                try:
                    await copy_artifact_version(
                        replay.artifacts, key, memory.artifacts, key, name, version
                    )
                except AdkError:
                    continue  # a version deleted since: nothing to copy
    return read_recorded(key, session.events, initial)


async def _answer(run: LocalInvocation, request: PendingRequest, serving: SessionServing) -> bool:
    """Answer a request as the record did; ``False`` when the record holds no answer."""
    if isinstance(request, PendingConfirmation):
        recorded = serving.match(request.function_call_id, request.tool, request.args)
        if recorded is None:
            # Nothing will run: the call is answered as unrecorded once approved.
            await run.confirm(request.id, True, answered_by="replay")
            return True
        if recorded.confirmation is None:
            return False
        answer = recorded.confirmation
        await run.confirm(request.id, answer.confirmed, answer.payload, answered_by="replay")
        return True
    recorded = serving.matched.get(request.function_call_id)
    given = serving.inputs_given.get(request.function_call_id, 0)
    if recorded is None or given >= len(recorded.inputs):
        return False
    serving.inputs_given[request.function_call_id] = given + 1
    await run.resume(request.id, recorded.inputs[given])
    return True


async def _drive(
    replay: _Replay, key: SessionKey, turn: RecordedTurn, serving: SessionServing
) -> tuple[str, str]:
    """Run one turn to its end, answering from the record; its status and invocation id."""
    serving.turn = turn.index
    run = await replay.runner.start(*key, replay.root, turn.message)
    answered: set[str] = set()
    async with asyncio.timeout(replay.options.turn_timeout):
        while not run.done():
            waiting = [r for r in await run.pending() if r.id not in answered]
            if not waiting:
                await asyncio.sleep(_POLL_SECONDS)
                continue
            for request in waiting:
                answered.add(request.id)
                if not await _answer(run, request, serving):
                    await run.cancel()
                    break
    result = await run.result()
    return result.status, result.invocation_id


def _replayed(
    events: Sequence[Event], invocation_id: str
) -> tuple[list[str], str, dict[str, TokenUsage]]:
    calls: list[str] = []
    text = ""
    usage: dict[str, TokenUsage] = {}
    for event in events:
        if event.invocation_id != invocation_id:
            continue
        calls += [call_signature(c.name or "", c.args) for c in model_calls(event)]
        if event.author != "user" and event.is_final_response() and event.text():
            text = event.text()
        if event.usage_metadata is not None:
            usage[event.author] = usage.get(event.author, TokenUsage()) + TokenUsage.of(
                event.usage_metadata
            )
    return calls, text, usage


def _similarity(candidate: str, recorded: str) -> float:
    return 1.0 if candidate == recorded else rouge1_fmeasure(candidate, recorded)


def _divergence(index: int, turn: TurnReplay) -> Divergence | None:
    recorded, candidate = turn.recorded_calls, turn.candidate_calls
    if recorded != candidate:
        at = next(
            (i for i, (r, c) in enumerate(zip(recorded, candidate, strict=False)) if r != c),
            min(len(recorded), len(candidate)),
        )
        return Divergence(
            turn=index + 1,
            kind="call",
            recorded=recorded[at] if at < len(recorded) else "-",
            candidate=candidate[at] if at < len(candidate) else "-",
        )
    if turn.recorded_text != turn.candidate_text:
        return Divergence(
            turn=index + 1, kind="text", recorded=turn.recorded_text, candidate=turn.candidate_text
        )
    return None


def _summarise(
    result: SessionReplay,
    before: dict[str, TokenUsage],
    after: dict[str, TokenUsage],
    replay: _Replay,
) -> None:
    recorded = Counter(c for t in result.turns for c in t.recorded_calls)
    replayed = Counter(c for t in result.turns for c in t.candidate_calls)
    result.calls_added = sorted((replayed - recorded).elements())
    result.calls_dropped = sorted((recorded - replayed).elements())
    result.first_divergence = next(
        (d for i, t in enumerate(result.turns) if (d := _divergence(i, t)) is not None), None
    )
    result.similarity = sum(t.similarity for t in result.turns) / (len(result.turns) or 1)
    result.tokens_before = sum(before.values(), TokenUsage())
    result.tokens_after = sum(after.values(), TokenUsage())
    result.cost_before = cost_of(before, replay.models_before, replay.options.prices)
    result.cost_after = cost_of(after, replay.models_after, replay.options.prices)


def _add(into: dict[str, TokenUsage], spent: Mapping[str, TokenUsage]) -> None:
    for agent, usage in spent.items():
        into[agent] = into.get(agent, TokenUsage()) + usage


async def _replay_session(replay: _Replay, key: SessionKey) -> SessionReplay:
    result = SessionReplay(app_name=key.app_name, user_id=key.user_id, session_id=key.session_id)
    before: dict[str, TokenUsage] = {}
    after: dict[str, TokenUsage] = {}
    try:
        record = await _copy_in(replay, key)
        serving = SessionServing(record)
        replay.server.sessions[(key.app_name, key.user_id, key.session_id)] = serving
        for turn in record.turns:
            status, invocation_id = await _drive(replay, key, turn, serving)
            events = (await replay.runner.services.sessions.get(key)).events
            calls, text, spent = _replayed(events, invocation_id)
            recorded_calls = [call_signature(c.name or "", c.args) for c in turn.calls]
            result.turns.append(
                TurnReplay(
                    message="".join(p.text or "" for p in turn.message.parts or ()),
                    recorded_calls=recorded_calls,
                    candidate_calls=calls,
                    recorded_text=turn.final_text,
                    candidate_text=text,
                    similarity=_similarity(text, turn.final_text),
                    status=status,
                )
            )
            _add(before, turn.usage)
            _add(after, spent)
        result.unmatched_calls = list(serving.unmatched)
        result.sandbox_calls = serving.executed
    except (AdkError, TimeoutError, ValueError) as err:
        result.error = f"{type(err).__name__}: {err}"
    _summarise(result, before, after, replay)
    return result


async def replay_sessions(
    live: ConversationStore,
    artifacts: ArtifactService | None,
    keys: Sequence[SessionKey],
    app: App,
    change: CandidateChange,
    options: ReplayOptions | None = None,
    *,
    on_session: Callable[[SessionReplay], None] | None = None,
) -> ReplayReport:
    """Replay ``keys`` against ``app`` changed by ``change`` (see the module).

    Args:
        live: The session store the sessions were recorded in; only read.
        artifacts: Their artifact store; only read (``None``: no artifacts copied).
        keys: The sessions, in the order the report lists them.
        app: The app whose agents are the candidate's starting point.
        change: The model, instructions and seed to change.
        options: How the replay runs.
        on_session: Called as each session's replay ends (a progress bar).

    Raises:
        ValueError: An instruction names an agent the app does not have.
        UnknownAgentError: ``options.root_agent`` is not an agent of the app.
    """
    options = options or ReplayOptions()
    server = ToolServer(AgentRegistry(options.sandbox.agents) if options.sandbox else None)
    candidate = candidate_app(app, change, server)
    runner = Runner(candidate, stores=Stores(InMemorySessionService(), InMemoryArtifactService()))
    root = options.root_agent or app.agents[0].name
    runner.services.agents[root]
    replay = _Replay(
        live, artifacts, runner, server, options, root, _models(app), _models(candidate)
    )
    slots = asyncio.Semaphore(options.concurrency)

    async def one(key: SessionKey) -> SessionReplay:
        async with slots:
            done = await _replay_session(replay, key)
        if on_session is not None:
            on_session(done)
        return done

    sessions = await asyncio.gather(*(one(key) for key in keys))
    described: dict[str, Any] = {
        "app": app.name,
        "root_agent": root,
        "model": change.model,
        "instructions": sorted(change.instructions),
        "seed": change.seed,
    }
    return ReplayReport(candidate=described, sessions=list(sessions))
