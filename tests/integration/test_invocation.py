"""The durable runtime end to end on the real dev server: state, approvals, inputs, signals."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.artifacts import LoadRequest, VersionsRequest
from adk_temporal.client import InvocationHandle
from adk_temporal.context import ToolContext
from adk_temporal.errors import (
    ConfirmationMismatchError,
    InvalidResumeInputError,
    SessionBusyError,
    UnknownRequestIdError,
)
from adk_temporal.events import REQUEST_CONFIRMATION_FUNCTION_NAME, Event
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule
from adk_temporal.sessions import SqliteSessionService

from .conftest import Runtime, WorkerFactory

pytestmark = pytest.mark.integration

USER = "u-1"


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _agent() -> Agent:
    return build_weather_agent("scripted:weather")


async def _events(rt: Runtime, session_id: str) -> list[Event]:
    session = await rt.sessions.get(SessionKey(APP_NAME, USER, session_id))
    return session.events


def _responses(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    return [(r.name or "", dict(r.response or {})) for e in events for r in e.function_responses()]


async def _visible(client: Client, query: str, workflow_id: str, timeout: float = 10.0) -> bool:
    """Poll a visibility query until it lists ``workflow_id`` (visibility lags a little)."""
    async with asyncio.timeout(timeout):
        while True:
            ids = [wf.id async for wf in client.list_workflows(query)]
            if workflow_id in ids:
                return True
            await asyncio.sleep(0.1)


async def _pause(handle: InvocationHandle, status: str) -> None:
    await handle.wait_for_status(status, timeout=30)  # type: ignore[arg-type]


async def _paused_purchase(rt: Runtime, session_id: str, city: str) -> InvocationHandle:
    """Start "buy a report for <city>" and wait until it waits for approval."""
    handle = await rt.adk.start(
        APP_NAME, USER, session_id, "weather_agent", f"Buy a weather report for {city}"
    )
    await _pause(handle, "awaiting_confirmation")
    return handle


async def test_paid_report_pauses_then_approval_saves_artifact_once(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """Approval by signal re-enters the tool, which saves report.txt v1 and buys once."""
    session_id = _session()
    async with run_worker([_agent()]) as rt:
        handle = await _paused_purchase(rt, session_id, "Hangzhou")
        query = (
            f"AdkStatus = 'awaiting_confirmation' AND AdkSession = '{session_id}'"
            " AND ExecutionStatus = 'Running'"
        )
        assert await _visible(temporal_client, query, handle.workflow_id)
        assert handle.workflow_id in await rt.adk.waiting()
        [request] = await handle.pending()
        assert request.kind == "confirmation"
        assert request.id.startswith("adk-")
        assert request.tool == "buy_weather_report"
        assert request.args == {"city": "Hangzhou"}
        assert request.payload == {"city": "Hangzhou", "price_usd": 2.0}
        assert "$2.00" in request.hint
        details = (await handle.describe()).raw_description.execution_config.user_metadata
        assert details is not None

        await handle.confirm(request.id, True, checked=False)
        result = await handle.result()
        events = await _events(rt, session_id)
        versions = await rt.artifacts.versions(
            VersionsRequest(
                app_name=APP_NAME, user_id=USER, session_id=session_id, file_name="report.txt"
            )
        )
        ledger = await rt.artifacts.load(
            LoadRequest(
                app_name=APP_NAME,
                user_id=USER,
                session_id=session_id,
                file_name="user:purchases.json",
            )
        )
    assert result.status == "completed"
    assert "report.txt" in result.final_text
    assert versions.versions == [1]
    assert ledger.part.inline_data is not None and ledger.part.inline_data.data is not None
    purchases = json.loads(ledger.part.inline_data.data)
    assert [p["city"] for p in purchases] == ["Hangzhou"]
    final_response = [e for e in events if e.actions.artifact_delta]
    assert len(final_response) == 1
    assert final_response[0].actions.artifact_delta == {
        "report.txt": 1,
        "user:purchases.json": 1,
    }
    request_events = [
        e for e in events if any(c.name == "adk_request_confirmation" for c in e.function_calls())
    ]
    assert len(request_events) == 1
    assert request_events[0].long_running_tool_ids == [request.id]
    original = request_events[0].function_calls()[0].args["originalFunctionCall"]  # type: ignore[index]
    assert original["id"] == request.function_call_id
    assert original["name"] == "buy_weather_report"


async def test_resume_input_none_is_an_answer_and_schema_violations_are_refused(
    run_worker: WorkerFactory,
) -> None:
    """An invalid answer is refused (request stays open); None re-enters the tool as None."""
    session_id = _session()
    async with run_worker([_agent()]) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "Help me plan a trip"
        )
        await _pause(handle, "awaiting_input")
        [request] = await handle.pending()
        assert request.kind == "input"
        assert request.input_schema is not None
        assert request.input_schema["required"] == ["start", "end"]
        with pytest.raises(InvalidResumeInputError, match="'end' is a required property"):
            await handle.resume(request.id, {"start": "2026-12-01"})
        assert [p.id for p in await handle.pending()] == [request.id]
        assert (await handle.status()).status == "awaiting_input"
        await handle.resume(request.id, None)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    responses = [r for n, r in _responses(events) if n == "ask_travel_dates"]
    assert responses == [{"status": "waiting for travel dates"}, {"status": "no dates given"}]
    [reply] = [r for n, r in _responses(events) if n == "adk_request_input"]
    assert reply.pop("waitedSeconds") >= 0
    assert reply.pop("answered")["channel"] == "update"
    assert reply == {"input": None}


async def test_early_resume_signal_is_buffered_and_used(run_worker: WorkerFactory) -> None:
    """An adk_resume sent before the tool asks is kept and answers the request at once."""
    session_id = _session()

    def pick_seat(ctx: ToolContext) -> dict[str, Any]:
        """Ask which seat to book."""
        answer = ctx.resumed_input("seat")
        if answer is None:
            ctx.request_input("Which seat?", {"type": "string"}, interrupt_id="seat")
            return {"status": "waiting"}
        return {"seat": answer.value}

    models = ModelRegistry()
    models.register(
        "scripted:seat",
        lambda name: ScriptedModel([ScriptedRule("seat", [ScriptedCall("pick_seat")])], name=name),
    )
    agent = Agent("seat_agent", "scripted:seat", tools=[pick_seat])
    async with run_worker([agent], models=models) as rt:
        handle = await rt.adk.start(APP_NAME, USER, session_id, "seat_agent", "book a seat")
        await handle.resume("seat", "12A", checked=False)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    responses = [r for n, r in _responses(events) if n == "pick_seat"]
    assert responses[-1] == {"seat": "12A"}


async def test_duplicate_and_unknown_signals_change_nothing(run_worker: WorkerFactory) -> None:
    """A second approval is a no-op; an unknown id is reported and leaves the pause open."""
    session_id = _session()
    async with run_worker([_agent()]) as rt:
        handle = await _paused_purchase(rt, session_id, "Oslo")
        [request] = await handle.pending()
        await handle.confirm("adk-does-not-exist", True, checked=False)
        status = await handle.status()
        assert status.status == "awaiting_confirmation"
        assert [p.id for p in await handle.pending()] == [request.id]
        assert any("adk-does-not-exist" in s for s in status.ignored_signals)
        with pytest.raises(UnknownRequestIdError, match="adk-does-not-exist"):
            await handle.confirm("adk-does-not-exist", True)
        await handle.confirm(request.id, True, checked=False)
        await handle.confirm(request.id, True, checked=False)
        result = await handle.result()
        ledger = await rt.artifacts.load(
            LoadRequest(
                app_name=APP_NAME,
                user_id=USER,
                session_id=session_id,
                file_name="user:purchases.json",
            )
        )
        events = await _events(rt, session_id)
    assert result.status == "completed"
    assert ledger.part.inline_data is not None and ledger.part.inline_data.data is not None
    assert len(json.loads(ledger.part.inline_data.data)) == 1
    bought = [r for n, r in _responses(events) if n == "buy_weather_report"]
    assert [r["status"] for r in bought] == ["waiting for approval", "purchased"]


async def test_checked_update_rejects_answered_id_wrong_kind_and_digest(
    run_worker: WorkerFactory,
) -> None:
    """adk_confirm_checked names the id it refuses: wrong kind, digest mismatch, answered."""
    session_id = _session()
    models = ModelRegistry()
    models.register(
        "scripted:two",
        lambda name: ScriptedModel(
            [
                ScriptedRule(
                    "buy two",
                    [
                        ScriptedCall("buy_weather_report", {"city": "Rome"}),
                        ScriptedCall("buy_weather_report", {"city": "Oslo"}),
                    ],
                )
            ],
            name=name,
        ),
    )
    agent = build_weather_agent("scripted:two")
    async with run_worker([agent], models=models) as rt:
        handle = await rt.adk.start(APP_NAME, USER, session_id, "weather_agent", "buy two")
        await _pause(handle, "awaiting_confirmation")
        rome, oslo = await handle.pending()
        assert isinstance(rome, PendingConfirmation) and isinstance(oslo, PendingConfirmation)
        assert (rome.args, oslo.args) == ({"city": "Rome"}, {"city": "Oslo"})
        with pytest.raises(UnknownRequestIdError, match=f"{rome.id}.*adk_confirm"):
            await handle.resume(rome.id, "x")
        with pytest.raises(ConfirmationMismatchError, match="callDigest"):
            await handle.confirm(rome.id, True, call_digest=oslo.call_digest)
        await handle.confirm(rome.id, True, call_digest=rome.call_digest)
        with pytest.raises(UnknownRequestIdError, match=f"{rome.id}.*already answered"):
            await handle.confirm(rome.id, False)
        assert [p.id for p in await handle.pending()] == [oslo.id]
        await handle.confirm(oslo.id, False)
        result = await handle.result()
        events = await _events(rt, session_id)
    assert result.status == "completed"
    bought = [r for n, r in _responses(events) if n == "buy_weather_report"]
    assert [r["status"] for r in bought[-2:]] == ["purchased", "rejected"]


async def test_second_message_while_running_is_session_busy(run_worker: WorkerFactory) -> None:
    """One running invocation per session: a second start fails with SessionBusyError."""
    session_id = _session()
    async with run_worker([_agent()]) as rt:
        handle = await _paused_purchase(rt, session_id, "Lima")
        with pytest.raises(SessionBusyError, match=session_id):
            await rt.adk.start(APP_NAME, USER, session_id, "weather_agent", "hello")
        [request] = await handle.pending()
        await handle.confirm(request.id, False)
        await handle.result()
        second = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "What's the weather in Lima?"
        )
        assert (await second.result()).status == "completed"


async def _model_step_input_sizes(client: Client, workflow_id: str, run_id: str) -> list[int]:
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    sizes = []
    async for event in handle.fetch_history_events():
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        attrs = event.activity_task_scheduled_event_attributes
        if attrs.activity_type.name == "adk_model_step":
            sizes.append(sum(len(p.data) for p in attrs.input.payloads))
    return sizes


async def test_history_per_step_does_not_grow_with_the_conversation(
    run_worker: WorkerFactory, temporal_client: Client
) -> None:
    """Turn 10's model-step inputs are no larger than turn 2's: no history is resent."""
    session_id = _session()
    sizes: list[list[int]] = []
    async with run_worker([_agent()]) as rt:
        for turn in range(10):
            handle = await rt.adk.start(
                APP_NAME, USER, session_id, "weather_agent", "What's the weather in Hangzhou?"
            )
            await handle.result()
            assert handle.run_id is not None
            sizes.append(
                await _model_step_input_sizes(temporal_client, handle.workflow_id, handle.run_id)
            )
            assert turn == 0 or len(sizes[-1]) == 2
        events = await _events(rt, session_id)
    assert len(events) == 40
    second, tenth = sizes[1], sizes[9]
    # Same new content each turn (one message, then one function response), so the inputs
    # may differ only by a few bytes of ids and counters.
    for later, earlier in zip(tenth, second, strict=True):
        assert later <= earlier + 16


class _HeldRequests(SqliteSessionService):
    """SQLite sessions whose append of a confirmation request waits until released."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.holding = asyncio.Event()
        self.release = asyncio.Event()

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> list[Event]:
        if any(
            call.name == REQUEST_CONFIRMATION_FUNCTION_NAME
            for event in events
            for call in event.function_calls()
        ):
            self.holding.set()
            await self.release.wait()
        return await super().append_events(key, events, unstage=unstage)


async def test_a_pause_is_reported_only_once_its_request_is_in_the_session(
    run_worker: WorkerFactory, tmp_path: Path
) -> None:
    """While the request's events are being stored, the run is still running and lists no
    request; once they are, it waits for approval and the listed id is the stored one's."""
    sessions = _HeldRequests(tmp_path / "held.db")
    session_id = _session()
    async with run_worker([_agent()], sessions=sessions) as rt:
        handle = await rt.adk.start(
            APP_NAME, USER, session_id, "weather_agent", "Buy a weather report for Lima"
        )
        async with asyncio.timeout(60):
            await sessions.holding.wait()
        during = await handle.status()
        assert (during.status, during.pending, await handle.pending()) == ("running", 0, [])
        sessions.release.set()
        await _pause(handle, "awaiting_confirmation")
        [request] = await handle.pending()
        stored = [
            call.id
            for event in await _events(rt, session_id)
            for call in event.function_calls()
            if call.name == REQUEST_CONFIRMATION_FUNCTION_NAME
        ]
        assert stored == [request.id]
        await handle.confirm(request.id, True)
        assert (await handle.result()).status == "completed"
