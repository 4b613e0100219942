"""docker-compose.yml and the Dockerfile, checked by structure (no Docker engine here).

The worker's command is parsed by the CLI's own click parser with the service's
environment applied, so a renamed option or environment variable fails here, not in a
deployment.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from adk_temporal.cli import main
from adk_temporal.devserver import ADK_SEARCH_ATTRIBUTES

ROOT = Path(__file__).resolve().parents[2]
EXPECTED_SERVICES = {
    "postgresql",
    "temporal-schema",
    "temporal",
    "temporal-setup",
    "temporal-ui",
    "fake-gcs",
    "worker",
    "gateway",
}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The parsed docker-compose.yml."""
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


@pytest.fixture(scope="module")
def compose_text() -> str:
    """docker-compose.yml as written, comments included."""
    return (ROOT / "docker-compose.yml").read_text()


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The compose file's services by name."""
    return dict(compose["services"])


def _script(service: dict[str, Any]) -> str:
    command = service.get("command", [])
    return command if isinstance(command, str) else "\n".join(command)


def test_the_stack_has_temporal_postgres_ui_fake_gcs_workers_and_a_gateway(
    services: dict[str, dict[str, Any]],
) -> None:
    """Exactly the services of the production-like stack, on pinned images."""
    assert set(services) == EXPECTED_SERVICES
    images = {name: s.get("image", "") for name, s in services.items()}
    assert images["postgresql"].startswith("postgres:")
    assert images["temporal"].startswith("temporalio/server:")
    assert images["temporal-schema"].startswith("temporalio/admin-tools:")
    assert images["temporal-setup"] == images["temporal-schema"]
    assert images["temporal-ui"].startswith("temporalio/ui:")
    assert images["fake-gcs"].startswith("fsouza/fake-gcs-server:")
    assert images["gateway"] == images["worker"]
    for name, image in images.items():
        if name not in ("worker", "gateway"):
            tag = image.rpartition(":")[2]
            assert re.fullmatch(r"\d+(\.\d+)*", tag), f"{name} image {image!r} is not pinned"
    server_version = images["temporal"].rpartition(":")[2]
    assert images["temporal-schema"].endswith(f":{server_version}")


def test_published_ports(services: dict[str, dict[str, Any]]) -> None:
    """Temporal's frontend, the UI and the fake GCS are reachable from the host."""
    assert services["temporal"]["ports"] == ["7233:7233"]
    assert services["temporal-ui"]["ports"] == ["8080:8080"]
    assert services["fake-gcs"]["ports"] == ["4443:4443"]
    assert "ports" not in services["worker"]
    assert services["gateway"]["ports"] == ["8000:8000"]


def test_the_session_store_is_reachable_from_the_host_on_loopback_only(
    services: dict[str, dict[str, Any]], compose_text: str
) -> None:
    """PostgreSQL is published on 127.0.0.1, and the header's host DSN names that port and
    the database the workers use, so `run` and `events` on the host read their sessions."""
    assert services["postgresql"]["ports"] == ["127.0.0.1:5432:5432"]
    worker_dsn = services["worker"]["environment"]["ADK_POSTGRES_DSN"]
    host_dsn = worker_dsn.replace("@postgresql:", "@localhost:")
    assert f"export ADK_POSTGRES_DSN={host_dsn}" in compose_text
    bucket = services["worker"]["environment"]["ADK_GCS_BUCKET"]
    assert f"export ADK_GCS_BUCKET={bucket} STORAGE_EMULATOR_HOST=http://localhost:4443" in (
        compose_text
    )


def test_start_order_is_enforced_by_conditions(services: dict[str, dict[str, Any]]) -> None:
    """Schema after PostgreSQL is healthy, server after the schema, workers after setup."""
    depends = {name: s.get("depends_on", {}) for name, s in services.items()}
    assert depends["temporal-schema"] == {"postgresql": {"condition": "service_healthy"}}
    assert depends["temporal"] == {
        "temporal-schema": {"condition": "service_completed_successfully"}
    }
    assert depends["temporal-setup"] == {"temporal": {"condition": "service_healthy"}}
    assert depends["temporal-ui"] == {"temporal": {"condition": "service_healthy"}}
    assert depends["worker"] == {
        "temporal-setup": {"condition": "service_completed_successfully"},
        "fake-gcs": {"condition": "service_healthy"},
    }
    assert depends["gateway"] == {
        **depends["worker"],
        "worker": {"condition": "service_started"},
    }
    for name, needs in depends.items():
        for target, rule in needs.items():
            assert target in services, f"{name} depends on unknown service {target}"
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in services[target], f"{target} has no healthcheck"


def test_temporal_server_uses_postgres(services: dict[str, dict[str, Any]]) -> None:
    """The server and its schema job point at the postgresql service."""
    server_env = services["temporal"]["environment"]
    assert server_env["DB"] == "postgres12"
    assert server_env["POSTGRES_SEEDS"] == "postgresql"
    schema_env = services["temporal-schema"]["environment"]
    assert schema_env["SQL_HOST"] == "postgresql"
    assert schema_env["SQL_PLUGIN"] == "postgres12"
    script = _script(services["temporal-schema"])
    for db in ("temporal", "temporal_visibility"):
        assert f"--db {db} update-schema" in script


def test_setup_registers_every_adk_search_attribute(services: dict[str, dict[str, Any]]) -> None:
    """The setup job creates the same Keyword attributes the dev server registers."""
    script = _script(services["temporal-setup"])
    loop = re.search(r"for name in ([\w ]+); do", script)
    assert loop is not None
    assert set(loop.group(1).split()) == set(ADK_SEARCH_ATTRIBUTES)
    assert set(ADK_SEARCH_ATTRIBUTES.values()) == {"Keyword"}
    assert "--type Keyword" in script
    assert "namespace create -n default" in script


def test_shell_variables_are_escaped_from_compose_interpolation(
    services: dict[str, dict[str, Any]],
) -> None:
    """A bare `$name` in a script would be replaced by compose at parse time; use `$$`."""
    for name, service in services.items():
        bare = re.findall(r"(?<!\$)\$(?![${])\w+", _script(service))
        assert not bare, f"{name}: unescaped {bare}"


def test_fake_gcs_creates_the_workers_bucket(services: dict[str, dict[str, Any]]) -> None:
    """The bucket the worker writes to is created by fake-gcs-server at start."""
    bucket = services["worker"]["environment"]["ADK_GCS_BUCKET"]
    script = _script(services["fake-gcs"])
    assert f"mkdir -p /data/{bucket}" in script
    assert "-scheme http -port 4443" in script
    emulator = services["worker"]["environment"]["STORAGE_EMULATOR_HOST"]
    assert emulator == "http://fake-gcs:4443"


def test_volumes_are_declared(compose: dict[str, Any]) -> None:
    """Every named volume a service mounts is declared at the top level."""
    declared = set(compose["volumes"])
    for name, service in compose["services"].items():
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name} mounts undeclared volume {source}"
    assert "adk-data:/data" in compose["services"]["worker"]["volumes"]


def _parse_cli(
    argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> click.Context:
    """Parse ``argv`` (``adk-temporal …``) with the CLI's parser and ``env`` applied."""
    assert argv[0] == "adk-temporal"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with click.Context(main) as parent:
        command = main.get_command(parent, argv[1])
        assert command is not None, f"{argv[1]!r} is not an adk-temporal command"
        return command.make_context(argv[1], argv[2:], parent=parent)


def test_worker_runs_a_real_cli_command_with_its_environment(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`adk-temporal worker --examples`, configured through the CLI's environment variables."""
    worker = services["worker"]
    assert worker["build"] == {"context": ".", "dockerfile": "Dockerfile"}
    assert (ROOT / worker["build"]["context"] / worker["build"]["dockerfile"]).is_file()
    assert "container_name" not in worker  # `--scale worker=N` needs generated names
    env = {k: str(v) for k, v in worker["environment"].items() if "${" not in str(v)}
    ctx = _parse_cli(worker["command"], env, monkeypatch)
    assert ctx.command.name == "worker"
    assert ctx.params["examples"] is True
    assert ctx.params["address"] == "temporal:7233"
    assert ctx.params["namespace"] == "default"
    assert ctx.params["task_queue"] == "adk-temporal"
    assert ctx.params["gcs_bucket"] == "adk-artifacts"
    assert ctx.params["postgres_dsn"] == (
        "postgresql://temporal:temporal@postgresql:5432/adk_sessions"
    )
    assert ctx.params["data_dir"] == Path("/data")


def test_the_session_database_is_created_before_workers_start(
    services: dict[str, dict[str, Any]],
) -> None:
    """The schema job creates the database the workers' DSN names; workers wait for it."""
    dsn = services["worker"]["environment"]["ADK_POSTGRES_DSN"]
    database = dsn.rsplit("/", 1)[1]
    assert f" {database}; do" in _script(services["temporal-schema"])
    assert dsn.split("@")[1].split(":")[0] == "postgresql"


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.partition(" ") for line in lines)
        if word and not word.startswith("#")
    ]


def test_dockerfile_copies_every_package_folder_and_runs_the_cli(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The image installs the package from all its mapped folders; its CMD parses."""
    instructions = _dockerfile_instructions()
    assert instructions[0][0] == "FROM"
    assert instructions[0][1].startswith("python:3.11")
    copied = {shlex.split(rest)[0] for word, rest in instructions if word == "COPY"}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    assert folders <= copied
    assert "pyproject.toml" in copied
    [cmd] = [rest for word, rest in instructions if word == "CMD"]
    argv = yaml.safe_load(cmd)  # the JSON form of CMD is a YAML flow sequence
    ctx = _parse_cli(argv, {"ADK_DATA_DIR": "/data"}, monkeypatch)
    assert ctx.command.name == "worker"
    assert ctx.params["examples"] is True
    assert "ENV ADK_DATA_DIR=/data" in {f"{w} {r}" for w, r in instructions}


def test_dockerignore_keeps_tests_and_git_out_of_the_build_context() -> None:
    """Tests, VCS data and caches never reach the image's build context."""
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", "tests", ".venv", "**/__pycache__"} <= ignored


def test_gateway_serves_the_workers_stores_with_secrets_the_user_must_give(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`adk-temporal web` parses with the service's environment and reads the workers' task
    queue and stores; its tokens and link secret come from the user's environment."""
    gateway, worker = services["gateway"], services["worker"]
    env = {k: str(v) for k, v in gateway["environment"].items()}
    required = {k for k, v in env.items() if v == f"${{{k}:-}}"}
    assert required == {"ADK_WEB_TOKENS", "ADK_LINK_SECRET"}
    given = {k: v for k, v in env.items() if k not in required}
    ctx = _parse_cli(gateway["command"], given, monkeypatch)
    assert ctx.command.name == "web"
    assert ctx.params["examples"] is True
    assert ctx.params["with_console"] is True
    assert (ctx.params["host"], ctx.params["port"]) == ("0.0.0.0", 8000)
    assert ctx.params["link_secret_env"] in required
    assert ctx.params["temporal_ui"] == "http://localhost:8080"
    for name in ("address", "namespace", "task_queue", "gcs_bucket", "postgres_dsn", "data_dir"):
        assert ctx.params[name] is not None
    worker_ctx = _parse_cli(
        worker["command"],
        {k: str(v) for k, v in worker["environment"].items() if "${" not in str(v)},
        monkeypatch,
    )
    for name in ("address", "namespace", "task_queue", "gcs_bucket", "postgres_dsn"):
        assert ctx.params[name] == worker_ctx.params[name], name
    assert env["STORAGE_EMULATOR_HOST"] == worker["environment"]["STORAGE_EMULATOR_HOST"]
    probe = " ".join(gateway["healthcheck"]["test"])
    assert "http://localhost:8000/openapi.json" in probe


def test_the_image_installs_the_gateways_extra() -> None:
    """`adk-temporal web` in the image needs the web extra the Dockerfile installs."""
    installs = [
        rest for word, rest in _dockerfile_instructions() if word == "RUN" and "pip install" in rest
    ]
    extras = re.search(r"\.\[([\w,]+)\]", installs[0])
    assert extras is not None
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert {"postgres", "web"} <= set(extras.group(1).split(","))
    assert {"postgres", "web"} <= set(pyproject["project"]["optional-dependencies"])


@pytest.mark.parametrize(
    ("given", "named"),
    [({}, "ADK_WEB_TOKENS"), ({"ADK_WEB_TOKENS": "t" * 40 + " weather"}, "ADK_LINK_SECRET")],
)
def test_the_gateways_secrets_break_no_compose_command_and_the_gateway_names_them(
    services: dict[str, dict[str, Any]], compose_text: str, given: dict[str, str], named: str
) -> None:
    """No `${VAR:?…}` (it fails every compose command — ps, logs, up worker — while VAR is
    unset): the secrets default to empty, and `adk-temporal web` then exits 2 before
    serving, with one message naming the variable to set."""
    assert not re.findall(r"\$\{\w+:?\?", compose_text)
    gateway = services["gateway"]
    env = {k: str(v) for k, v in gateway["environment"].items()}
    assert env[named] == f"${{{named}:-}}"
    env = {k: ("" if v.startswith("${") else v) for k, v in env.items()} | given
    result = CliRunner().invoke(main, gateway["command"][1:], env=env)
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "name", [".env", ".env.production", "keys.json", "prod.keys.json", "tokens.txt", "web.tokens"]
)
def test_secrets_files_are_kept_out_of_git(name: str) -> None:
    """The compose .env file, key rings and token files are ignored by git."""
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", name], cwd=ROOT, capture_output=True
    )
    assert checked.returncode == 0, f"{name} is not ignored"
