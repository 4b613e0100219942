"""Double texting on the dev server: a second message sent while the first invocation is in
a slow tool is refused, queued, or stops the first (interrupt, rollback)."""

from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path

import pytest
from google.genai import types
from temporalio.client import Client, WorkflowHandle

from adk_temporal.agents import Agent, ParallelAgent
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.double_texting import MessageWithdrawnError, QueuedMessageNotFoundError
from adk_temporal.errors import SessionBusyError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey

from ..texting_app import DIR_ENV, agent, calls, mark, models, open_gate, slow_step
from .conftest import Runtime, WorkerFactory
from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

APP = "texting"
USER = "u-texting"


def _session() -> SessionKey:
    return SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")


async def _in_slow_step(gates: Path, label: str, timeout: float = 60.0) -> None:
    """Wait until ``slow_step(label)`` runs."""
    async with asyncio.timeout(timeout):
        while ("slow_step", label) not in calls(gates):
            await asyncio.sleep(0.05)


async def _first_in_slow_step(
    texting_rt: Runtime, gates: Path, key: SessionKey
) -> InvocationHandle:
    handle = await texting_rt.adk.start(*key, "tasker", "task one")
    await _in_slow_step(gates, "one")
    return handle


async def _events(texting_rt: Runtime, key: SessionKey) -> list[Event]:
    return (await texting_rt.sessions.get(key)).events


def _responses(events: list[Event], invocation_id: str) -> list[dict[str, object]]:
    return [
        dict(r.response or {})
        for e in events
        if e.invocation_id == invocation_id
        for r in e.function_responses()
    ]


async def test_reject_refuses_the_second_message_with_a_clear_error(
    texting_rt: Runtime, gates: Path
) -> None:
    """``reject`` (and the app's default, which is reject) raise SessionBusyError naming the
    session; the first invocation runs on untouched."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    with pytest.raises(SessionBusyError, match=f"session {key} is busy"):
        await texting_rt.adk.start(*key, "tasker", "task two", double_texting="reject")
    with pytest.raises(SessionBusyError, match=f"session {key} is busy.*refuses a second"):
        await texting_rt.adk.start(*key, "tasker", "task two")
    open_gate(gates, "one")
    result = await first.result()
    assert result.status == "completed" and result.final_text == "marked one done one"
    assert ("slow_step", "two") not in calls(gates)
    assert (await first.queued()) == []


async def test_enqueue_runs_both_in_order_each_tool_once(texting_rt: Runtime, gates: Path) -> None:
    """``enqueue``: the second message waits in the session's workflow, runs once the first
    invocation ended, and each caller gets its own invocation's result."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    second = await texting_rt.adk.start(*key, "tasker", "task two", double_texting="enqueue")
    assert second.invocation_id != first.invocation_id
    [waiting] = await first.queued()
    assert (waiting.invocation_id, waiting.position, waiting.preview) == (
        second.invocation_id,
        1,
        "task two",
    )
    assert (await second.status()).status == "running"
    followed = asyncio.ensure_future(_collect(second))
    open_gate(gates, "one")
    open_gate(gates, "two")
    one, two = await first.result(), await second.result()
    seen = await asyncio.wait_for(followed, 60)
    assert seen and {e.invocation_id for e in seen} == {two.invocation_id}
    assert any(p.text == "marked two done two" for e in seen for p in _parts(e))
    assert (one.invocation_id, one.final_text) == (first.invocation_id, "marked one done one")
    assert (two.invocation_id, two.final_text) == (second.invocation_id, "marked two done two")
    assert sorted(calls(gates)) == sorted(
        [("mark", "one"), ("slow_step", "one"), ("mark", "two"), ("slow_step", "two")]
    )
    events = await _events(texting_rt, key)
    order = [e.invocation_id for e in events]
    assert order.index(two.invocation_id) > max(
        i for i, e in enumerate(events) if e.invocation_id == one.invocation_id
    )
    session = await texting_rt.sessions.get(key)
    assert session.state["marked:one"] is True and session.state["marked:two"] is True


async def _collect(handle: InvocationHandle) -> list[Event]:
    return [event async for event in handle.events()]


def _parts(event: Event) -> list[types.Part]:
    return list(event.content.parts or []) if event.content is not None else []


async def test_a_message_queued_before_the_run_hands_over_is_carried_to_the_next(
    texting_rt: Runtime, gates: Path
) -> None:
    """The first invocation continues as new mid-way (its history bound); the queued
    message is carried to the next run and runs after it; each caller's result is its own."""
    key = _session()
    first = await texting_rt.adk.start(*key, "tasker", "task one", continue_as_new_after_events=3)
    await _in_slow_step(gates, "one")
    second = await texting_rt.adk.start(*key, "tasker", "task two", double_texting="enqueue")
    open_gate(gates, "one")
    open_gate(gates, "two")
    assert (await first.result()).final_text == "marked one done one"
    assert (await second.result()).final_text == "marked two done two"
    query = f"WorkflowId = '{first.workflow_id}'"
    async with asyncio.timeout(60):  # visibility lags a little behind the runs
        # A hand-over inside the first invocation, then the second's own run.
        while len([r async for r in texting_rt.client.list_workflows(query)]) < 3:
            await asyncio.sleep(0.2)


async def test_the_apps_policy_applies_when_the_call_names_none(
    run_worker: WorkerFactory, gates: Path
) -> None:
    """``App.double_texting="enqueue"``: a message sent with no policy is queued by the run,
    which learnt the app's policy from its first model step."""
    async with run_worker([agent()], models=models(), double_texting="enqueue") as texting_rt:
        key = _session()
        first = await _first_in_slow_step(texting_rt, gates, key)
        second = await texting_rt.adk.start(*key, "tasker", "task two")
        assert [q.policy for q in await first.queued()] == ["enqueue"]
        open_gate(gates, "one")
        open_gate(gates, "two")
        assert (await second.result()).final_text == "marked two done two"
        assert (await first.result()).status == "completed"


async def test_interrupt_keeps_the_first_tools_result_and_runs_the_second(
    texting_rt: Runtime, gates: Path
) -> None:
    """``interrupt``: the first invocation stops after the step it is in — its tools' results
    are stored — and ends cancelled; the second message runs next."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    second = await texting_rt.adk.start(*key, "tasker", "task two", double_texting="interrupt")
    open_gate(gates, "two")
    open_gate(gates, "one")
    one = await first.result()
    assert one.status == "cancelled"
    assert one.error == f"interrupted by a new message (invocation {second.invocation_id})"
    two = await second.result()
    assert two.final_text == "marked two done two"
    events = await _events(texting_rt, key)
    assert _responses(events, one.invocation_id) == [{"marked": "one"}, {"done": "one"}]
    [stopped] = [e for e in events if e.invocation_id == one.invocation_id and e.error_code]
    assert stopped.error_message == one.error
    texts = [
        p.text
        for e in events
        if e.invocation_id == one.invocation_id and e.content is not None
        for p in e.content.parts or []
    ]
    assert "marked one done one" not in texts
    assert (await texting_rt.sessions.get(key)).state["marked:one"] is True
    assert calls(gates).count(("slow_step", "one")) == 1


async def test_rollback_leaves_the_session_as_if_the_first_had_not_run(
    texting_rt: Runtime, gates: Path
) -> None:
    """``rollback``: the first invocation is cancelled at once, the session is rewound to
    before it (its state write undone, its events hidden from the model), then the second
    message runs."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    async with asyncio.timeout(30):
        while (await texting_rt.sessions.get(key)).state.get("marked:one") is None:
            # The parallel mark call's result is stored with the cancellation, then rewound.
            if ("mark", "one") in calls(gates):
                break
            await asyncio.sleep(0.05)
    second = await texting_rt.adk.start(*key, "tasker", "task two", double_texting="rollback")
    open_gate(gates, "two")
    one = await first.result()
    assert one.status == "cancelled" and one.error is not None and "rolled back" in one.error
    two = await second.result()
    assert two.final_text == "marked two done two"
    session = await texting_rt.sessions.get(key)
    assert "marked:one" not in session.state and session.state["marked:two"] is True
    [rewind] = [e for e in session.events if e.actions.rewind_before_invocation_id]
    assert rewind.actions.rewind_before_invocation_id == one.invocation_id
    assert calls(gates).count(("slow_step", "one")) == 1  # cancelled, never re-run


async def test_a_queued_message_is_shown_and_can_be_withdrawn(
    texting_rt: Runtime, gates: Path
) -> None:
    """A queued message is listed with its position; withdrawn, it never runs and its caller
    is told; the messages behind it move up and run."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    second = await texting_rt.adk.start(*key, "tasker", "task two", double_texting="enqueue")
    third = await texting_rt.adk.start(*key, "tasker", "task three", double_texting="enqueue")
    assert [(q.invocation_id, q.position) for q in await first.queued()] == [
        (second.invocation_id, 1),
        (third.invocation_id, 2),
    ]
    withdrawn = await second.withdraw()
    assert withdrawn.invocation_id == second.invocation_id
    with pytest.raises(QueuedMessageNotFoundError):
        await second.withdraw()
    assert [q.position for q in await first.queued()] == [1]
    open_gate(gates, "one")
    open_gate(gates, "three")
    assert (await third.result()).final_text == "marked three done three"
    with pytest.raises(MessageWithdrawnError):
        await second.result()
    assert ("mark", "two") not in calls(gates)


async def test_a_malformed_message_signal_is_listed_as_refused(
    texting_rt: Runtime, gates: Path
) -> None:
    """A message sent by signal with a bad invocation id changes nothing and is listed in
    ``adk_status``'s refused answers (a signal has no caller to tell)."""
    key = _session()
    first = await _first_in_slow_step(texting_rt, gates, key)
    raw: WorkflowHandle[object, object] = texting_rt.client.get_workflow_handle(first.workflow_id)
    await raw.signal("adk_message", {"invocation_id": "../x", "agent_name": "tasker"})
    async with asyncio.timeout(30):
        while not (await first.status()).ignored_signals:
            await asyncio.sleep(0.1)
    [line] = (await first.status()).ignored_signals
    assert "'../x'" in line and "invocation_id" in line
    assert await first.queued() == []
    open_gate(gates, "one")
    assert (await first.result()).status == "completed"


async def test_a_worker_killed_with_a_message_queued_loses_nothing(
    dev_server: DevServer, temporal_client: Client, gates: Path, tmp_path: Path
) -> None:
    """SIGKILL the only worker while the first invocation is in its slow tool and a second
    message waits in the queue: on a new worker both invocations complete, in order."""
    deployment = Deployment(dev_server.address, f"texting-{uuid.uuid4().hex[:8]}", tmp_path / "d")
    adk = AdkClient(temporal_client, task_queue=deployment.task_queue)
    key = _session()
    app, env = "tests.texting_app:app", {DIR_ENV: str(gates)}
    with worker_process(deployment, app=app, env=env) as first_worker:
        first = await adk.start(*key, "tasker", "task one")
        await _in_slow_step(gates, "one")
        second = await adk.start(*key, "tasker", "task two", double_texting="enqueue")
        assert [q.invocation_id for q in await first.queued()] == [second.invocation_id]
        first_worker.send_signal(signal.SIGKILL)
        assert died_by_sigkill(first_worker)
    open_gate(gates, "one")
    open_gate(gates, "two")
    with worker_process(deployment, app=app, env=env):
        one = await asyncio.wait_for(first.result(), 120)
        two = await asyncio.wait_for(second.result(), 120)
    assert one.final_text == "marked one done one"
    assert two.final_text == "marked two done two"
    assert ("slow_step", "two") in calls(gates)


async def test_an_interrupt_reaching_a_parallel_branch_stops_the_whole_invocation(
    run_worker: WorkerFactory, gates: Path
) -> None:
    """Both branches of a parallel agent are in a slow tool: the first branch to reach a
    safe point after the interrupt stops the whole invocation, as a cancellation does — it
    ends cancelled (never completed as if the branches had ended), its branch's result is
    stored, a sibling still in its tool is cancelled with it (its result kept when it had
    finished: which comes first is a race) — and the new message runs."""
    branches = [
        Agent(name=name, model="scripted:texting", tools=[mark, slow_step])
        for name in ("left", "right")
    ]
    both = ParallelAgent(name="both", sub_agents=branches)
    async with run_worker([both], models=models()) as texting_rt:
        key = _session()
        first = await texting_rt.adk.start(*key, "both", "task one")
        async with asyncio.timeout(60):
            while calls(gates).count(("slow_step", "one")) < 2:
                await asyncio.sleep(0.05)
        second = await texting_rt.adk.start(*key, "both", "task two", double_texting="interrupt")
        open_gate(gates, "one")
        open_gate(gates, "two")
        one = await first.result()
        assert one.status == "cancelled" and one.error is not None
        assert "interrupted" in one.error
        assert (await second.result()).status == "completed"
        events = await _events(texting_rt, key)
        kept = _responses(events, one.invocation_id)
        assert kept.count({"done": "one"}) in (1, 2)


async def test_with_no_worker_a_second_message_is_refused_at_once(temporal_client: Client) -> None:
    """No worker polls the session's task queue: nothing could take the message, so every
    policy refuses it as busy at once (an update would wait for a worker for ever)."""
    adk = AdkClient(temporal_client, task_queue=f"nobody-{uuid.uuid4().hex[:8]}")
    key = _session()
    first = await adk.start(*key, "tasker", "task one")
    try:
        with pytest.raises(SessionBusyError, match="no worker polls task queue"):
            await adk.start(*key, "tasker", "task two", double_texting="enqueue")
    finally:
        await adk.client.get_workflow_handle(first.workflow_id).terminate()
