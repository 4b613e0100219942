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

from adk_temporal.ids import SessionKey

from ..compaction_app import COMPACTION_APP, CONFIG, compaction_app
from .conftest import WorkerFactory

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
