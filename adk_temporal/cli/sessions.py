"""``session create``: a session with initial state, written to the workers' session store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..sessions import create_session
from ..worker import session_store
from .common import (
    JSON,
    console,
    data_dir_option,
    encryption_option,
    json_option,
    new_session_options,
    postgres_option,
    print_json,
    run_command,
    store_keys,
)

__all__ = ["session"]


@click.group()
def session() -> None:
    """Sessions in the workers' session store."""


@session.command("create")
@data_dir_option
@encryption_option
@postgres_option
@new_session_options
@json_option
@click.option(
    "--state",
    type=JSON,
    default=None,
    help='Initial state as a JSON object, e.g. \'{"user:tier": "gold"}\' (app: and user: '
    "keys go to the shared scopes, temp: keys are dropped).",
)
def create(
    data_dir: Path,
    postgres_dsn: str | None,
    app_name: str,
    user_id: str,
    session_id: str,
    as_json: bool,
    state: Any,
) -> None:
    """Create a session with initial state (ADK's create_session); its first run starts
    from it. A session that exists already is refused."""
    if state is not None and not isinstance(state, dict):
        raise click.BadParameter("the state must be a JSON object", param_hint="--state")

    async def body() -> None:
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        try:
            created = await create_session(
                sessions, app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )
        finally:
            await sessions.close()
        if as_json:
            print_json(created.model_dump(mode="json"))
            return
        console.print(f"created session {created.key} with state {created.state}")

    run_command(body())
