"""What a baseline run's step inputs carry short, and the activity restores whole."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from google.genai import types

from adk_temporal.activities.short_ids import (
    drawn_id,
    restored,
    run_invocation_id,
    short_result,
)
from adk_temporal.compaction import EventsCompactionConfig
from adk_temporal.converter import AdkPayloadConverter
from adk_temporal.events import Event
from adk_temporal.flow.compacting import CompactionInput
from adk_temporal.flow.gates import GATES
from adk_temporal.flow.messages import (
    AppendEventsInput,
    InlineResult,
    InvocationRef,
    MergedResponses,
    ModelStepInput,
    PlannedCall,
    StagedResponse,
    StagedResult,
    ToolCallInput,
    stage_id,
)
from adk_temporal.run_config import RunConfig
from adk_temporal.workflows import invocation as invocation_workflow
from adk_temporal.workflows.messages import BASELINE
from adk_temporal.workflows.short_ids import RunIds, whole_result

RUN = "01a237a5-092d-7d54-a55c-d06f4edb1fae"
AT = 1796229892.398038
SCHEDULED = AT + 0.004
REPO = Path(__file__).resolve().parents[2]


def _ids() -> RunIds:
    return RunIds(RUN, RUN, None)


def _payload(value: object) -> dict[str, object]:
    [payload] = AdkPayloadConverter().to_payloads([value])
    decoded: dict[str, object] = json.loads(payload.data)
    return decoded


def _model_step(ids: RunIds) -> ModelStepInput:
    invocation = ids.invocation_id
    user = Event(
        id=ids.draw(),
        invocation_id=invocation,
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="look up t2")]),
        timestamp=AT,
    )
    merged = MergedResponses(
        kind="merged",
        id=ids.draw(),
        timestamp=AT,
        responses=[
            StagedResponse(staged=stage_id(invocation, "call-1")),
            StagedResponse(staged=stage_id("e-other", "call-2"), optional=True),
            Event(id="flow-made", invocation_id=invocation, author="a", timestamp=AT - 1),
        ],
    )
    return ModelStepInput(
        ref=InvocationRef(agent_name="a", invocation_id=invocation),
        step=2,
        model_event_id=ids.draw(),
        pending_events=[user, merged],
        timestamp=AT,
        run_config=RunConfig(),
    )


def test_a_model_step_crosses_history_short_and_is_restored_whole() -> None:
    ids = _ids()
    inp = _model_step(ids)
    short = ids.short(inp)
    sent = _payload(short)
    # What the step can rebuild is not sent: the run's invocation, its drawn ids, its time.
    assert sent["ref"] == {"agent_name": "a"}
    assert sent["model_event_id"] == "~3"
    assert "timestamp" not in sent and "run_config" not in sent
    events: list[dict[str, Any]] = sent["pending_events"]  # type: ignore[assignment]
    user, merged = events
    assert user == {
        "id": "~1",
        "author": "user",
        "content": {"parts": [{"text": "look up t2"}], "role": "user"},
    }
    assert merged["responses"][0] == {"staged": "~/call-1"}
    # Another invocation's staged response and a flow-made event's own time stay as they are.
    assert merged["responses"][1]["staged"] == "e-other/call-2"
    assert merged["responses"][2]["timestamp"] == AT - 1
    whole = restored(short, RUN, SCHEDULED)
    # The step's time becomes the time Temporal scheduled it; everything else is as drawn.
    expected = inp.model_copy(deep=True)
    expected.timestamp = SCHEDULED
    for event in expected.pending_events:
        if event.timestamp == AT:
            event.timestamp = SCHEDULED
    expected.run_config = None
    assert whole == expected


def test_restoring_a_whole_input_changes_nothing() -> None:
    """Inputs of runs recorded before baselines, and of continued runs, are whole."""
    inp = _model_step(RunIds("other-run", "other-run", None))
    assert restored(inp, RUN, SCHEDULED) == inp


def test_only_a_chains_first_run_shortens() -> None:
    """A continued or a reset run draws from a seed the activity cannot rebuild."""
    for ids in (RunIds(RUN, "first", None), RunIds(RUN, RUN, "previous")):
        inp = _model_step(ids)
        assert ids.short(inp) == inp
        assert inp.ref.invocation_id.startswith("e-")
    continued = RunIds(RUN, "first", "previous")
    assert continued.draw() != RunIds(RUN, "first", None).draw()


def test_ids_are_uuids_the_same_wherever_drawn() -> None:
    ids, again = _ids(), _ids()
    drawn = [ids.draw() for _ in range(3)]
    assert drawn == [again.draw() for _ in range(3)] == [drawn_id(RUN, n) for n in (1, 2, 3)]
    assert len(set(drawn)) == 3
    assert all(uuid.UUID(d).version == 5 for d in drawn)
    assert ids.invocation_id == run_invocation_id(RUN)
    assert re.fullmatch(r"e-[0-9a-f-]{36}", ids.invocation_id)


def test_tool_call_append_and_compaction_inputs_round_trip() -> None:
    ids = _ids()
    ref = InvocationRef(agent_name="a", invocation_id=ids.invocation_id, branch="b")
    tool = ToolCallInput(ref=ref, call=PlannedCall(id="c1", name="t"), run_config=RunConfig())
    event = Event(id=ids.draw(), invocation_id=ids.invocation_id, author="a", timestamp=AT)
    append = AppendEventsInput(ref=ref, events=[event])
    compaction = CompactionInput(
        ref=ref,
        config=EventsCompactionConfig(compaction_interval=2, overlap_size=1),
        event_id=ids.draw(),
        timestamp=AT,
    )
    assert _payload(ids.short(tool))["ref"] == {"agent_name": "a", "branch": "b"}
    assert _payload(ids.short(append))["events"] == [{"id": "~1", "author": "a", "timestamp": AT}]
    assert _payload(ids.short(compaction))["event_id"] == "~2"
    assert restored(ids.short(tool), RUN, SCHEDULED) == tool.model_copy(update={"run_config": None})
    assert restored(ids.short(append), RUN, SCHEDULED) == append
    assert restored(ids.short(compaction), RUN, SCHEDULED) == compaction.model_copy(
        update={"timestamp": SCHEDULED}
    )


def test_a_tool_result_is_short_only_for_a_workflow_that_sent_short() -> None:
    ids = _ids()
    whole = ToolCallInput(
        ref=InvocationRef(agent_name="a", invocation_id=ids.invocation_id),
        call=PlannedCall(id="c1", name="t"),
    )
    result = StagedResult(staged=stage_id(ids.invocation_id, "c1"))
    short = short_result(result, ids.short(whole), whole)
    assert isinstance(short, StagedResult) and short.staged == "~/c1"
    assert whole_result(short, ids.invocation_id) == result
    # A workflow of an earlier release (or a continued run) sent the whole ref: whole back.
    assert short_result(result, whole, whole) == result
    assert whole_result(result, ids.invocation_id) == result
    inline = InlineResult(response={"ok": True})
    assert short_result(inline, ids.short(whole), whole) == inline


def test_every_behaviour_change_is_on_at_the_newest_baseline() -> None:
    """A change gated today and left out of the newest baseline would be lost to its runs;
    each baseline has every change of the one before it."""
    baselines = invocation_workflow._BASELINE_CHANGES
    assert max(baselines) == BASELINE
    assert set(GATES) == set(baselines[BASELINE])
    assert all(baselines[b - 1] < baselines[b] for b in baselines if b - 1 in baselines)
