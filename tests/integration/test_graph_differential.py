"""The same graph definitions on google-adk 2.13 and through a real Temporal worker: the
same events (per branch, in order), final state and outcome; the Temporal UI names each
node step ``<workflow> · <node>``."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType

from tests.graphs.adk_env import run_on_adk
from tests.graphs.compare import assert_same_run
from tests.graphs.ours import IN_BOTH, KEY, MODELS, PAUSING, build, recorded
from tests.graphs.scenarios import Answer

from .conftest import WorkerFactory

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("graph_session_closed")]


@pytest.mark.parametrize("scenario", IN_BOTH + PAUSING)
async def test_graph_runs_on_temporal_as_on_adk(run_worker: WorkerFactory, scenario: str) -> None:
    """A graph run by a worker (every workflow task replayed) stores what google-adk
    stores."""
    adk = run_on_adk(scenario)
    built = build(scenario)
    message, *answers = built.messages
    assert isinstance(message, str)
    async with run_worker([built.workflow], models=MODELS) as rt:
        handle = await rt.adk.start(
            KEY.app_name, KEY.user_id, KEY.session_id, built.workflow.name, message
        )
        for answer in answers:
            # The checked update path: the answer is validated by the waiting run.
            assert isinstance(answer, Answer)
            await handle.wait_for_status("awaiting_input")
            await handle.resume(answer.interrupt_id, answer.response)
        result = await handle.result()
        ours = await recorded(rt.sessions, result.error if result.status == "failed" else None)
    assert_same_run(ours, adk, full_order=built.ordered_across_branches)


async def test_node_steps_are_named_after_workflow_and_node(run_worker: WorkerFactory) -> None:
    """Each node is one ``adk_node_step`` activity whose summary is ``<workflow> · <node>``."""
    built = build("nested")
    async with run_worker([built.workflow]) as rt:
        handle = await rt.adk.start(
            KEY.app_name, KEY.user_id, KEY.session_id, built.workflow.name, "go"
        )
        await handle.result()
        history = await rt.client.get_workflow_handle(handle.workflow_id).fetch_history()
    converter = rt.client.data_converter.payload_converter
    summaries = [
        converter.from_payload(e.user_metadata.summary, str)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == "adk_node_step"
    ]
    assert summaries == ["outer · prepare", "inner · inner_a", "inner · inner_b", "outer · wrap"]
