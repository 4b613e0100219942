"""An approver may answer with edited arguments: an editable tool's call then runs with
them, re-bound to a new digest; other tools refuse edits, and bad edits are refused."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.audit import audit_entries
from adk_temporal.client import InvocationHandle
from adk_temporal.confirmation import call_digest
from adk_temporal.devserver import DevServer
from adk_temporal.errors import EditNotAllowedError, InvalidEditError
from adk_temporal.examples.weather import build_weather_agent
from adk_temporal.flow.messages import PendingConfirmation
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedModel, ScriptedReply
from adk_temporal.tools import FunctionTool

from ..commands import run_cli
from .conftest import Runtime, WorkerFactory

APP = "payments"
USER = "u-edit"


def send(amount: int, to: str) -> dict[str, Any]:
    """Send money."""
    return {"sent": amount, "to": to}


def _agent() -> tuple[Agent, ModelRegistry]:
    script: list[ScriptedReply] = [
        types.FunctionCall(name="send", args={"amount": 100, "to": "bob"}),
        "done",
    ]
    models = ModelRegistry()
    models.register("scripted:send", lambda name: ScriptedModel(name=name, script=list(script)))
    tool = FunctionTool(send, require_confirmation=True, editable=True)
    return Agent("payer", "scripted:send", tools=[tool]), models


async def _paused(rt: Runtime, app: str, agent: str, message: str) -> InvocationHandle:
    handle = await rt.adk.start(app, USER, f"s-{uuid.uuid4().hex[:8]}", agent, message)
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    return handle


async def test_an_approval_with_edited_arguments_runs_the_call_with_them(
    run_worker: WorkerFactory,
) -> None:
    """An editable tool's call approved with ``amount: 50`` runs with 50; the reply and
    the audit keep the shown digest, the edited one and the editor; an edit of 10**30,
    2**63 or below -2**63 is refused typed, as schema-breaking edits are. ADK-Python's
    tool_confirmation.py has no edits: this extends its approve-then-re-run flow
    (tests/unittests/flows/llm_flows/test_request_confirmation.py)."""
    agent, models = _agent()
    async with run_worker([agent], models=models) as rt:
        handle = await _paused(rt, APP, "payer", "pay bob")
        [request] = await handle.pending()
        assert isinstance(request, PendingConfirmation)
        assert request.edit_schema is not None
        with pytest.raises(InvalidEditError, match=r"\$\.amount: type"):
            await handle.confirm(request.id, True, edited_args={"amount": "lots", "to": "bob"})
        for wide in (10**30, 2**63, -(2**63) - 1):
            with pytest.raises(InvalidEditError, match=r"outside 64 bits at \$\.amount"):
                await handle.confirm(request.id, True, edited_args={"amount": wide, "to": "bob"})
        with pytest.raises(EditNotAllowedError, match="approval, not a rejection"):
            await handle.confirm(request.id, False, edited_args={"amount": 5, "to": "bob"})
        edited = {"amount": 50, "to": "bob"}
        await handle.confirm(request.id, True, answered_by="carol", edited_args=edited)
        assert (await handle.result()).status == "completed"
        key = SessionKey(APP, USER, handle.workflow_id.rsplit("/", 1)[-1])
        session = await rt.sessions.get(key)
    responses = [r for e in session.events for r in e.function_responses() if r.name == "send"]
    # The gate's "requires confirmation" while it waited, then the edited call's result.
    assert [r.response for r in responses][-1] == {"sent": 50, "to": "bob"}
    assert len(responses) == 2
    [entry] = audit_entries(session.events)
    assert entry.call_digest == request.call_digest == call_digest("send", request.args)
    assert entry.edited_args == edited
    assert entry.edited_call_digest == call_digest("send", edited) != entry.call_digest
    assert (entry.decision, entry.answered_by) == ("approved", "carol")


async def test_a_tool_not_declared_editable_refuses_edits_and_stays_open(
    run_worker: WorkerFactory,
) -> None:
    """Edited arguments for the paid report (not editable) are refused with a typed error;
    the request stays open and a plain approval then completes the run."""
    async with run_worker([build_weather_agent("scripted:weather")]) as rt:
        handle = await _paused(rt, "weather", "weather_agent", "Buy a weather report for Rome")
        [request] = await handle.pending()
        assert isinstance(request, PendingConfirmation)
        assert request.edit_schema is None
        with pytest.raises(EditNotAllowedError, match="editable=True"):
            await handle.confirm(request.id, True, edited_args={"city": "Paris"})
        assert [p.id for p in await handle.pending()] == [request.id]
        await handle.confirm(request.id, True)
        assert (await handle.result()).status == "completed"


async def test_the_cli_approves_with_edited_arguments_as_its_user(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """``confirm --approve --edit-args '{...}' --as dave`` runs the call with the edits and
    records dave, through ``cli``."""
    agent, models = _agent()
    async with run_worker([agent], models=models) as rt:
        handle = await _paused(rt, APP, "payer", "pay bob")
        [request] = await handle.pending()
        done = await run_cli(
            dev_server.address,
            "confirm",
            handle.workflow_id,
            request.id,
            "--approve",
            "--edit-args",
            '{"amount": 7, "to": "eve"}',
            "--as",
            "dave",
            "--task-queue",
            rt.task_queue,
        )
        assert done.returncode == 0, done.stderr
        assert (await handle.result()).status == "completed"
        session = await rt.sessions.get(SessionKey(APP, USER, handle.workflow_id.rsplit("/")[-1]))
    [entry] = audit_entries(session.events)
    assert (entry.edited_args, entry.answered_by, entry.channel) == (
        {"amount": 7, "to": "eve"},
        "dave",
        "cli",
    )
