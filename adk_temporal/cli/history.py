"""``rewind`` and ``fork``: a session taken back to before an invocation, or copied as of one.

Both write the session and artifact stores directly (``--data-dir``, ``--postgres-dsn``,
``--gcs-bucket``, as the workers use them) and ask Temporal only whether an invocation of
the session runs or waits, which refuses them (:mod:`adk_temporal.rewind`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.markup import escape

from ..artifacts import ArtifactService
from ..client import AdkClient
from ..ids import SessionKey
from ..rewind import ForkResult, RewindResult
from ..sessions import REMOVED_STATE_VALUE, SessionService
from ..worker import artifact_store, session_store
from .common import (
    F,
    connect,
    connection_options,
    console,
    data_dir_option,
    gcs_bucket_option,
    json_option,
    postgres_option,
    print_json,
    require_path,
    run_command,
    session_options,
    store_keys,
)

__all__ = ["fork", "rewind"]


def _stores(
    data_dir: Path, postgres_dsn: str | None, gcs_bucket: str | None
) -> tuple[SessionService, ArtifactService]:
    if not postgres_dsn:
        require_path(data_dir / "sessions.db", "session store")
    keys = store_keys()
    return session_store(data_dir, postgres_dsn, keys=keys), artifact_store(
        data_dir, gcs_bucket, keys=keys
    )


def _stores_options(f: F) -> F:
    for decorate in (
        json_option,
        gcs_bucket_option,
        postgres_option,
        data_dir_option,
        session_options,
        connection_options,
    ):
        f = decorate(f)
    return f


def _rewind_lines(result: RewindResult) -> list[str]:
    key = SessionKey(result.app_name, result.user_id, result.session_id)
    verb = "rewound" if result.appended else "already rewound"
    lines = [
        f"{verb} {key} to before invocation {result.before_invocation_id} (event {result.event_id})"
    ]
    for name, value in result.state_delta.items():
        told = "removed" if value == REMOVED_STATE_VALUE else f"= {json.dumps(value)}"
        lines.append(f"  state     {name} {told}")
    for name, version in result.artifact_delta.items():
        lines.append(f"  artifact  {name} → v{version}")
    if len(lines) == 1:
        lines.append("  nothing changed since then")
    return lines


@click.command()
@_stores_options
@click.option("--before", "before", required=True, help="The first invocation taken back.")
@click.option(
    "--rewind-id",
    help="The rewind event's id (default: a new one); the same id retries a rewind "
    "without repeating it.",
)
def rewind(
    address: str,
    namespace: str,
    task_queue: str,
    app_name: str,
    user_id: str,
    session_id: str,
    data_dir: Path,
    postgres_dsn: str | None,
    gcs_bucket: str | None,
    as_json: bool,
    before: str,
    rewind_id: str | None,
) -> None:
    """Rewind a session to before invocation --before.

    One event is appended that gives the session's own state keys their earlier values
    (the state the session was created with included) and removes the keys added since;
    every session artifact saved since gets its earlier content back as a new version.
    Nothing is deleted, and the model no longer sees the turns taken back. app:/user:
    state and user: artifacts are shared with other sessions and stay as they are.
    Refused while an invocation of the session runs or waits for an answer.
    """

    async def body() -> None:
        sessions, artifacts = _stores(data_dir, postgres_dsn, gcs_bucket)
        try:
            adk = AdkClient(
                await connect(address, namespace), task_queue=task_queue, session_service=sessions
            )
            key = SessionKey(app_name, user_id, session_id)
            result = await adk.rewind(key, before, event_id=rewind_id, artifact_service=artifacts)
        finally:
            await sessions.close()
        if as_json:
            print_json(result.model_dump(mode="json"))
            return
        for line in _rewind_lines(result):
            console.print(escape(line))

    run_command(body())


def _fork_line(result: ForkResult) -> str:
    source = SessionKey(result.app_name, result.user_id, result.source_session_id)
    point = f"as of invocation {result.invocation_id}" if result.invocation_id else "whole"
    copied = ", ".join(f"{name} v{','.join(map(str, v))}" for name, v in result.artifacts.items())
    return (
        f"forked {source} {point} into session {result.session_id}: {result.events} "
        f"event(s){'; artifacts ' + copied if copied else ''}"
    )


@click.command()
@_stores_options
@click.option("--at", "at", help="The last invocation copied (default: every event).")
@click.option(
    "--new-session",
    "new_session_id",
    help="The new session's id (default: a new s-… id); the same id retries a fork.",
)
def fork(
    address: str,
    namespace: str,
    task_queue: str,
    app_name: str,
    user_id: str,
    session_id: str,
    data_dir: Path,
    postgres_dsn: str | None,
    gcs_bucket: str | None,
    as_json: bool,
    at: str | None,
    new_session_id: str | None,
) -> None:
    """Copy a session as of invocation --at into a new session of the same app and user.

    The new session holds the events up to the end of that invocation, the state they make
    from the session's initial state, and every version up to then of the artifacts they
    saved; the original is not changed. Refused only when it would copy an invocation
    that still runs or waits.
    """

    async def body() -> None:
        sessions, artifacts = _stores(data_dir, postgres_dsn, gcs_bucket)
        try:
            adk = AdkClient(
                await connect(address, namespace), task_queue=task_queue, session_service=sessions
            )
            key = SessionKey(app_name, user_id, session_id)
            result = await adk.fork(
                key, at, new_session_id=new_session_id, artifact_service=artifacts
            )
        finally:
            await sessions.close()
        if as_json:
            print_json(result.model_dump(mode="json"))
            return
        console.print(escape(_fork_line(result)))

    run_command(body())
