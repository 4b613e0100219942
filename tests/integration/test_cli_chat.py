"""`adk-temporal chat` and the CLI's formerly silent cases, end to end: real subprocesses
against a `worker --examples` subprocess on the session's dev server."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NoReturn

import pytest
from click.testing import CliRunner
from temporalio.client import Client

from adk_temporal.audit import AuditEntry, audit_entries
from adk_temporal.cli import main
from adk_temporal.devserver import DevServer
from adk_temporal.flow.messages import InvocationResult
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SqliteSessionService

from ..commands import ExamplesWorker, adk_command, offline_env, run_adk

pytestmark = pytest.mark.integration

PAID = "Buy a weather report for Hangzhou"
FORECAST = "What's the weather in Hangzhou?"


class Worker(ExamplesWorker):
    """The examples worker, with the options and directory of the commands run against it."""

    def args(self, *args: str, data_dir: Path | None = None) -> list[str]:
        """``args`` plus the connection, the store and the weather app's identity."""
        store = data_dir or self.data_dir
        return [
            *args,
            "--address",
            self.address,
            "--task-queue",
            self.task_queue,
            "--data-dir",
            str(store),
            "--app",
            "weather",
            "--user",
            "cli-user",
        ]

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 90
    ) -> subprocess.CompletedProcess[str]:
        """Run one `adk-temporal` command, from a directory with no project file."""
        return run_adk(*args, cwd=self.data_dir, stdin=stdin, timeout=timeout)


@pytest.fixture(scope="module")
def worker(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """One examples worker for the module's tests."""
    data_dir = tmp_path_factory.mktemp("chat-data")
    with Worker.start(dev_server.address, data_dir, "chat") as started:
        yield started


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    """Move a pipe's lines to ``lines`` until it closes: a full pipe would block the writer."""
    for line in stream:
        lines.put(line)


def _session() -> str:
    return f"chat-{uuid.uuid4().hex[:8]}"


async def _result(client: Client, session_id: str) -> InvocationResult:
    handle = client.get_workflow_handle(
        f"adk/weather/cli-user/{session_id}", result_type=InvocationResult
    )
    result: InvocationResult = await handle.result()
    return result


async def test_chat_against_a_worker_answers_the_approval_inline(
    worker: Worker, temporal_client: Client
) -> None:
    """Typed lines become invocations; the paid report's approval is asked and answered in
    the chat, which goes on to the reply and ends at `exit` (ADK-Python's
    cli.run_interactively: a prompt per message, 'exit' ends)."""
    session_id = _session()
    chatted = worker.run(
        *worker.args("chat", "--session", session_id, "--agent", "weather_agent"),
        stdin=f"{FORECAST}\n\n{PAID}\ny\nexit\n",
    )
    assert chatted.returncode == 0, chatted.stdout + chatted.stderr
    assert "overcast" in chatted.stdout
    assert "→ buy_weather_report(city='Hangzhou')" in chatted.stdout
    assert "adk_request_confirmation" not in chatted.stdout
    assert "approval needed for buy_weather_report(city='Hangzhou')" in chatted.stderr
    assert "report.txt (version 1)" in chatted.stdout
    assert "warning" not in chatted.stderr
    result = await _result(temporal_client, session_id)
    assert result.status == "completed"
    assert "report.txt (version 1)" in (result.final_text or "")


def test_chat_against_a_worker_asks_for_input_until_it_fits_the_schema(worker: Worker) -> None:
    """An input request is asked inline; a value the request's schema refuses (the checked
    update's refusal) is said and asked again; the fitting one resumes the run."""
    chatted = worker.run(
        *worker.args("chat", "--agent", "weather_agent"),
        stdin='Help me plan a trip\n{"start": "2026-12-24"}\n'
        '{"start": "2026-12-24", "end": "2026-12-31"}\n',
    )
    assert chatted.returncode == 0, chatted.stdout + chatted.stderr
    assert "input needed for ask_travel_dates: When do you travel?" in chatted.stderr
    assert "refused:" in chatted.stderr
    assert "'end' is a required property" in chatted.stderr
    assert '"status": "dates received"' in chatted.stdout


def test_chat_takes_its_identity_from_the_project_file(worker: Worker, tmp_path: Path) -> None:
    """With app, user and agent in adk-temporal.toml, `chat` needs no identity flag; the end
    of input ends it."""
    (tmp_path / "adk-temporal.toml").write_text(
        'app = "weather"\nuser = "cli-user"\nagent = "weather_agent"\n'
    )
    chatted = run_adk(
        "chat",
        "--address",
        worker.address,
        "--task-queue",
        worker.task_queue,
        "--data-dir",
        str(worker.data_dir),
        cwd=tmp_path,
        stdin=f"{FORECAST}\n",
    )
    assert chatted.returncode == 0, chatted.stdout + chatted.stderr
    assert "overcast" in chatted.stdout
    assert "chat with weather_agent of app weather as cli-user" in chatted.stderr


def _exit_by_raising(code: int) -> NoReturn:
    raise SystemExit(code)


def test_chat_in_process_through_click(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`chat --in-process`, driven through click's CliRunner: the approval is asked inline
    and the conversation goes on in the same session."""
    # The command ends its process with os._exit (see run_command); here it must return.
    monkeypatch.setattr(os, "_exit", _exit_by_raising)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "chat",
            "--in-process",
            "--data-dir",
            str(tmp_path / "data"),
            "--app",
            "weather",
            "--user",
            "u",
            "--session",
            "s-1",
            "--agent",
            "weather_agent",
        ],
        input=f"{FORECAST}\n{PAID}\nmaybe\ny\nexit\n",
    )
    assert result.exit_code == 0, result.output
    assert "overcast" in result.output
    assert "approve? (y, n): maybe" in result.output
    assert "report.txt (version 1)" in result.output
    assert result.output.rstrip().endswith("[user]: exit")
    # The person at the terminal answered: the audit names them, not "(not recorded)".
    [entry] = asyncio.run(_audit_of(tmp_path / "data" / "sessions.db", "weather", "u", "s-1"))
    assert (entry.decision, entry.answered_by, entry.channel) == (
        "approved",
        getpass.getuser(),
        "in-process",
    )


async def _audit_of(path: Path, app: str, user: str, session: str) -> list[AuditEntry]:
    async with SqliteSessionService(path) as sessions:
        stored = await sessions.get(SessionKey(app, user, session))
    return audit_entries(stored.events)


def test_run_with_another_data_dir_than_the_workers_warns(worker: Worker, tmp_path: Path) -> None:
    """A run whose worker stores sessions elsewhere completes, and says why no event shows
    and what to pass; with the worker's --data-dir there is no warning."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["--session", _session(), "--agent", "weather_agent", FORECAST]
    blind = worker.run(*worker.args("run", *args, data_dir=elsewhere))
    assert blind.returncode == 0, blind.stdout + blind.stderr
    assert "warning: the invocation ran, but its events are not in" in blind.stderr
    assert str(elsewhere) in blind.stderr
    assert "pass the worker's --data-dir" in blind.stderr
    seen = worker.run(
        *worker.args("run", "--session", _session(), "--agent", "weather_agent", FORECAST)
    )
    assert seen.returncode == 0, seen.stderr
    assert "overcast" in seen.stdout
    assert "warning" not in seen.stderr


def test_events_follow_waits_for_a_session_that_does_not_exist_yet(worker: Worker) -> None:
    """`events --follow` of a session never run says it waits, then prints its first run."""
    session_id = _session()
    follower = subprocess.Popen(
        [
            *adk_command(),
            "events",
            "--follow",
            "--session",
            session_id,
            "--data-dir",
            str(worker.data_dir),
            "--app",
            "weather",
            "--user",
            "cli-user",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=offline_env(),
        stdin=subprocess.DEVNULL,
        cwd=worker.data_dir,
    )
    lines: queue.Queue[str] = queue.Queue()
    for stream in (follower.stdout, follower.stderr):
        assert stream is not None
        threading.Thread(target=_pump, args=(stream, lines), daemon=True).start()
    seen: list[str] = []

    def wait_for(fragment: str) -> None:
        deadline = time.monotonic() + 60
        while not any(fragment in line for line in seen):
            assert follower.poll() is None, "events exited:\n" + "".join(seen)
            assert time.monotonic() < deadline, f"no {fragment!r}:\n" + "".join(seen)
            with contextlib.suppress(queue.Empty):
                seen.append(lines.get(timeout=0.5))

    try:
        wait_for("does not exist yet; waiting for it to appear")
        ran = worker.run(
            *worker.args("run", "--session", session_id, "--agent", "weather_agent", FORECAST)
        )
        assert ran.returncode == 0, ran.stderr
        wait_for("overcast")
    finally:
        follower.kill()
        follower.wait()


async def test_a_second_confirm_says_the_request_was_already_answered(worker: Worker) -> None:
    """Confirming an answered request names the earlier answer (approved, when, through
    what) instead of blaming the workflow id; nothing is sent."""
    session_id = _session()
    wid = f"adk/weather/cli-user/{session_id}"
    paused = worker.run(
        *worker.args("run", "--session", session_id, "--agent", "weather_agent", PAID)
    )
    assert paused.returncode == 3, paused.stdout + paused.stderr
    connection = ["--address", worker.address, "--task-queue", worker.task_queue]
    pending = worker.run("pending", "--json", "--workflow-id", wid, *connection)
    [request] = json.loads(pending.stdout)
    first = worker.run("confirm", wid, request["id"], "--approve", *connection)
    assert first.returncode == 0, first.stderr
    again = worker.run("confirm", wid, request["id"], "--reject", *connection)
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"request {request['id']!r} of {wid} was already answered: approved at" in again.stderr
    assert "(through cli)" in again.stderr and "[already_answered]" in again.stderr
    assert "this answer was not sent" in again.stderr
    assert "check the workflow id" not in again.stderr
    assert "Traceback" not in again.stderr


def test_show_says_an_answer_held_for_a_worker_is_answered_not_waiting(
    dev_server: DevServer, tmp_path: Path
) -> None:
    """After an approval sent while no worker runs, `show` says it is answered and waits for
    a worker to resume — not that it waits for approval (an operator would approve again)."""
    session_id = _session()
    wid = f"adk/weather/cli-user/{session_id}"
    with Worker.start(dev_server.address, tmp_path, "chat") as stopped:
        paused = stopped.run(
            *stopped.args("run", "--session", session_id, "--agent", "weather_agent", PAID)
        )
        assert paused.returncode == 3, paused.stdout + paused.stderr
    connection = ["--address", stopped.address, "--task-queue", stopped.task_queue]
    before = stopped.run("show", wid, *connection)
    assert "  waits    approval of buy_weather_report(city='Hangzhou')" in before.stdout
    sent = stopped.run(
        "confirm", wid, _request_id(before.stdout), "--approve", "--wait", "0", *connection
    )
    assert sent.returncode == 0, sent.stderr
    assert "accepted by Temporal" in sent.stdout
    after = stopped.run("show", wid, *connection)
    assert after.returncode == 0, after.stderr
    assert (
        "  answered approved approval of buy_weather_report(city='Hangzhou'): waiting for a "
        "worker to resume" in after.stdout
    )
    assert "waits    approval" not in after.stdout
    shown = json.loads(stopped.run("show", wid, "--json", *connection).stdout)
    assert [r["held_answer"] for r in shown["open_requests"]] == ["approved"]


def _request_id(shown: str) -> str:
    line = next(line for line in shown.splitlines() if "  waits  " in line)
    return line.rsplit("[", 1)[1].rstrip("]")


def test_an_unknown_agent_is_one_line_in_the_worker_log(worker: Worker) -> None:
    """An expected user error is logged by the worker as one line, without a traceback."""
    failed = worker.run(
        *worker.args("run", "--session", _session(), "--agent", "no_such_agent", FORECAST)
    )
    assert failed.returncode == 4, failed.stdout + failed.stderr
    log = worker.logged("UnknownAgentError")
    [line] = [line for line in log.splitlines() if "UnknownAgentError" in line]
    assert "refused: UnknownAgentError" in line
    assert "no_such_agent" in line
    assert "Traceback" not in log
