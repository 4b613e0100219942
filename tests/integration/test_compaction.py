"""Events compaction on Temporal through a real worker: ``adk_compact`` runs as its own
activity while an approval is pending, the approval still works and the tool re-enters
once, and history carries no summary.

Ported from ADK-Python's tests/unittests/apps/test_compaction.py (compaction every
``compaction_interval`` invocations); the pause rule answers ADK #4740.
"""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.compaction import COMPACTION_FAILED, EventsCompactionConfig
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry
from adk_temporal.summarizers import FunctionSummarizer

from ..compaction_app import COMPACTION_APP, CONFIG, EchoModel, compaction_app
from .conftest import Runtime, WorkerFactory

USER = "u-1"


@pytest.mark.parametrize("hand_over_after", [None, 3], ids=["one-run", "continue-as-new"])
async def test_a_pending_approval_survives_a_compaction_on_temporal(
    run_worker: WorkerFactory, temporal_client: Client, hand_over_after: int | None
) -> None:
    """The second invocation pauses for approval; ``adk_compact`` covers the first turn
    only; once approved the tool runs once and the model sees summary, call and response,
    also when the run continued as new while it waited. The summary's text is in the
    session store, not in the run's history."""
    app = compaction_app()
    sid = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([app.agent], models=app.models, events_compaction_config=CONFIG) as rt:
        first = await (await rt.adk.start(COMPACTION_APP, USER, sid, "payer", "hi")).result()
        handle = await rt.adk.start(
            COMPACTION_APP,
            USER,
            sid,
            "payer",
            "pay 5",
            continue_as_new_after_events=hand_over_after,
        )
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        [request] = await handle.pending()
        await handle.confirm(request.id, True)
        result = await handle.result()
        assert result.status == "completed" and app.paid == [5]
        session = await rt.sessions.get(SessionKey(COMPACTION_APP, USER, sid))
        [compaction] = [e.actions.compaction for e in session.events if e.actions.compaction]
        by_id = {e.id: e for e in session.events}
        assert by_id[compaction.end_event_id].invocation_id == first.invocation_id
        last = app.model.requests[-1]
        texts = [p.text for c in last.contents for p in c.parts or [] if p.text]
        assert texts[:2] == ["SUMMARY: greeted", "pay 5"]
        query = f"WorkflowId = '{handle.workflow_id}'"
        runs = [wf.run_id async for wf in temporal_client.list_workflows(query)]
        assert len(runs) == (2 if hand_over_after is None else 3)
        scheduled: list[str] = []
        for run_id in runs:
            wf = temporal_client.get_workflow_handle(handle.workflow_id, run_id=run_id)
            history = await wf.fetch_history()
            scheduled += [
                e.activity_task_scheduled_event_attributes.activity_type.name
                for e in history.events
                if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            ]
            assert "SUMMARY" not in json.dumps(history.to_json_dict())
        assert "adk_compact" in scheduled


class _Summaries:
    """A summary function whose behaviour a test switches: raise, answer 3 MB, answer text
    with a lone surrogate (not UTF-8), or answer well; it counts its calls."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        if self.mode == "raise":
            raise RuntimeError("the summarizer is down")
        if self.mode == "huge":
            return "x" * 3_000_000
        if self.mode == "not-utf8":
            return b"caf\xe9".decode("utf-8", "surrogateescape")
        return "SUMMARY of the turns"


def _summarizing(summaries: _Summaries) -> tuple[Agent, ModelRegistry, EventsCompactionConfig]:
    models = ModelRegistry()
    models.register("echo", lambda _name: EchoModel())
    models.register("summarizer", lambda name: FunctionSummarizer(name, summaries))
    config = EventsCompactionConfig(compaction_interval=1, summarizer_model="summarizer")
    return Agent(name="echoer", model="echo"), models, config


async def _turns(rt: Runtime, sid: str, texts: list[str]) -> None:
    for text in texts:
        # Two attempts: a compaction step that failed its turn did so at once, not in minutes.
        handle = await rt.adk.start(
            COMPACTION_APP, USER, sid, "echoer", text, model_maximum_attempts=2
        )
        result = await handle.result()
        assert (result.status, result.final_text) == ("completed", f"echo: {text}"), result


async def test_a_summarizer_that_raises_fails_no_turn_and_is_tried_again_with_back_off(
    run_worker: WorkerFactory,
) -> None:
    """Compacting after every turn with a summarizer that raises: every turn completes with
    its answer and the session holds a CompactionFailed note per try; the tries back off
    (turns 1, 2 and 4 call it, turn 3 does not); once the summarizer works again its next
    try (turn 8, four turns after the third failure) stores the compaction, and the model
    then sees the summary."""
    summaries = _Summaries("raise")
    agent, models, config = _summarizing(summaries)
    sid = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([agent], models=models, events_compaction_config=config) as rt:
        await _turns(rt, sid, ["t1", "t2", "t3", "t4"])
        assert summaries.calls == 3
        summaries.mode = "works"
        await _turns(rt, sid, ["t5", "t6", "t7"])
        assert summaries.calls == 3
        await _turns(rt, sid, ["t8", "t9"])
        session = await rt.sessions.get(SessionKey(COMPACTION_APP, USER, sid))
    notes = [e for e in session.events if e.error_code == COMPACTION_FAILED]
    assert len(notes) == 3 and all(n.content is None for n in notes)
    assert all("RuntimeError: the summarizer is down" in (n.error_message or "") for n in notes)
    compactions = [e.actions.compaction for e in session.events if e.actions.compaction]
    assert summaries.calls == 5 and len(compactions) == 2
    summary = compactions[-1].compacted_content if compactions[-1] is not None else None
    assert summary is not None and (summary.parts or [])[0].text == "SUMMARY of the turns"


@pytest.mark.parametrize("mode", ["huge", "not-utf8"])
async def test_a_summary_that_cannot_be_stored_is_noted_not_stored(
    run_worker: WorkerFactory, mode: str
) -> None:
    """A 3 MB summary (over model_reply_bytes) or one that is not UTF-8 is refused like a
    model reply over its budget: the turn completes, the session holds a short note of why
    and nothing of the summary; the next turn completes too, its own try noted again."""
    summaries = _Summaries(mode)
    agent, models, config = _summarizing(summaries)
    sid = f"s-{uuid.uuid4().hex[:8]}"
    async with run_worker([agent], models=models, events_compaction_config=config) as rt:
        await _turns(rt, sid, ["first", "second"])
        session = await rt.sessions.get(SessionKey(COMPACTION_APP, USER, sid))
    notes = [e for e in session.events if e.error_code == COMPACTION_FAILED]
    why = "over the model_reply_bytes budget" if mode == "huge" else "not valid UTF-8"
    assert len(notes) == 2 and all(why in (n.error_message or "") for n in notes)
    assert not [e for e in session.events if e.actions.compaction]
    assert len(session.model_dump_json()) < 100_000
