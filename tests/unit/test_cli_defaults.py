"""Project defaults of the CLI: flag > environment > project file > built-in, for every
command that takes an app, user, session or agent (click's parser, no server)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from adk_temporal.cli import main
from adk_temporal.cli.defaults import FIELDS, ProjectConfigError, find_project

SESSION_COMMANDS = [
    ["run", "hello"],
    ["events"],
    ["artifacts", "list"],
    ["artifacts", "versions", "report.txt"],
    ["artifacts", "cat", "report.txt"],
    ["rewind", "--before", "e-1"],
    ["fork"],
    ["chat"],
]


@pytest.fixture(autouse=True)
def _no_ambient_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts in an empty directory with none of the ADK_* variables set."""
    for name in FIELDS.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _params(argv: list[str]) -> dict[str, object]:
    """The values the command would run with, parsed as the CLI parses them."""
    with click.Context(main) as parent:
        group: click.Group = main
        while True:
            command = group.get_command(parent, argv[0])
            assert command is not None, argv[0]
            if isinstance(command, click.Group):
                group, argv, parent = command, argv[1:], click.Context(command, parent=parent)
                continue
            return dict(command.make_context(argv[0], argv[1:], parent=parent).params)


@pytest.mark.parametrize("argv", SESSION_COMMANDS, ids=" ".join)
def test_every_session_command_takes_its_identity_from_the_project_file(
    argv: list[str], tmp_path: Path
) -> None:
    """A project file above the current directory gives app, user and session (and agent)."""
    (tmp_path / "adk-temporal.toml").write_text(
        'app = "weather"\nuser = "alice"\nsession = "s-1"\nagent = "weather_agent"\n'
    )
    below = tmp_path / "src" / "deep"
    below.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(below)
        params = _params(argv)
    assert (params["app_name"], params["user_id"], params["session_id"]) == (
        "weather",
        "alice",
        "s-1",
    )
    if "agent" in params:
        assert params["agent"] == "weather_agent"


def test_flag_beats_environment_beats_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented precedence: --flag, then ADK_*, then the project file."""
    (tmp_path / "adk-temporal.toml").write_text(
        'app = "file-app"\nuser = "file-user"\nsession = "file-session"\nagent = "file-agent"\n'
    )
    monkeypatch.setenv("ADK_USER", "env-user")
    monkeypatch.setenv("ADK_AGENT", "env-agent")
    params = _params(["run", "--agent", "flag-agent", "hello"])
    assert params["app_name"] == "file-app"
    assert params["user_id"] == "env-user"
    assert params["session_id"] == "file-session"
    assert params["agent"] == "flag-agent"


def test_pyproject_table_counts_and_adk_temporal_toml_wins_beside_it(tmp_path: Path) -> None:
    """[tool.adk-temporal] in pyproject.toml is a project file; adk-temporal.toml beside it
    wins, and a pyproject.toml without the table is passed over."""
    (tmp_path / "pyproject.toml").write_text('[tool.adk-temporal]\napp = "from-pyproject"\n')
    assert find_project(tmp_path).get("app") == "from-pyproject"
    (tmp_path / "adk-temporal.toml").write_text('app = "from-toml"\n')
    assert find_project(tmp_path).get("app") == "from-toml"
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    assert find_project(inner).path == tmp_path / "adk-temporal.toml"


def test_chat_starts_a_new_session_when_none_is_given(tmp_path: Path) -> None:
    """chat's built-in: a fresh session id, different each time; run has no such default."""
    (tmp_path / "adk-temporal.toml").write_text('app = "weather"\nuser = "alice"\nagent = "a"\n')
    first = _params(["chat"])["session_id"]
    second = _params(["chat"])["session_id"]
    assert isinstance(first, str) and first.startswith("s-")
    assert first != second


def test_a_missing_value_names_the_flag_the_variable_and_the_file() -> None:
    """Missing everywhere: a usage error saying every place it may be set."""
    result = CliRunner().invoke(main, ["run", "--app", "weather", "--user", "u", "hi"])
    assert result.exit_code == 2
    assert "Missing option '--session'" in result.output
    assert "set ADK_SESSION" in result.output
    assert 'session = "..."' in result.output
    assert "adk-temporal.toml" in result.output


def test_a_malformed_project_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    """An unknown key or a non-string value is refused with the file's path, not skipped."""
    config = tmp_path / "adk-temporal.toml"
    config.write_text('app = "weather"\nuesr = "typo"\n')
    with pytest.raises(ProjectConfigError, match="unknown key 'uesr'"):
        find_project(tmp_path)
    result = CliRunner().invoke(main, ["events", "--session", "s"])
    assert result.exit_code == 2
    assert str(config) in result.output
    assert "uesr" in result.output
    config.write_text("user = 7\n")
    with pytest.raises(ProjectConfigError, match="user must be a non-empty string"):
        find_project(tmp_path)
    config.write_text("app = [")
    with pytest.raises(ProjectConfigError, match="is not valid TOML"):
        find_project(tmp_path)
