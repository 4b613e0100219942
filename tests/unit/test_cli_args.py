"""The CLI's argument handling and console views, without a server (click's CliRunner).

Only failures click reports before a command's body runs are exercised here: a body ends
the process with ``os._exit``, so bodies are tested in subprocesses (tests/integration).
"""

from __future__ import annotations

import json
import shlex
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner, Result
from google.genai import types

from adk_temporal.cli import main
from adk_temporal.events import Event, EventActions
from adk_temporal.flow.messages import (
    ConfirmInput,
    PendingConfirmation,
    PendingInput,
    PendingRequest,
    ResumeInput,
)
from adk_temporal.render import event_lines, workflows_url
from adk_temporal.workflows.details import answer_commands

TEMPORAL_COMMANDS = ["worker", "run", "pending", "confirm", "resume"]
JSON_COMMANDS = [["run"], ["pending"], ["events"], ["artifacts", "list"], ["artifacts", "versions"]]
WID = "adk/weather/u-1/s-1"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_top_level_help_lists_every_command() -> None:
    """`adk-temporal --help` names all commands of the issue."""
    result = _invoke("--help")
    assert result.exit_code == 0
    for name in [
        "demo",
        "dev",
        "server",
        "worker",
        "run",
        "pending",
        "confirm",
        "resume",
        "events",
        "artifacts",
    ]:
        assert f"  {name} " in result.output


@pytest.mark.parametrize("command", TEMPORAL_COMMANDS)
def test_temporal_commands_take_the_connection_options(command: str) -> None:
    """Every command that talks to Temporal has --address, --namespace and --task-queue."""
    result = _invoke(command, "--help")
    assert result.exit_code == 0
    for option in ("--address", "--namespace", "--task-queue"):
        assert option in result.output
    assert "localhost:7233" in result.output


@pytest.mark.parametrize("command", JSON_COMMANDS, ids=" ".join)
def test_data_commands_offer_json(command: list[str]) -> None:
    """Commands that print data accept --json."""
    result = _invoke(*command, "--help")
    assert result.exit_code == 0
    assert "--json" in result.output


@pytest.mark.parametrize(
    "command",
    [["demo"], ["dev"], ["server"], ["artifacts"], ["artifacts", "cat"]],
    ids=" ".join,
)
def test_other_commands_have_help(command: list[str]) -> None:
    """The remaining commands and the artifacts group document themselves."""
    result = _invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_confirm_needs_approve_or_reject() -> None:
    """confirm without --approve/--reject is a usage error naming both flags."""
    result = _invoke("confirm", WID, "adk-1")
    assert result.exit_code == 2
    assert "give --approve or --reject" in result.output


def test_confirm_refuses_malformed_payload_json() -> None:
    """A --payload that is not JSON is a usage error that quotes the value."""
    result = _invoke("confirm", WID, "adk-1", "--approve", "--payload", "{city: Hangzhou}")
    assert result.exit_code == 2
    assert "Invalid value for '--payload'" in result.output
    assert "is not valid JSON" in result.output
    assert "Traceback" not in result.output


def test_resume_requires_json_input() -> None:
    """resume needs --input, and it must be JSON."""
    missing = _invoke("resume", WID, "call-1/input-1")
    assert missing.exit_code == 2
    assert "Missing option '--input'" in missing.output
    bad = _invoke("resume", WID, "call-1/input-1", "--input", "2026-12-01")
    assert bad.exit_code == 2
    assert "is not valid JSON" in bad.output


def test_run_requires_the_session_identity_and_agent() -> None:
    """run names the first missing option among --app/--user/--session/--agent."""
    result = _invoke("run", "--app", "weather", "--user", "u", "--session", "s", "hello")
    assert result.exit_code == 2
    assert "Missing option '--agent'" in result.output
    no_app = _invoke("run", "--agent", "a", "--user", "u", "--session", "s", "hello")
    assert no_app.exit_code == 2
    assert "Missing option '--app'" in no_app.output


def test_worker_needs_exactly_one_source_of_agents() -> None:
    """worker refuses neither and both of --app/--examples, and a malformed --app."""
    neither = _invoke("worker")
    assert neither.exit_code == 2
    assert "no agents to serve" in neither.output
    both = _invoke("worker", "--examples", "--app", "x:y")
    assert both.exit_code == 2
    assert "not both" in both.output
    malformed = _invoke("worker", "--app", "no_colon")
    assert malformed.exit_code == 2
    assert "package.module:attribute" in malformed.output


def test_artifacts_cat_refuses_a_negative_version() -> None:
    """Versions are 0 (latest) or positive."""
    result = _invoke(
        "artifacts", "cat", "report.txt", "--app", "a", "--user", "u", "--session", "s",
        "--version", "-1",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--version" in result.output


def _request(kind: str) -> PendingRequest:
    if kind == "confirmation":
        return PendingConfirmation(
            kind="confirmation",
            id="adk-123",
            function_call_id="call-1",
            tool="buy_weather_report",
            args={"city": "Hangzhou"},
            hint="Buy it?",
        )
    return PendingInput(
        kind="input",
        id="call-1/input-1",
        function_call_id="call-1",
        tool="buy_weather_report",
        args={"city": "Hangzhou"},
    )


def _signal_input(command: str) -> dict[str, object]:
    words = shlex.split(command)
    assert words[:3] == ["temporal", "workflow", "signal"]
    return dict(json.loads(words[words.index("--input") + 1]))


def test_confirmation_commands_are_runnable_and_decode_as_the_signal_payload() -> None:
    """The printed commands name the workflow, id and address; the JSON is a ConfirmInput."""
    ours, signal = answer_commands(WID, _request("confirmation"), "127.0.0.1:7000", "prod")
    assert shlex.split(ours) == [
        "adk-temporal", "confirm", WID, "adk-123", "--approve",
        "--address", "127.0.0.1:7000", "--namespace", "prod",
    ]  # fmt: skip
    words = shlex.split(signal)
    assert words[words.index("--workflow-id") + 1] == WID
    assert words[words.index("--name") + 1] == "adk_confirm"
    assert ConfirmInput.model_validate(_signal_input(signal)) == ConfirmInput(
        confirmation_id="adk-123", confirmed=True
    )


def test_input_commands_use_resume_and_a_placeholder() -> None:
    """An input request is answered with `resume … --input` or the adk_resume signal; the
    placeholder stands where a JSON value goes, so a pasted object stays an object."""
    ours, signal = answer_commands(WID, _request("input"), "localhost:7233")
    assert ours.startswith(f"adk-temporal resume {WID} call-1/input-1 --input")
    assert "--namespace" not in ours
    pasted = signal.replace("<json>", '{"start": "2026-12-01"}')
    body = ResumeInput.model_validate(_signal_input(pasted))
    assert body.interrupt_id == "call-1/input-1"
    assert body.input == {"start": "2026-12-01"}


def test_workflows_url_encodes_the_visibility_query() -> None:
    """The UI link carries the query URL-encoded under the namespace's workflow list."""
    query = 'AdkStatus="awaiting_confirmation" AND ExecutionStatus="Running"'
    url = workflows_url("http://127.0.0.1:8233", query)
    parts = urlsplit(url)
    assert parts.path == "/namespaces/default/workflows"
    assert parse_qs(parts.query)["query"] == [query]
    assert " " not in url


def test_event_lines_show_calls_responses_and_deltas() -> None:
    """A response event prints the tool, its response and both deltas, one per line."""
    event = Event(
        author="weather_agent",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name="buy_weather_report", response={"status": "purchased"}
                    )
                )
            ],
        ),
        actions=EventActions(state_delta={"last_city": "Hangzhou"}, artifact_delta={"r.txt": 2}),
    )
    lines = [line.plain for line in event_lines(event)]
    assert lines[0].startswith("weather_agent")
    assert '← buy_weather_report {"status": "purchased"}' in lines[0]
    assert lines[1].strip() == 'state_delta {"last_city": "Hangzhou"}'
    assert lines[2].strip() == 'artifact_delta {"r.txt": 2}'
