"""``codec-server`` and ``rotate-key``: encrypted payloads for people and the Temporal UI."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import click

from ..codec import KEY_FILE_ENV, rotate_key_file
from ..codec_server import (
    DEFAULT_MAX_BODY_BYTES,
    TOKEN_ENV,
    TOKEN_FILE_ENV,
    CodecServer,
    load_token,
)
from ..errors import EncryptionError
from .common import (
    CliError,
    console,
    encryption_option,
    err_console,
    payload_codec,
    run_command,
    stop_on_signals,
)

__all__ = ["codec_server", "rotate_key"]

_DEV_UI_ORIGINS = ("http://127.0.0.1:8233", "http://localhost:8233")


@click.command("codec-server")
@encryption_option
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"File holding the token every request must carry (or {TOKEN_FILE_ENV}; or put "
    f"the token itself in {TOKEN_ENV}). Never given on the command line.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=int, default=8081, show_default=True, help="Port to listen on.")
@click.option(
    "--ui-origin",
    "ui_origins",
    multiple=True,
    default=_DEV_UI_ORIGINS,
    show_default=True,
    help="Origin of a Temporal UI allowed to call it from a browser (repeatable).",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1024),
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    help="Larger requests are refused unread.",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Serve HTTPS with this certificate (PEM; with --tls-key).",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The certificate's private key (PEM).",
)
def codec_server(
    token_file: Path | None,
    host: str,
    port: int,
    ui_origins: tuple[str, ...],
    max_body_bytes: int,
    tls_cert: Path | None,
    tls_key: Path | None,
) -> None:
    """Serve Temporal's codec-server protocol, so the UI and CLI show encrypted payloads.

    POST /encode and /decode need `Authorization: Bearer <token>`; a browser signs in
    once on the server's own page instead. Point the Temporal UI's codec setting (or
    `temporal --codec-endpoint`, with TEMPORAL_CODEC_AUTH="Bearer <token>") at the URL
    it prints. Runs until Ctrl-C.
    """
    codec = payload_codec()
    if codec is None:
        raise click.UsageError(
            f"codec-server needs the key file: pass --encryption-key-file or set {KEY_FILE_ENV}"
        )
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("give --tls-cert and --tls-key together")
    try:
        token = load_token(token_file)
    except EncryptionError as err:
        raise click.BadParameter(str(err), param_hint="--token-file") from None
    tls = None
    if tls_cert is not None and tls_key is not None:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(tls_cert, tls_key)

    async def body() -> None:
        try:
            server = CodecServer(
                codec,
                token,
                host=host,
                port=port,
                ui_origins=ui_origins,
                max_body_bytes=max_body_bytes,
                tls=tls,
            )
        except OSError as err:
            raise CliError(
                f"cannot listen on {host}:{port} ({err.strerror})", "pass another --port"
            ) from None
        stop = stop_on_signals()
        server.start()
        try:
            console.print(f"codec server on {server.url} · UI origins {', '.join(ui_origins)}")
            console.print(f"  browsers sign in at {server.url}/ ; Ctrl-C stops it.")
            if tls is None and host not in ("127.0.0.1", "localhost", "::1"):
                err_console.print(
                    "[bold yellow]warning:[/] plain HTTP on a non-loopback address sends "
                    "the token and plaintext payloads unencrypted; pass --tls-cert/--tls-key"
                )
            await stop.wait()
        finally:
            await asyncio.to_thread(server.stop)

    run_command(body())


@click.command("rotate-key")
@click.option(
    "--encryption-key-file",
    "key_file",
    envvar=KEY_FILE_ENV,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"The key file (or {KEY_FILE_ENV}); created, mode 0600, when missing.",
)
@click.option("--key-id", help="Id of the new key (default: k<n>, the first unused number).")
def rotate_key(key_file: Path, key_id: str | None) -> None:
    """Add a fresh random key to the key file and make it current.

    Old keys stay, so everything they encrypted stays readable. Restart workers and clients
    to encrypt with the new key; until then they still read payloads it encrypted (a
    process re-reads the file when it meets a key id it does not know).
    """

    async def body() -> None:
        keys = rotate_key_file(key_file, key_id)
        console.print(
            f"key file {key_file}: current key {keys.current} · keys {', '.join(sorted(keys.keys))}"
        )

    run_command(body())
