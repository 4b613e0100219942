"""``web``: the HTTP gateway (JSON API, answer links) and, with ``--console``, the console."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..app import App
from ..client import AdkClient
from ..extras import MissingExtraError, needs_extra
from ..notifications import NotificationConfigError, secret_from_env
from ..ports import is_loopback
from ..web.cors import CorsOriginError, checked_origin
from ..worker import artifact_store, session_store
from .common import (
    connect,
    connection_options,
    console,
    data_dir_option,
    gcs_bucket_option,
    postgres_option,
    resolve_app,
    run_command,
    store_keys,
)

__all__ = ["web"]

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

    from ..web.auth import TokenBook
    from ..web.server import Surface

TOKENS_ENV = "ADK_WEB_TOKENS"
"""Tokens given in the environment, in the tokens file's format."""


def _link_secret(app: App | None, env_name: str | None) -> bytes | None:
    """The app's notifications secret, else the one in ``env_name``; ``None``: no links."""
    if app is not None and app.notifications is not None:
        return app.notifications.secret
    if env_name:
        try:
            return secret_from_env(env_name)
        except NotificationConfigError as err:
            raise click.BadParameter(str(err), param_hint="--link-secret-env") from None
    return None


def _origins(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    try:
        return tuple(checked_origin(value) for value in values)
    except CorsOriginError as err:
        raise click.BadParameter(str(err)) from None


_STREAM_OPTIONS = (
    "sse_max_streams",
    "sse_max_streams_per_token",
    "sse_max_backlog",
    "sse_slow_reader_seconds",
)


def _stream_options(command: Callable[..., None]) -> Callable[..., None]:
    """Add the options bounding event streams, handed to ``command`` as one
    ``stream_limits`` tuple of ``StreamLimits``' fields (that type needs the ``web`` extra,
    which loading the CLI does not)."""

    @functools.wraps(command)
    def with_limits(**options: Any) -> None:
        command(stream_limits=tuple(options.pop(name) for name in _STREAM_OPTIONS), **options)

    f: Callable[..., None] = with_limits
    # Applied in reverse, so that --help lists them in reading order.
    f = click.option(
        "--sse-slow-reader-seconds",
        type=click.FloatRange(min=0),
        default=10.0,
        show_default=True,
        help="Seconds a reader may stay over --sse-max-backlog behind before its stream ends "
        "with 'event: dropped'.",
    )(f)
    f = click.option(
        "--sse-max-backlog",
        type=click.IntRange(min=1024),
        default=8 << 20,
        show_default=True,
        help="Bytes of events that may wait for a slow event-stream reader.",
    )(f)
    f = click.option(
        "--sse-max-streams-per-token",
        type=click.IntRange(min=1),
        default=20,
        show_default=True,
        help="Event streams one token (with its console sessions) may follow at once.",
    )(f)
    f = click.option(
        "--sse-max-streams",
        type=click.IntRange(min=1),
        default=200,
        show_default=True,
        help="Event streams served at once in all; one more is refused with 429.",
    )(f)
    return f


@click.command()
@connection_options
@data_dir_option
@postgres_option
@gcs_bucket_option
@click.option(
    "--app",
    "app_spec",
    help="The served app, as package.module:attribute: its "
    "agents are offered and checked, its notifications secret verifies answer links.",
)
@click.option("--examples", is_flag=True, help="The bundled example agents are the app.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--tokens-file",
    envvar="ADK_WEB_TOKENS_FILE",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=f"Bearer tokens and their apps: lines 'TOKEN app1,app2' ('*': every app) or JSON "
    f'{{"TOKEN": ["app1"]}} (or ADK_WEB_TOKENS_FILE; ${TOKENS_ENV} may hold more).',
)
@click.option(
    "--console/--no-console",
    "with_console",
    default=False,
    show_default=True,
    help="Serve the web console under /console.",
)
@click.option(
    "--temporal-ui",
    envvar="ADK_TEMPORAL_UI",
    default="http://localhost:8233",
    show_default=True,
    help="Base URL of the Temporal UI that runs link to; empty for none.",
)
@click.option(
    "--answer-wait",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Seconds an answer waits for a worker to check it before Temporal keeps it as a "
    "signal (the reply is then 202).",
)
@click.option(
    "--sse-keepalive",
    type=click.FloatRange(min=0.1),
    default=15.0,
    show_default=True,
    help="Seconds of silence after which an event stream sends a comment, so proxies keep "
    "it open while a run waits.",
)
@click.option(
    "--forwarded-allow-ips",
    envvar="ADK_WEB_FORWARDED_ALLOW_IPS",
    default="",
    help="Addresses (comma-separated; '*' for any) of the TLS-terminating proxies whose "
    "X-Forwarded-Proto and X-Forwarded-For are believed, so the console cookie is Secure "
    "behind them. Without it no forwarded header is.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    callback=_origins,
    help="A browser origin (scheme://host[:port]) whose pages may call the API; repeat for "
    "more. Without it no other site's page can.",
)
@click.option(
    "--link-secret-env",
    help="Environment variable holding the answer links' secret, for an app without notifications.",
)
@click.option(
    "--adk-dev",
    "adk_dev",
    is_flag=True,
    help="Development mode for ADK's client and dev UI, which send no token: ADK's routes "
    "(/run, /apps/..., /list-apps) answer without one, to this machine only; --host must "
    "be a loopback address.",
)
@click.option(
    "--adk-dev-ui",
    "adk_dev_ui",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Serve ADK's dev UI under /dev-ui/ from this directory: the browser folder of an "
    "installed google-adk (.../site-packages/google/adk/cli/browser). Needs --adk-dev.",
)
@click.option(
    "--a2a",
    "a2a",
    is_flag=True,
    help="Serve each agent of the app over A2A: its card at /a2a/AGENT/.well-known/"
    "agent-card.json, its JSON-RPC endpoint at /a2a/AGENT, for the same tokens (needs --app "
    "and the a2a extra).",
)
@_stream_options
def web(
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
    gcs_bucket: str | None,
    app_spec: str | None,
    examples: bool,
    host: str,
    port: int,
    tokens_file: Path | None,
    with_console: bool,
    temporal_ui: str,
    answer_wait: float,
    sse_keepalive: float,
    stream_limits: tuple[int, int, int, float],
    forwarded_allow_ips: str,
    cors_origins: tuple[str, ...],
    link_secret_env: str | None,
    adk_dev: bool,
    adk_dev_ui: Path | None,
    a2a: bool,
) -> None:
    """Serve the HTTP gateway until Ctrl-C: start runs, list them, answer their requests
    (also through signed links), follow their events; with --console, the web console."""
    try:
        with needs_extra("web", "the gateway"):
            import uvicorn

            from ..web.gateway import Gateway
            from ..web.server import create_app
            from ..web.sse import StreamLimits
    except MissingExtraError as err:
        raise click.UsageError(str(err)) from None
    served, surfaces = _served(app_spec, examples, a2a)
    _check_adk_dev(adk_dev, adk_dev_ui, host)
    tokens = _tokens(tokens_file, required=not adk_dev)
    secret = _link_secret(served, link_secret_env)
    _warn_if_clear_text(host, proxies := forwarded_allow_ips.strip())

    async def body() -> None:
        client = await connect(address, namespace)
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        gateway = Gateway(
            AdkClient(client, task_queue=task_queue, session_service=sessions),
            sessions=sessions,
            artifacts=artifact_store(data_dir, gcs_bucket, keys=store_keys()),
            app=served,
            temporal_ui=temporal_ui or None,
            answer_wait=answer_wait,
            link_secret=secret,
            keepalive=sse_keepalive,
        )
        app = create_app(
            gateway, tokens, console=with_console, cors_origins=cors_origins, adk_local=adk_dev,
            adk_dev_ui=adk_dev_ui, surfaces=surfaces, stream_limits=StreamLimits(*stream_limits),
        )  # fmt: skip
        console.print(_banner(f"http://{host}:{port}", task_queue, with_console, adk_dev_ui, a2a))
        try:
            await uvicorn.Server(_server_config(app, host, port, proxies)).serve()
        finally:
            await sessions.close()

    run_command(body())


def _banner(
    where: str, task_queue: str, with_console: bool, adk_dev_ui: Path | None, a2a: bool
) -> str:
    """The line saying what the gateway serves where."""
    pages = f" · console {where}/console" if with_console else ""
    pages += f" · ADK dev UI {where}/dev-ui/" if adk_dev_ui else ""
    pages += f" · A2A {where}/a2a/AGENT" if a2a else ""
    return f"gateway on {where} · API {where}/v1 · task queue {task_queue}{pages}"


def _warn_if_clear_text(host: str, proxies: str) -> None:
    """Say on stderr, in one line, when tokens would cross a network unencrypted."""
    if proxies or is_loopback(host):
        return
    # One line, printed before anything else, so it is not lost in a log.
    click.echo(
        f"warning: serving plain HTTP on {host}: bearer tokens, console cookies and answer "
        "links travel in clear text; put a TLS-terminating proxy in front (and pass "
        "--forwarded-allow-ips with its address) or bind 127.0.0.1",
        err=True,
    )


def _server_config(app: ASGIApp, host: str, port: int, proxies: str) -> uvicorn.Config:
    """uvicorn's configuration: forwarded headers believed from ``proxies`` only, and no
    credential in its log lines."""
    import uvicorn

    from ..web.links import RedactLinks

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        # Off unless proxies are named: uvicorn would otherwise believe any local process's
        # X-Forwarded-Proto and X-Forwarded-For.
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
    )
    # Answer links' paths and query values may be credentials; bearer tokens travel in a
    # header, which the access log does not print. (uvicorn.Config set its loggers up.)
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(RedactLinks())
    return config


def _served(app_spec: str | None, examples: bool, a2a: bool) -> tuple[App | None, list[Surface]]:
    """The served app (``None``: none), and what is served beside the gateway's own routes:
    with ``--a2a`` the app's agents over A2A, refused without an app or the ``a2a`` extra.

    Raises:
        click.UsageError: What is missing.
    """
    served = resolve_app(app_spec, examples) if app_spec or examples else None
    if not a2a:
        return served, []
    if served is None:
        raise click.UsageError("--a2a serves the app's agents: give --app (or --examples)")
    try:
        with needs_extra("a2a", "serving agents over A2A"):
            from ..a2a.routes import A2aRoutes
    except MissingExtraError as err:
        raise click.UsageError(str(err)) from None
    return served, [A2aRoutes()]


def _check_adk_dev(adk_dev: bool, adk_dev_ui: Path | None, host: str) -> None:
    """Refuse development mode on an address other machines reach, and the dev UI without it.

    Raises:
        click.UsageError: ``--adk-dev`` with a host that is not loopback, or
            ``--adk-dev-ui`` without ``--adk-dev``.
    """
    if adk_dev and not is_loopback(host):
        raise click.UsageError(
            f"--adk-dev serves without tokens, so it listens on loopback only; --host {host} "
            "is not (use 127.0.0.1, or tokens without --adk-dev)"
        )
    if adk_dev_ui is not None and not (adk_dev_ui / "index.html").is_file():
        raise click.BadParameter(
            f"{adk_dev_ui} holds no built dev UI (no index.html); give the browser folder of "
            "an installed google-adk",
            param_hint="--adk-dev-ui",
        )
    if adk_dev_ui is not None and not adk_dev:
        raise click.UsageError(
            "--adk-dev-ui needs --adk-dev: ADK's dev UI sends no token, so it is served in "
            "development mode only"
        )


def _tokens(tokens_file: Path | None, *, required: bool = True) -> TokenBook:
    """The gateway's bearer tokens: the file's, then ``$ADK_WEB_TOKENS``' on top.

    Raises:
        click.BadParameter: A token line is malformed.
        click.UsageError: There are no tokens at all, and ``required``.
    """
    from ..web.auth import TokenBook, TokenFileError

    try:
        tokens = TokenBook()
        if tokens_file is not None:
            tokens = TokenBook.parse(tokens_file.read_text(), str(tokens_file))
        if os.environ.get(TOKENS_ENV):
            tokens = tokens.merged(TokenBook.parse(os.environ[TOKENS_ENV], f"${TOKENS_ENV}"))
    except TokenFileError as err:
        raise click.BadParameter(str(err), param_hint="--tokens-file") from None
    if not tokens.scopes and required:
        raise click.UsageError(f"no tokens: give --tokens-file or set ${TOKENS_ENV}")
    return tokens
