"""Hostile inputs against the real dev server and real worker processes (SPEC §3, edges).

Each case once wedged an invocation or re-ran side effects without end. Now each ends
finished or waiting for a valid answer; every side effect is counted (once per call, or
exactly the retry policy's attempts for a failing tool); every event is stored once;
artifact versions stay contiguous; and every refused answer is listed by id, size and
reason — never its payload.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from adk_temporal.artifacts import FileArtifactService, VersionsRequest
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer, find_temporal_binary
from adk_temporal.errors import InvalidAnswerError, InvalidIdError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.ports import free_port
from adk_temporal.sessions import SqliteSessionService

from ..commands import adk_command, offline_env
from ..hostile_app import BIG, GEMINI_ENV, LEDGER_ENV, RELEASE_ENV, effects
from .workers import Deployment, died_by_sigkill, worker_process

pytestmark = pytest.mark.integration

APP = "hostile"
USER = "u-1"
HOSTILE_APP = "tests.hostile_app:app"


class Stage:
    """One task queue and data directory, the ledger, and a client for them."""

    def __init__(self, dev_server: DevServer, root: Path) -> None:
        self.deployment = Deployment(dev_server.address, f"hostile-{uuid.uuid4().hex[:8]}", root)
        self.ledger = root / "ledger.txt"
        self.release = root / "release"
        self.env = {
            LEDGER_ENV: str(self.ledger),
            GEMINI_ENV: f"http://127.0.0.1:{free_port()}",
            RELEASE_ENV: str(self.release),
        }

    def worker(self, fault: str | None = None) -> Any:
        """A worker process serving the hostile app."""
        return worker_process(self.deployment, fault, app=HOSTILE_APP, env=self.env)

    def client(self, temporal_client: Client) -> AdkClient:
        """A client on this stage's task queue."""
        return AdkClient(temporal_client, task_queue=self.deployment.task_queue)

    async def events(self, session_id: str) -> list[Event]:
        """The session's stored events, read from the workers' store."""
        sessions = SqliteSessionService(self.deployment.data_dir / "sessions.db")
        try:
            found = await sessions.get(SessionKey(APP, USER, session_id))
        finally:
            await sessions.close()
        return found.events


@pytest.fixture(scope="module")
def stage(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    """A stage with one worker process running for the module's cases."""
    stage = Stage(dev_server, tmp_path_factory.mktemp("hostile"))
    with stage.worker():
        yield stage


def _session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.function_responses() if r.name == name
    ]


def _mine(stage: Stage, prefix: str, before: int) -> list[str]:
    return [e for e in effects(stage.ledger)[before:] if e.startswith(prefix)]


async def _largest_payload(client: Client, handle: InvocationHandle) -> int:
    """The largest payload in any run of the invocation's history, in bytes."""
    largest = 0
    runs = [w.run_id async for w in client.list_workflows(f"WorkflowId = '{handle.workflow_id}'")]
    for run_id in runs:
        history = await client.get_workflow_handle(
            handle.workflow_id, run_id=run_id
        ).fetch_history()
        for event in history.events:
            attrs = event.WhichOneof("attributes")
            inner = getattr(event, attrs) if attrs else None
            for field in ("input", "result"):
                if inner is not None and hasattr(inner, field) and inner.HasField(field):
                    for payload in getattr(inner, field).payloads:
                        largest = max(largest, len(payload.data))
    return largest


def _assert_stored_once(events: list[Event]) -> None:
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids)), "an event was stored twice"


async def test_1_parallel_results_that_overflow_together_travel_by_reference(
    stage: Stage, temporal_client: Client
) -> None:
    """Two parallel 1.2 MB results: both tools run once, both responses are stored, and no
    payload in history comes near the 2 MB limit."""
    session_id = _session()
    before = len(effects(stage.ledger))
    handle = await stage.client(temporal_client).start(APP, USER, session_id, "big_pair", "go")
    result = await handle.result()
    events = await stage.events(session_id)
    assert result.status == "completed"
    assert sorted(_mine(stage, "big:", before)) == ["big:1", "big:2"]
    bodies = _responses(events, "big_result")
    assert [len(b["body"]) for b in bodies] == [BIG, BIG]
    _assert_stored_once(events)
    assert await _largest_payload(temporal_client, handle) < 20_000


async def test_1_approvals_whose_payloads_overflow_are_refused_and_listed(
    stage: Stage, temporal_client: Client
) -> None:
    """1.2 MB approval payloads: the checked update is refused, the signal is listed by id
    and size; valid approvals then pay each amount once."""
    session_id = _session()
    before = len(effects(stage.ledger))
    handle = await stage.client(temporal_client).start(APP, USER, session_id, "pay_pair", "go")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    first, second = await handle.pending()
    secret = "s3cr3t-" + "p" * BIG
    with pytest.raises(InvalidAnswerError, match="over the answer_bytes budget"):
        await handle.confirm(first.id, True, payload=secret)
    # What a client other than ours may send: Temporal takes the signal, the run refuses it.
    raw = {"confirmation_id": second.id, "confirmed": True, "payload": secret}
    await temporal_client.get_workflow_handle(handle.workflow_id).signal("adk_confirm", raw)
    status = await _status_listing(handle, second.id)
    [line] = [s for s in status.ignored_signals if second.id in s]
    assert "over the answer_bytes budget" in line and "bytes" in line
    assert "s3cr3t" not in json.dumps(status.model_dump())
    assert [p.id for p in await handle.pending()] == [first.id, second.id]
    await handle.confirm(first.id, True)
    await handle.confirm(second.id, True)
    result = await handle.result()
    assert result.status == "completed"
    assert sorted(_mine(stage, "pay:", before)) == ["pay:1", "pay:2"]
    _assert_stored_once(await stage.events(session_id))


async def _status_listing(handle: InvocationHandle, request_id: str) -> Any:
    """Poll adk_status until it lists a refusal for ``request_id`` (signals are async)."""
    async with asyncio.timeout(30):
        while True:
            status = await handle.status()
            if any(request_id in line for line in status.ignored_signals):
                return status
            await asyncio.sleep(0.1)


@pytest.mark.parametrize(
    ("agent", "check"),
    [
        ("bad_state", lambda r: "cannot be encoded as JSON" in r["error"]),
        ("huge", lambda r: len(r["body"]) == 3_000_000),
    ],
    ids=["unencodable-state", "3-MB-string"],
)
async def test_2_a_result_that_cannot_cross_history_never_reruns_the_tool(
    stage: Stage, temporal_client: Client, agent: str, check: Any
) -> None:
    """object() in state becomes an error for the model; a 3 MB response is stored whole;
    either way the tool ran once and the invocation completed."""
    session_id = _session()
    before = len(effects(stage.ledger))
    handle = await stage.client(temporal_client).start(APP, USER, session_id, agent, "go")
    result = await handle.result()
    events = await stage.events(session_id)
    assert result.status == "completed"
    assert _mine(stage, agent, before) == [agent]
    [response] = _responses(events, agent)
    assert check(response)
    _assert_stored_once(events)


async def test_3_junk_answers_are_bounded_and_never_carried_whole(
    stage: Stage, temporal_client: Client
) -> None:
    """Junk signals of 1.5 MB and 1 MB for unknown ids are refused by size; continue-as-new
    carries only their records; the payments run once each."""
    session_id = _session()
    before = len(effects(stage.ledger))
    adk = stage.client(temporal_client)
    handle = await adk.start(
        APP, USER, session_id, "pay_pair", "go", continue_as_new_after_events=10
    )
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    for junk_id, size in (("junk-1", 1_500_000), ("junk-2", 1_000_000)):
        junk = {"confirmation_id": junk_id, "confirmed": True, "payload": "j" * size}
        await temporal_client.get_workflow_handle(handle.workflow_id).signal("adk_confirm", junk)
    await _status_listing(handle, "junk-2")
    for request in await handle.pending():
        await handle.confirm(request.id, True)
    result = await handle.result()
    assert result.status == "completed"
    assert sorted(_mine(stage, "pay:", before)) == ["pay:1", "pay:2"]
    runs = [w async for w in temporal_client.list_workflows(f"WorkflowId = '{handle.workflow_id}'")]
    assert len(runs) >= 2, "the invocation should have continued as new"
    largest = 0
    for run in runs:
        history = await temporal_client.get_workflow_handle(
            handle.workflow_id, run_id=run.run_id
        ).fetch_history()
        started = history.events[0].workflow_execution_started_event_attributes
        largest = max(largest, *(len(p.data) for p in started.input.payloads))
    assert largest < 20_000, "a run's start input carried answer payloads"
    final = await adk.handle(handle.workflow_id).status()
    junk_lines = [line for line in final.ignored_signals if "junk" in line]
    assert len(junk_lines) == 2
    assert all("over the answer_bytes budget" in line for line in junk_lines)


MALFORMED = [
    {},
    {"confirmation_id": "adk-x"},
    {"confirmation_id": "adk-x", "confirmed": "yes"},
    "approve",
]


async def test_4_malformed_answers_are_listed_and_the_request_stays_open(
    stage: Stage, temporal_client: Client, dev_server: DevServer
) -> None:
    """``temporal workflow signal`` with a malformed body: listed with its reason, nothing
    changes; a 2.5 MB checked update is refused with a clear error."""
    session_id = _session()
    handle = await stage.client(temporal_client).start(APP, USER, session_id, "pay_pair", "go")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    temporal = find_temporal_binary()
    for body in MALFORMED:
        sent = subprocess.run(
            [
                str(temporal),
                "workflow",
                "signal",
                "--address",
                dev_server.address,
                "--workflow-id",
                handle.workflow_id,
                "--name",
                "adk_confirm",
                "--input",
                json.dumps(body),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert sent.returncode == 0, sent.stderr
    async with asyncio.timeout(30):
        while len([s for s in (await handle.status()).ignored_signals if "malformed" in s]) < 4:
            await asyncio.sleep(0.1)
    lines = [s for s in (await handle.status()).ignored_signals if "malformed" in s]
    assert any("confirmed: Field required" in s for s in lines)
    assert any("confirmed: Input should be a valid boolean" in s for s in lines)
    assert any(s.startswith("? (confirmation") for s in lines)
    listed = subprocess.run(
        [
            *adk_command(),
            "pending",
            "--workflow-id",
            handle.workflow_id,
            "--address",
            dev_server.address,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("refused answer") == 4
    assert "confirmed: Field required" in listed.stdout
    first, second = await handle.pending()
    with pytest.raises(InvalidAnswerError, match="over the answer_bytes budget"):
        await handle.confirm(first.id, True, payload="z" * 2_500_000)
    # Past our client, the workflow's validator refuses what is over the budget.
    raw = {"confirmation_id": first.id, "confirmed": True, "payload": "z" * 100_000}
    with pytest.raises(WorkflowUpdateFailedError) as refusal:
        await temporal_client.get_workflow_handle(handle.workflow_id).execute_update(
            "adk_confirm_checked", raw
        )
    cause = refusal.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidAnswerError"
    assert "over the answer_bytes budget of 65536" in cause.message
    await handle.confirm(first.id, False)
    await handle.confirm(second.id, False)
    assert (await handle.result()).status == "completed"


async def test_5_a_failing_tool_runs_its_attempts_then_the_model_sees_the_error(
    stage: Stage, temporal_client: Client
) -> None:
    """ConnectionError: exactly the policy's 5 attempts, with back-off, then {"error": ...};
    a ToolError: one attempt."""
    for agent, attempts, error in (
        ("flaky", 5, "ledger service unreachable"),
        ("refuses", 1, "card declined"),
    ):
        session_id = _session()
        before = len(effects(stage.ledger))
        handle = await stage.client(temporal_client).start(APP, USER, session_id, agent, "go")
        result = await handle.result()
        assert result.status == "completed"
        assert _mine(stage, agent, before) == [agent] * attempts
        assert _responses(await stage.events(session_id), agent) == [{"error": error}]


async def test_6_a_save_killed_mid_write_leaves_no_version_gap(
    dev_server: DevServer, temporal_client: Client, tmp_path: Path
) -> None:
    """SIGKILL while a 30 MB save holds its claim: the retry commits v1, not v2, and no
    orphaned data or claim stays on disk."""
    stage = Stage(dev_server, tmp_path)
    session_id = _session()
    with stage.worker("artifact.before_commit") as first:
        handle = await stage.client(temporal_client).start(
            APP, USER, session_id, "save_large", "go", tool_timeout_seconds=6
        )
        assert died_by_sigkill(first, timeout=60)
    with stage.worker():
        result = await handle.result()
    assert result.status == "completed"
    assert effects(stage.ledger) == ["save_large", "save_large"]
    artifacts = FileArtifactService(stage.deployment.data_dir / "artifacts")
    ident = {"app_name": APP, "user_id": USER, "session_id": session_id}
    found = await artifacts.versions(VersionsRequest(**ident, file_name="large.bin"))
    assert found.versions == [1]
    [response] = _responses(await stage.events(session_id), "save_large")
    assert response == {"version": 1}
    directory = stage.deployment.data_dir / "artifacts" / APP / USER / session_id / "large.bin"
    names = {p.name for p in directory.iterdir()}
    [data] = names - {"1.json"}
    assert "1.json" in names and data.startswith("1.") and data.endswith(".data")


async def test_7_ids_that_would_alias_are_refused_before_anything_starts(
    stage: Stage, temporal_client: Client
) -> None:
    """x/y + s and x + y/s once shared adk/pa/x/y/s: both are refused by the client and the
    CLI, and no workflow starts."""
    adk = stage.client(temporal_client)
    for user, session in (("x/y", "s"), ("x", "y/s")):
        with pytest.raises(InvalidIdError, match="cannot contain path separators"):
            await adk.start("pa", user, session, "pay_pair", "go")
    started = [w async for w in temporal_client.list_workflows("WorkflowId = 'adk/pa/x/y/s'")]
    assert started == []
    ids = ["--app", "pa", "--user", "x/y", "--session", "s", "--agent", "a"]
    cli = subprocess.run(
        [*adk_command(), "run", "--no-wait", *ids, "--address", stage.deployment.address, "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )
    assert cli.returncode == 1, cli.stdout + cli.stderr
    assert "user_id cannot contain path separators" in cli.stderr
    assert "Traceback" not in cli.stderr


async def test_8_an_unreachable_model_is_named_in_the_failure_temporal_shows(
    stage: Stage, temporal_client: Client
) -> None:
    """Gemini unreachable: the activity's last failure in describe is the transport error,
    not "Failure exceeds size limit"."""
    handle = await stage.client(temporal_client).start(
        APP, USER, _session(), "gemini_agent", "hello"
    )
    try:
        async with asyncio.timeout(60):
            while True:
                description = await handle.describe()
                pending = description.raw_description.pending_activities
                if pending and pending[0].attempt >= 2 and pending[0].HasField("last_failure"):
                    failure = pending[0].last_failure
                    break
                await asyncio.sleep(0.2)
        assert "exceeds size limit" not in failure.message
        assert "transport error" in failure.message
        assert failure.application_failure_info.type == "ModelUnavailableError"
    finally:
        await temporal_client.get_workflow_handle(handle.workflow_id).terminate("test over")


async def test_9_infinite_and_nan_answers_are_refused_not_applied_as_null(
    stage: Stage, temporal_client: Client
) -> None:
    """An approval payload of 1e999 or NaN is refused by the client before it is sent
    (JSON would carry it as null); the request stays open and a valid answer completes."""
    session_id = _session()
    handle = await stage.client(temporal_client).start(APP, USER, session_id, "pay_pair", "go")
    await handle.wait_for_status("awaiting_confirmation", timeout=30)
    first, second = await handle.pending()
    for value in (json.loads("1e999"), float("nan")):
        for checked in (True, False):
            with pytest.raises(InvalidAnswerError, match="NaN or infinite"):
                await handle.confirm(first.id, True, payload={"amount": value}, checked=checked)
    assert [p.id for p in await handle.pending()] == [first.id, second.id]
    assert (await handle.status()).ignored_signals == []
    await handle.confirm(first.id, False)
    await handle.confirm(second.id, False)
    assert (await handle.result()).status == "completed"


@pytest.mark.parametrize("agent", ["wordy", "wordy_call"])
async def test_10_a_model_reply_over_its_budget_fails_at_once_and_is_not_stored(
    stage: Stage, temporal_client: Client, agent: str
) -> None:
    """A 2.5 MB reply (text, or a call's arguments): the step fails on its first attempt,
    non-retryable, naming model_reply_bytes; the session keeps no such event and takes the
    next message."""
    session_id = _session()
    client = stage.client(temporal_client)
    handle = await client.start(APP, USER, session_id, agent, "go")
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    assert "model_reply_bytes budget" in str(failed.value.cause)
    history = await temporal_client.get_workflow_handle(handle.workflow_id).fetch_history()
    attempts = [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.HasField("activity_task_started_event_attributes")
    ]
    assert attempts == [1, 1]  # the model step, then the append of the error event
    assert await _largest_payload(temporal_client, handle) < 20_000
    events = await stage.events(session_id)
    assert max(len(e.model_dump_json()) for e in events) < 20_000
    assert [e.error_code for e in events if e.error_code] == ["BudgetExceededError"]
    after = await client.start(APP, USER, session_id, "refuses", "again")
    assert (await after.result()).status == "completed"


def _story(events: list[Event], tool: str) -> list[str]:
    """Each call of ``tool``, each of its responses and the cancellation, in session order."""
    story: list[str] = []
    for event in events:
        story += [f"call {c.name}" for c in event.function_calls() if c.name == tool]
        story += [f"response {r.response}" for r in event.function_responses() if r.name == tool]
        if event.error_code:
            story.append(event.error_code)
    return story


def _staged_rows(stage: Stage) -> int:
    with sqlite3.connect(stage.deployment.data_dir / "sessions.db") as db:
        (count,) = db.execute("SELECT COUNT(*) FROM staged_events").fetchone()
    return int(count)


async def test_11_a_cancel_after_the_side_effect_keeps_the_tools_outcome(
    stage: Stage, temporal_client: Client
) -> None:
    """Cancelled while the tool waits after charging: the run waits for the tool, stores
    its response before the cancellation event; one charge, no staged row left."""
    session_id = _session()
    stage.release.unlink(missing_ok=True)
    before = len(effects(stage.ledger))
    handle = await stage.client(temporal_client).start(APP, USER, session_id, "slow_charge", "go")
    async with asyncio.timeout(30):
        while not _mine(stage, "slow_charge", before):
            await asyncio.sleep(0.05)
    await handle.cancel()
    stage.release.touch()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert _mine(stage, "slow_charge", before) == ["slow_charge:5"]
    assert _story(await stage.events(session_id), "slow_charge") == [
        "call slow_charge",
        "response {'status': 'charged', 'amount': 5}",
        "Cancelled",
    ]
    assert _staged_rows(stage) == 0


async def test_11_a_cancel_together_with_an_approval_never_loses_a_payment(
    stage: Stage, temporal_client: Client
) -> None:
    """Approvals and a cancel sent at once, four times: every payment made has its response
    stored before the cancellation event, each at most once, no staged row left."""
    for _ in range(4):
        session_id = _session()
        before = len(effects(stage.ledger))
        handle = await stage.client(temporal_client).start(APP, USER, session_id, "pay_pair", "go")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        first, second = await handle.pending()
        await handle.confirm(first.id, True, checked=False)
        await handle.confirm(second.id, True, checked=False)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        paid = sorted(_mine(stage, "pay", before))
        story = _story(await stage.events(session_id), "pay")
        responses = [line for line in story if "'paid'" in line]
        assert len(paid) == len(set(paid)) == len(responses)
        assert story[-1] == "Cancelled"
        assert all(story.index(line) < len(story) - 1 for line in responses)
    assert _staged_rows(stage) == 0
