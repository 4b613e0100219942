"""``events`` and ``artifacts``: reading the session and artifact stores."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import click
from google.api_core.exceptions import GoogleAPIError
from google.auth.exceptions import GoogleAuthError
from rich.table import Table
from rich.text import Text

from ..artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    ListRequest,
    LoadRequest,
    VersionsRequest,
)
from ..errors import AdkError, SessionNotFoundError
from ..following import StoreReads, follow_session, with_partials
from ..ids import SessionKey
from ..render import StreamPrinter, event_json, part_bytes
from ..sessions import SessionService
from ..worker import artifact_store, session_store
from .common import (
    CliError,
    F,
    console,
    data_dir_option,
    encryption_option,
    err_console,
    gcs_bucket_option,
    json_option,
    postgres_option,
    print_event,
    print_json,
    require_path,
    run_command,
    session_options,
    store_keys,
)

# ---------------------------------------------------------------- stores

_APPEAR_POLL_SECONDS = 0.5
_ALL_STORED = 1 << 62
"""A sequence past every event: reading the session then returns no events, only whether
it exists."""


@click.command()
@data_dir_option
@encryption_option
@postgres_option
@session_options
@json_option
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Keep printing new events, and model replies as they are written, until Ctrl-C.",
)
def events(
    data_dir: Path,
    postgres_dsn: str | None,
    app_name: str,
    user_id: str,
    session_id: str,
    as_json: bool,
    follow: bool,
) -> None:
    """Print a session's events from the session store, oldest first.

    With --follow, new events print as they are appended and streamed model replies as the
    model writes them (from any worker on PostgreSQL; from this machine's workers on the
    SQLite store); with --json, one JSON object per line, pieces marked "partial".
    """

    async def body() -> None:
        if not postgres_dsn:
            require_path(data_dir / "sessions.db", "session store")
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        try:
            if follow:
                await _follow_session(sessions, SessionKey(app_name, user_id, session_id), as_json)
                return
            session = await sessions.get(SessionKey(app_name, user_id, session_id))
        finally:
            await sessions.close()
        if as_json:
            print_json([event_json(e) for e in session.events])
            return
        for event in session.events:
            print_event(event)

    run_command(body())


async def _follow_session(sessions: SessionService, key: SessionKey, as_json: bool) -> None:
    """``events --follow``: the session's events, then new ones and pieces, until stopped."""
    await _session_appears(sessions, key)
    printer = StreamPrinter(console)
    reads = StoreReads()
    stored = follow_session(sessions, key, reads=reads)
    async for event in with_partials(sessions, key, stored, reads=reads):
        if as_json:
            # One line per event, flushed, so a pipe reader sees each as it happens.
            print(json.dumps(event_json(event), ensure_ascii=False), flush=True)
        else:
            printer.feed(event)


async def _session_appears(sessions: SessionService, key: SessionKey) -> None:
    """Return once the session exists; say on stderr that it is waited for if it does not.

    Sessions are created by the first invocation, so following one before its first run is
    waiting for that run, not a mistake.
    """
    try:
        await sessions.get(key, after_sequence=_ALL_STORED)
        return
    except SessionNotFoundError:
        err_console.print(
            f"note: session {key} does not exist yet; waiting for it to appear (the first "
            "`adk-temporal run` of it creates it) — check --app/--user/--session and that "
            "--data-dir is the worker's if nothing comes; Ctrl-C stops"
        )
    while True:
        await asyncio.sleep(_APPEAR_POLL_SECONDS)
        try:
            await sessions.get(key, after_sequence=_ALL_STORED)
            return
        except SessionNotFoundError:
            continue


@click.group()
def artifacts() -> None:
    """Read a session's artifacts: list names, show versions, print content."""


def _artifact_service(data_dir: Path, gcs_bucket: str | None) -> ArtifactService:
    if not gcs_bucket:
        require_path(data_dir, "data directory")
    try:
        return artifact_store(data_dir, gcs_bucket, keys=store_keys())
    except GoogleAuthError as err:
        raise CliError(f"cannot use GCS bucket {gcs_bucket!r}: {err}") from err


async def _reading_artifacts(op: Awaitable[Any], where: str) -> Any:
    """Await a store operation; backend failures (not our errors) become one line."""
    try:
        return await op
    except AdkError:
        raise
    except (GoogleAPIError, GoogleAuthError, OSError) as err:
        raise CliError(f"cannot read artifacts from {where}: {err}") from err


def _artifacts_command(f: F) -> F:
    for decorate in (
        json_option,
        gcs_bucket_option,
        session_options,
        data_dir_option,
        encryption_option,
    ):
        f = decorate(f)
    return f


@artifacts.command("list")
@_artifacts_command
def artifacts_list(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    as_json: bool,
) -> None:
    """List the artifact names a session sees (its own and the user's)."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        request = ListRequest(app_name=app_name, user_id=user_id, session_id=session_id)
        listed = await _reading_artifacts(service.list(request), gcs_bucket or str(data_dir))
        if as_json:
            print_json(listed.file_names)
            return
        for name in listed.file_names:
            console.print(name)
        if not listed.file_names:
            console.print("no artifacts")

    run_command(body())


@artifacts.command("versions")
@_artifacts_command
@click.argument("name")
def artifacts_versions(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    as_json: bool,
    name: str,
) -> None:
    """Show every version of artifact NAME, oldest first."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        where = gcs_bucket or str(data_dir)
        key = SessionKey(app_name, user_id, session_id)
        listed = await _reading_artifacts(
            service.versions(VersionsRequest.of(key, file_name=name)), where
        )
        described = [
            (
                await _reading_artifacts(
                    service.get_artifact_version(
                        GetArtifactVersionRequest.of(key, file_name=name, version=v)
                    ),
                    where,
                )
            ).artifact_version
            for v in listed.versions
        ]
        if as_json:
            print_json([d.model_dump(mode="json") for d in described])
            return
        table = Table("version", "mime type", "created (UTC)")
        table.add_column("uri", overflow="fold")
        for d in described:
            table.add_row(
                str(d.version), d.mime_type, f"{d.create_time:%Y-%m-%d %H:%M:%S}", d.canonical_uri
            )
        console.print(Text(f"{name}: versions {', '.join(map(str, listed.versions))}"))
        console.print(table)

    run_command(body())


@artifacts.command("cat")
@data_dir_option
@session_options
@gcs_bucket_option
@click.argument("name")
@click.option(
    "--version",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The version to print; 0 is the latest.",
)
def artifacts_cat(
    data_dir: Path,
    app_name: str,
    user_id: str,
    session_id: str,
    gcs_bucket: str | None,
    name: str,
    version: int,
) -> None:
    """Write the content of artifact NAME to stdout, byte for byte."""

    async def body() -> None:
        service = _artifact_service(data_dir, gcs_bucket)
        request = LoadRequest(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            file_name=name,
            version=version,
        )
        loaded = await _reading_artifacts(service.load(request), gcs_bucket or str(data_dir))
        sys.stdout.buffer.write(part_bytes(loaded.part))

    run_command(body())
