"""The ``schedule`` commands, ``list --schedule``, ``pending`` naming a schedule, and
``run --double-texting`` / ``show`` / ``withdraw`` against the dev server."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from ..commands import run_cli
from ..texting_app import calls, open_gate
from .conftest import Runtime

pytestmark = pytest.mark.integration

USER = "u-cli-sched"


async def _cli(texting_rt: Runtime, *args: str) -> Any:
    """Run a command on the worker's queue; its JSON output (``--json`` is added)."""
    done = await run_cli(
        _address(texting_rt), *args, "--task-queue", texting_rt.task_queue, "--json"
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _address(texting_rt: Runtime) -> str:
    return texting_rt.client.service_client.config.target_host


async def test_schedule_commands_create_trigger_and_pending_names_the_schedule(
    texting_rt: Runtime,
) -> None:
    """`schedule create` (paused) then `trigger`: the firing's run waits for approval,
    `list --schedule` lists it and `pending` names its schedule; `pause`, `unpause` and
    `delete` act on it; bad input is one line naming the problem."""
    sid = f"cli-{uuid.uuid4().hex[:8]}"
    created = await _cli(
        texting_rt,
        "schedule", "create", sid, "Buy a weather report for Oslo",
        "--app", "weather", "--user", USER, "--agent", "weather_agent",
        "--cron", "0 6 * * 1-5", "--paused", "--note", "by hand",
    )  # fmt: skip
    assert created["paused"] and created["schedule"]["cron"] == ["0 6 * * 1-5"]
    assert created["note"] == "by hand"
    done = await run_cli(
        _address(texting_rt), "schedule", "trigger", sid, "--task-queue", texting_rt.task_queue
    )
    assert done.returncode == 0 and f"triggered {sid}" in done.stdout, done.stderr
    async with asyncio.timeout(60):
        while not (runs := await _cli(texting_rt, "list", "--schedule", sid)):
            await asyncio.sleep(0.25)
    [run] = runs
    async with asyncio.timeout(60):
        while not (
            rows := [r for r in await _cli(texting_rt, "pending") if r.get("schedule_id") == sid]
        ):
            await asyncio.sleep(0.25)
    [row] = rows
    assert row["workflow_id"] == run["workflow_id"] and row["kind"] == "confirmation"
    for verb in ("pause", "unpause"):
        done = await run_cli(
            _address(texting_rt), "schedule", verb, sid, "--task-queue", texting_rt.task_queue
        )
        assert done.returncode == 0, done.stderr
    assert not (await _cli(texting_rt, "schedule", "describe", sid))["paused"]
    assert sid in [v["schedule"]["schedule_id"] for v in await _cli(texting_rt, "schedule", "list")]
    done = await run_cli(
        _address(texting_rt), "schedule", "delete", sid, "--task-queue", texting_rt.task_queue
    )
    assert done.returncode == 0, done.stderr
    missing = await run_cli(_address(texting_rt), "schedule", "describe", sid)
    assert missing.returncode == 1 and "ScheduleNotFoundError" in missing.stderr
    bad = await run_cli(
        _address(texting_rt), "schedule", "create", "x", "hi", "--app", "weather", "--user", USER,
        "--agent", "weather_agent",
    )  # fmt: skip
    assert bad.returncode == 1 and "give a cron expression or an interval" in bad.stderr


async def test_run_queues_a_second_message_show_lists_it_and_withdraw_takes_it_back(
    texting_rt: Runtime, gates: Path
) -> None:
    """`run --double-texting enqueue --no-wait` queues a message in a busy session; `show`
    lists it with its position; `withdraw` takes it back, and it never runs."""
    session = f"s-{uuid.uuid4().hex[:8]}"
    first = await texting_rt.adk.start("texting", USER, session, "tasker", "task one")
    while ("slow_step", "one") not in calls(gates):
        await asyncio.sleep(0.05)
    identity = ["--app", "texting", "--user", USER, "--session", session, "--agent", "tasker"]
    queued = await _cli(
        texting_rt, "run", *identity, "--double-texting", "enqueue", "--no-wait", "task two"
    )
    shown = await _cli(texting_rt, "show", first.workflow_id)
    [waiting] = shown["queued"]
    assert (waiting["invocation_id"], waiting["position"]) == (queued["invocation_id"], 1)
    withdrawn = await _cli(texting_rt, "withdraw", first.workflow_id, queued["invocation_id"])
    assert withdrawn["preview"] == "task two"
    again = await run_cli(
        _address(texting_rt), "withdraw", first.workflow_id, queued["invocation_id"]
    )
    assert again.returncode == 1 and "QueuedMessageNotFoundError" in again.stderr
    assert (await _cli(texting_rt, "show", first.workflow_id))["queued"] == []
    open_gate(gates, "one")
    assert (await first.result()).status == "completed"
    assert ("mark", "two") not in calls(gates)
