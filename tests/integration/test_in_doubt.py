"""In-doubt tool calls through real worker processes (issue 41, "In-doubt tool calls").

Worker A runs ``transfer`` (effects nothing can deduplicate, ``tests/effects_app.py``),
makes its effect and is SIGKILLed at ``tool.after_side_effect``. Worker B takes the step's
next attempt, finds the call's receipt open and parks the call in doubt instead of running
it again; ``pending`` lists it. Each of the four resolutions, given with ``adk-temporal
resolve``, then has exactly one effect (counted in the effects file) and one audit entry
naming its principal — also when the run had continued as new before the call.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.audit import audit_entries
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.flow.doubt_requests import DOUBT_REQUEST_PREFIX
from adk_temporal.flow.messages import PendingInput
from adk_temporal.ids import SessionKey
from adk_temporal.run_config import RunConfig
from adk_temporal.sessions import SqliteSessionService

from ..commands import run_cli
from ..effects_app import APP_NAME, EFFECTS_ENV, effects
from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

USER = "u-1"
APP = "tests.effects_app:app"


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory of the module's workers."""
    return Deployment(dev_server.address, "in-doubt", tmp_path_factory.mktemp("in-doubt"))


@pytest.fixture(scope="module")
def ledger(deployment: Deployment) -> Path:
    """The effects file the workers append to."""
    return deployment.data_dir / "effects.jsonl"


@pytest.fixture(scope="module")
def worker_b(deployment: Deployment, ledger: Path) -> Iterator[None]:
    """The unarmed worker that takes over from every dead worker A."""
    with worker_process(deployment, app=APP, env={EFFECTS_ENV: str(ledger)}):
        yield


async def _in_doubt(
    deployment: Deployment, ledger: Path, config: RunConfig
) -> tuple[InvocationHandle, PendingInput]:
    """A run whose transfer was made by a worker that then died: its call in doubt."""
    adk = await AdkClient.connect(deployment.address, task_queue=deployment.task_queue)
    armed = {EFFECTS_ENV: str(ledger)}
    with worker_process(deployment, "tool.after_side_effect", app=APP, env=armed) as doomed:
        handle = await adk.start(
            APP_NAME, USER, f"s-{uuid.uuid4().hex[:8]}", "payer", "pay", config=config
        )
        assert await asyncio.to_thread(died_by_sigkill, doomed, 90)
    status = await handle.wait_for_status("awaiting_input", timeout=90)
    [request] = await handle.pending()
    assert isinstance(request, PendingInput), status
    return handle, request


@pytest.mark.parametrize(
    ("flags", "transfers", "reverses"),
    [
        (["--done", '{"transferred": 5}'], 1, 0),
        (["--retry"], 2, 0),
        (["--fail", "the bank shows nothing"], 1, 0),
        (["--compensate"], 1, 1),
    ],
    ids=["done", "retry", "fail", "compensate"],
)
async def test_a_call_whose_worker_died_is_in_doubt_and_each_resolution_acts_once(
    deployment: Deployment,
    ledger: Path,
    worker_b: None,
    temporal_client: Client,
    flags: list[str],
    transfers: int,
    reverses: int,
) -> None:
    """The transfer ran once and its worker died: worker B lists the call in doubt and never
    runs it by itself; resolved by ops, the run completes with one more transfer only for
    retry and one reversal only for compensate, and the audit has one resolved entry."""
    # Continued as new after its first step: the call in doubt is in the second run.
    config = RunConfig(tool_timeout_seconds=4.0, continue_as_new_after_events=8)
    handle, request = await _in_doubt(deployment, ledger, config)
    call_key = f"{handle.workflow_id}/"
    assert request.id.startswith(DOUBT_REQUEST_PREFIX)
    assert (request.tool, request.args) == ("transfer", {"amount": 5})
    assert "provider_id" in request.message
    before = [e for e in effects(ledger) if e["key"].startswith(call_key)]
    assert [e["kind"] for e in before] == ["transfer"]
    resolved = await run_cli(
        deployment.address,
        "resolve",
        handle.workflow_id,
        request.id,
        *flags,
        "--as",
        "ops",
        "--task-queue",
        deployment.task_queue,
    )
    assert resolved.returncode == 0, resolved.stdout + resolved.stderr
    result = await handle.result()
    assert (result.status, result.final_text) == ("completed", "done")
    found = re.search(r"'provider_id': '([^']+)'", request.message)
    assert found, request.message
    made = effects(ledger)
    assert sum(1 for e in made if e["kind"] == "transfer" and e["key"].startswith(call_key)) == (
        transfers
    )
    assert sum(1 for e in made if e["kind"] == "reverse" and e["key"] == found[1]) == reverses
    query = f"WorkflowId = '{handle.workflow_id}'"
    runs = [wf.run_id async for wf in temporal_client.list_workflows(query)]
    assert len(runs) >= 2, "the run did not continue as new before the call"
    sessions = SqliteSessionService(deployment.data_dir / "sessions.db")
    try:
        key = SessionKey(APP_NAME, USER, handle.workflow_id.rsplit("/", 1)[-1])
        entries = audit_entries((await sessions.get(key)).events)
    finally:
        await sessions.close()
    [entry] = [e for e in entries if e.request_id == request.id]
    assert (entry.decision, entry.resolution, entry.answered_by, entry.tool) == (
        "resolved",
        flags[0].removeprefix("--"),
        "ops",
        "transfer",
    )
