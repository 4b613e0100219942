"""The `adk-temporal` command end to end: real subprocesses against the session's dev server.

A `worker --examples` subprocess serves the weather agent (offline scripted model) on a task
queue of its own; every other command runs as its own process, exactly as a user types it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from adk_temporal.devserver import DevServer, find_temporal_binary
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ports import free_port

from ..commands import ExamplesWorker, adk_command, offline_env, run_adk

pytestmark = pytest.mark.integration

EXIT_PAUSED = 3
EXIT_FAILED = 4
PAID = "Buy a weather report for Hangzhou"


class CliWorker(ExamplesWorker):
    """The examples worker, with the options of the commands run against it."""

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run one `adk-temporal` command to completion."""
        return run_adk(*args, timeout=timeout)

    def temporal(self, *args: str) -> list[str]:
        """``--address`` and ``--task-queue`` for commands that reach Temporal."""
        return [*args, "--address", self.address, "--task-queue", self.task_queue]

    def store(self, *args: str) -> list[str]:
        """``--data-dir`` and the session identity for commands that read the stores."""
        return [*args, "--data-dir", str(self.data_dir)]

    def start_paused(self, session_id: str) -> subprocess.CompletedProcess[str]:
        """`run` the paid-report message; it must pause with exit status 3."""
        result = self.run(
            *self.temporal("run"),
            *self.store(),
            *session_args(session_id),
            "--agent",
            "weather_agent",
            PAID,
        )
        assert result.returncode == EXIT_PAUSED, result.stdout + result.stderr
        return result


def session_args(session_id: str) -> list[str]:
    """The identity of a session of the weather app."""
    return ["--app", "weather", "--user", "cli-user", "--session", session_id]


def new_session() -> str:
    """A session id no other test uses."""
    return f"cli-{uuid.uuid4().hex[:8]}"


def workflow_id(session_id: str) -> str:
    """The workflow id of a session's invocations."""
    return f"adk/weather/cli-user/{session_id}"


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 1 with `error: …` plus at most a hint line on stderr, and no traceback."""
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: ")
    assert len(lines) <= 2
    assert all(line.startswith(("error: ", "hint: ")) for line in lines)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.fixture(scope="module")
def cli_worker(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CliWorker]:
    """`adk-temporal worker --examples` in a subprocess, ready to serve."""
    data_dir = tmp_path_factory.mktemp("cli-data")
    with CliWorker.start(dev_server.address, data_dir, "cli") as started:
        yield started


async def _finished(client: Client, session_id: str) -> InvocationResult:
    handle = client.get_workflow_handle(workflow_id(session_id), result_type=InvocationResult)
    # result_type converts the result; the handle's own type says Any.
    result: InvocationResult = await handle.result()
    return result


def _pending_json(cli_worker: CliWorker, *extra: str) -> list[dict[str, Any]]:
    result = cli_worker.run(*cli_worker.temporal("pending", "--json", *extra))
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout))


async def test_run_pauses_and_pending_lists_the_request(
    cli_worker: CliWorker, temporal_client: Client
) -> None:
    """`run` exits 3 printing the request and its commands; `pending --json` lists it."""
    session_id = new_session()
    wid = workflow_id(session_id)
    paused = cli_worker.start_paused(session_id)
    assert "waiting for approval of buy_weather_report(city='Hangzhou')" in paused.stdout
    assert "Buy the weather report for Hangzhou for $2.00?" in paused.stdout
    assert '"price_usd": 2.0' in paused.stdout
    assert f"adk-temporal confirm {wid} adk-" in paused.stdout
    assert f"--address {cli_worker.address}" in paused.stdout
    assert "--name adk_confirm --input" in paused.stdout

    # Visibility follows the AdkStatus upsert with a small lag: poll, bounded.
    deadline = time.monotonic() + 15
    listed: list[dict[str, Any]] = []
    while not any(r["workflow_id"] == wid for r in listed):
        assert time.monotonic() < deadline, f"{wid} never listed as waiting"
        listed = _pending_json(cli_worker)
    [request] = [r for r in listed if r["workflow_id"] == wid]
    assert request["kind"] == "confirmation"
    assert request["tool"] == "buy_weather_report"
    assert request["call"] == "buy_weather_report(city='Hangzhou')"
    # The memo carries the payload's size and digest and its first 2 KB, to approve seeing it.
    assert request["payload_size"] == len('{"city": "Hangzhou", "price_usd": 2.0}')
    assert json.loads(request["payload_preview"]) == {"city": "Hangzhou", "price_usd": 2.0}
    assert request["args"] == {"city": "Hangzhou"}
    assert request["commands"][0].startswith(f"adk-temporal confirm {wid} {request['id']}")
    assert _pending_json(cli_worker, "--workflow-id", wid) == [request]

    busy = cli_worker.run(
        *cli_worker.temporal("run"),
        *cli_worker.store(),
        *session_args(session_id),
        "--agent",
        "weather_agent",
        "What's the weather in Hangzhou?",
    )
    assert_one_line_error(busy, f"session weather/cli-user/{session_id} is busy")

    rejected = cli_worker.run(*cli_worker.temporal("confirm", wid, request["id"], "--reject"))
    assert rejected.returncode == 0, rejected.stderr
    assert (await _finished(temporal_client, session_id)).status == "completed"


async def test_confirm_wrong_id_fails_clearly_right_id_completes(
    cli_worker: CliWorker, temporal_client: Client
) -> None:
    """A wrong id is one line and exit 1; the right id completes; events and artifacts show it."""
    session_id = new_session()
    wid = workflow_id(session_id)
    cli_worker.start_paused(session_id)
    [request] = _pending_json(cli_worker, "--workflow-id", wid)

    wrong = cli_worker.run(*cli_worker.temporal("confirm", wid, "adk-wrong", "--approve"))
    assert_one_line_error(
        wrong, "has no open confirmation request 'adk-wrong'", request["id"], "[not_open]"
    )
    assert "adk-temporal pending --workflow-id" in wrong.stderr

    right = cli_worker.run(*cli_worker.temporal("confirm", wid, request["id"], "--approve"))
    assert right.returncode == 0, right.stderr
    assert f"approved {request['id']}" in right.stdout
    result = await _finished(temporal_client, session_id)
    assert result.status == "completed"

    listed = cli_worker.run(*cli_worker.store("events", "--json"), *session_args(session_id))
    assert listed.returncode == 0, listed.stderr
    events = json.loads(listed.stdout)
    [purchase] = [e["actions"] for e in events if e["actions"]["artifact_delta"]]
    assert purchase["artifact_delta"] == {"report.txt": 1, "user:purchases.json": 1}
    assert purchase["state_delta"] == {"last_report_city": "Hangzhou"}
    assert events[-1]["content"]["parts"][0]["text"] == result.final_text

    versions = cli_worker.run(
        *cli_worker.store("artifacts", "versions", "report.txt", "--json"),
        *session_args(session_id),
    )
    assert versions.returncode == 0, versions.stderr
    assert [v["version"] for v in json.loads(versions.stdout)] == [1]
    table = cli_worker.run(
        *cli_worker.store("artifacts", "versions", "report.txt"), *session_args(session_id)
    )
    assert "report.txt: versions 1" in table.stdout
    content = cli_worker.run(
        *cli_worker.store("artifacts", "cat", "report.txt"), *session_args(session_id)
    )
    assert content.stdout.startswith("Weather report for Hangzhou\n")


async def test_printed_temporal_signal_command_approves(
    cli_worker: CliWorker, temporal_client: Client
) -> None:
    """The `temporal workflow signal --name adk_confirm` line `run` prints works as is."""
    session_id = new_session()
    paused = cli_worker.start_paused(session_id)
    [line] = [s for s in paused.stdout.splitlines() if "temporal workflow signal" in s]
    words = shlex.split(line.split("or", 1)[1])
    assert words[0] == "temporal"
    signalled = subprocess.run(
        [find_temporal_binary(), *words[1:]], capture_output=True, text=True, timeout=30
    )
    assert signalled.returncode == 0, signalled.stderr
    result = await _finished(temporal_client, session_id)
    assert result.status == "completed"
    assert "report.txt (version 1)" in result.final_text


def test_run_streams_a_completed_invocation_and_exits_0(cli_worker: CliWorker) -> None:
    """A forecast streams its events (state_delta included) and exits 0."""
    result = cli_worker.run(
        *cli_worker.temporal("run"),
        *cli_worker.store(),
        *session_args(new_session()),
        "--agent",
        "weather_agent",
        "What's the weather in Hangzhou?",
    )
    assert result.returncode == 0, result.stderr
    assert "→ get_weather(city='Hangzhou')" in result.stdout
    assert 'state_delta {"last_city": "Hangzhou"}' in result.stdout
    assert "completed after 2 step(s)" in result.stdout


def test_run_of_an_unknown_agent_exits_4(cli_worker: CliWorker) -> None:
    """A failed invocation is exit status 4 with the reason on stderr."""
    result = cli_worker.run(
        *cli_worker.temporal("run", "--json"),
        *cli_worker.store(),
        *session_args(new_session()),
        "--agent",
        "no_such_agent",
        "hello",
    )
    assert result.returncode == EXIT_FAILED, result.stdout + result.stderr
    body = json.loads(result.stdout)
    assert body["status"] == "failed"
    assert "no_such_agent" in body["error"]


def test_run_no_wait_prints_the_workflow_id(cli_worker: CliWorker) -> None:
    """`run --no-wait` prints the workflow id and exits 0 at once."""
    session_id = new_session()
    result = cli_worker.run(
        *cli_worker.temporal("run", "--no-wait"),
        *session_args(session_id),
        "--agent",
        "weather_agent",
        "What's the weather in Oslo?",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == workflow_id(session_id)


def test_unknown_workflow_and_missing_store_are_one_line_errors(cli_worker: CliWorker) -> None:
    """Confirming a workflow that does not exist, or reading a missing store, is one line."""
    missing = cli_worker.run(
        *cli_worker.temporal("confirm", "adk/weather/nobody/none", "adk-1", "--approve")
    )
    assert_one_line_error(missing, "no invocation 'adk/weather/nobody/none'")
    no_store = cli_worker.run(
        "events", "--data-dir", str(cli_worker.data_dir / "absent"), *session_args("s")
    )
    assert_one_line_error(no_store, "no session store at")


def test_unreachable_server_is_a_one_line_error(tmp_path: Path) -> None:
    """`pending` against a closed port fails fast with one line and a hint."""
    address = f"127.0.0.1:{free_port()}"
    result = subprocess.run(
        [*adk_command(), "pending", "--address", address],
        capture_output=True,
        text=True,
        timeout=30,
        env=offline_env(),
    )
    assert_one_line_error(result, f"cannot reach Temporal at {address}", "hint: ")
