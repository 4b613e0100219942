"""Rewind and fork on the in-process runner: what the model sees afterwards, the state and
artifacts it finds, refusals while an invocation waits."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from adk_temporal.artifacts import LoadRequest, VersionsRequest
from adk_temporal.errors import SessionBusyError
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.ids import SessionKey
from adk_temporal.models import (
    LlmRequest,
    LlmResponse,
    ModelRegistry,
    ScriptedModel,
    weather_rules,
    weather_summaries,
)

from .conftest import LocalFactory, LocalRuntime

USER = "u-1"


class _Recorder(ScriptedModel):
    """The weather demo's scripted model, keeping the text of every request it answers."""

    def __init__(self) -> None:
        super().__init__(weather_rules(), name="scripted:weather", summaries=weather_summaries())
        self.seen: list[str] = []

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Record every text and response the request carries, then answer by the rules."""
        self.seen.append(
            " ".join(
                part.text or str(part.function_response.response if part.function_response else "")
                for content in request.contents
                for part in content.parts or []
            )
        )
        return await super().generate(request)


def _session() -> SessionKey:
    return SessionKey(APP_NAME, USER, f"s-{uuid.uuid4().hex[:8]}")


def _runtime(run_local: LocalFactory, model: _Recorder) -> Any:
    models = ModelRegistry()
    models.register("scripted:weather", lambda _name: model)
    return run_local([build_weather_agent("scripted:weather")], models=models)


async def _ask(rt: LocalRuntime, key: SessionKey, message: str) -> str:
    """Run one turn to its end; its invocation id."""
    result = await rt.adk.run(*key, "weather_agent", message)
    assert result.status == "completed", result
    return result.invocation_id


async def test_after_a_rewind_the_next_turn_sees_only_the_earlier_turns(
    run_local: LocalFactory,
) -> None:
    """Rewind before the Oslo turn: the Rome turn's model sees Paris, not Oslo, and the
    state is the one before Oslo, initial state included."""
    model = _Recorder()
    key = _session()
    async with _runtime(run_local, model) as rt:
        await rt.sessions.create(key, state={"tier": "gold", "last_city": "Nowhere"})
        await _ask(rt, key, "What is the weather in Paris?")
        oslo = await _ask(rt, key, "What is the weather in Oslo?")
        assert (await rt.sessions.get_state(key))["last_city"] == "Oslo"
        result = await rt.adk.rewind(key, oslo)
        assert result.state_delta == {"last_city": "Paris"}
        model.seen.clear()
        await _ask(rt, key, "What is the weather in Rome?")
        state = await rt.sessions.get_state(key)
    assert "Paris" in model.seen[0] and "Rome" in model.seen[0]
    assert all("Oslo" not in seen for seen in model.seen)
    assert state == {"tier": "gold", "last_city": "Rome"}


async def test_rewind_before_the_first_turn_restores_initial_state_and_artifacts(
    run_local: LocalFactory,
) -> None:
    """A bought and updated report, rewound before the update, is v1's text again as v3;
    rewound before the purchase, the initial state is back and report.txt is empty."""
    key = _session()
    async with _runtime(run_local, _Recorder()) as rt:
        await rt.sessions.create(key, state={"tier": "gold"})
        start = await rt.adk.start(*key, "weather_agent", "Buy a weather report for Hangzhou")
        await start.wait_for_status("awaiting_confirmation")
        [request] = await start.pending()
        await start.confirm(request.id, True)
        bought = (await start.result()).invocation_id
        update = await _ask(rt, key, "Update the report for Hangzhou: take an umbrella")
        rewound = await rt.adk.rewind(key, update)
        report = await rt.artifacts.load(LoadRequest.of(key, file_name="report.txt"))
        assert rewound.artifact_delta == {"report.txt": 3}
        assert report.part.text is not None and "umbrella" not in report.part.text
        await rt.adk.rewind(key, bought)
        state = await rt.sessions.get_state(key)
        empty = await rt.artifacts.load(LoadRequest.of(key, file_name="report.txt"))
        versions = await rt.artifacts.versions(VersionsRequest.of(key, file_name="report.txt"))
    assert state == {"tier": "gold"}
    assert empty.part.inline_data is not None and empty.part.inline_data.data == b""
    assert versions.versions == [1, 2, 3, 4]


async def test_rewind_and_fork_of_the_waiting_invocation_are_refused(
    run_local: LocalFactory,
) -> None:
    """While an invocation waits for approval, rewind and a fork copying it are refused;
    a fork as of the finished turn before it is not."""
    key = _session()
    async with _runtime(run_local, _Recorder()) as rt:
        paris = await _ask(rt, key, "What is the weather in Paris?")
        waiting = await rt.adk.start(*key, "weather_agent", "Buy a weather report for Oslo")
        await waiting.wait_for_status("awaiting_confirmation")
        with pytest.raises(SessionBusyError, match="rewind"):
            await rt.adk.rewind(key, paris)
        with pytest.raises(SessionBusyError, match="fork"):
            await rt.adk.fork(key, waiting.invocation_id)
        forked = await rt.adk.fork(key, paris)
        [request] = await waiting.pending()
        await waiting.confirm(request.id, False)
        await waiting.result()
        rewound = await rt.adk.rewind(key, paris)
    assert forked.events > 0 and rewound.appended


async def test_fork_then_both_sessions_go_on_independently(run_local: LocalFactory) -> None:
    """A fork as of the Paris turn continues with Rome, the original with Lima: each model
    sees its own session's turns only, and each state is its own."""
    model = _Recorder()
    key = _session()
    async with _runtime(run_local, model) as rt:
        paris = await _ask(rt, key, "What is the weather in Paris?")
        await _ask(rt, key, "What is the weather in Oslo?")
        forked = await rt.adk.fork(key, paris, new_session_id=f"{key.session_id}-fork")
        fork = SessionKey(APP_NAME, USER, forked.session_id)
        model.seen.clear()
        await _ask(rt, fork, "What is the weather in Rome?")
        in_fork = list(model.seen)
        model.seen.clear()
        await _ask(rt, key, "What is the weather in Lima?")
        in_original = list(model.seen)
        fork_state = await rt.sessions.get_state(fork)
        original_state = await rt.sessions.get_state(key)
    assert "Paris" in in_fork[0] and "Oslo" not in in_fork[0] and "Lima" not in in_fork[-1]
    assert "Oslo" in in_original[0] and "Rome" not in in_original[-1]
    assert fork_state == {"last_city": "Rome"}
    assert original_state == {"last_city": "Lima"}
