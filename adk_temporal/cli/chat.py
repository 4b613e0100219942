"""``chat``: a conversation with an agent in the terminal, like ADK's ``adk run``.

Each line typed is one invocation of the session; the agent's text prints as the model
writes it and tool calls print in one line each. When the run pauses for an approval or an
input, the question is asked right there (y/n, or a JSON value checked against the
request's schema) and the run goes on. ``exit`` or the end of input ends the chat. The
invocations run on Temporal workers, or in this process with ``--in-process``.
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from ..answers import AnswerDesk, raise_if_refused
from ..app import App, Stores
from ..client import AdkClient, InvocationHandle
from ..events import REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME, Event
from ..flow.messages import InvocationStatus
from ..ids import SessionKey
from ..render import StreamPrinter
from ..run_config import RunConfig
from ..runner import Runner
from ..sessions import SessionService
from ..terminal import NoAnswerError, answer_on_terminal, answer_request
from ..worker import artifact_store, session_store
from .common import (
    agent_option,
    connect,
    connection_options,
    console,
    data_dir_option,
    err_console,
    local_agents,
    local_app_option,
    new_session_options,
    postgres_option,
    require_path,
    run_command,
    store_keys,
)
from .invocations import settled_status, start_invocation, warn_if_stored_elsewhere

__all__ = ["chat"]

Turn = Callable[[str], Awaitable[bool]]
"""One message's invocation; ``False`` ends the chat (the input ended mid-request)."""

_WAITING = ("awaiting_confirmation", "awaiting_input")
_ASKED = {REQUEST_CONFIRMATION_FUNCTION_NAME, REQUEST_INPUT_FUNCTION_NAME}
_ANSWER_POLL_SECONDS = 0.1


def _read_message() -> str | None:
    """The next message typed, or ``None`` once the input ended."""
    try:
        line: str = click.prompt("[user]", prompt_suffix=": ", default="", show_default=False)
    except click.Abort:
        return None
    return line


class _Shown:
    """Prints what the person at the terminal needs: the agent's side of the conversation.

    The user's own message is not echoed, and the requests a run opens are asked as
    questions instead of printed as calls.
    """

    def __init__(self) -> None:
        self._printer = StreamPrinter(console)

    def feed(self, event: Event) -> None:
        """Print ``event`` unless it is the user's message or a request's bookkeeping."""
        if event.author == "user":
            return
        calls = {part.function_call.name for part in event.parts() if part.function_call}
        if calls and calls <= _ASKED:
            return
        self._printer.feed(event)

    def close(self) -> None:
        """End a line a streamed reply left open."""
        self._printer.close()


def _report(status: InvocationStatus) -> None:
    if status.status == "failed":
        err_console.print(f"[bold red]failed:[/] {escape(status.error or 'unknown error')}")


async def _converse(turn: Turn) -> int:
    """Read messages and run each until ``exit``, the end of input, or a turn says stop."""
    while True:
        message = await asyncio.to_thread(_read_message)
        if message is None or message.strip() == "exit":
            return 0
        if message.strip() and not await turn(message.strip()):
            return 0


def _local_turn(runner: Runner, key: SessionKey, agent: str) -> Turn:
    """A turn run in this process."""

    async def turn(message: str) -> bool:
        shown = _Shown()
        invocation = await runner.start(
            *key, agent, message, config=_CONFIG, started_by=getpass.getuser()
        )
        try:
            status = await answer_on_terminal(invocation, shown.feed, err_console)
        except NoAnswerError:
            # Nothing in this process could take a later answer: cancel, which records it.
            await invocation.cancel()
            err_console.print("[yellow]no answer:[/] input ended; the in-process run is cancelled")
            return False
        finally:
            shown.close()
        _report(status)
        return True

    return turn


async def _answered(handle: InvocationHandle, ids: set[str]) -> None:
    """Wait until the run took the answers to ``ids``: it runs on, or asks something else."""
    while True:
        status = await handle.status()
        if status.status not in _WAITING:
            return
        if not ids & {request.id for request in await handle.pending()}:
            return
        await asyncio.sleep(_ANSWER_POLL_SECONDS)


class _DeskAnswers:
    """The chat's answers to one run, admitted through the answer desk as the person at
    this terminal (``chat``), refusals raised for :func:`answer_request` to print."""

    def __init__(self, adk: AdkClient, workflow_id: str) -> None:
        self._desk = AnswerDesk(adk)
        self._workflow_id = workflow_id
        self._who = getpass.getuser()

    async def confirm(self, confirmation_id: str, confirmed: bool) -> None:
        """Approve or reject one confirmation request."""
        outcome = await self._desk.confirm(
            self._workflow_id, confirmation_id, confirmed, answered_by=self._who, channel="chat"
        )
        raise_if_refused(outcome)

    async def resume(self, interrupt_id: str, input: Any) -> None:
        """Answer one input request."""
        outcome = await self._desk.resume(
            self._workflow_id, interrupt_id, input, answered_by=self._who, channel="chat"
        )
        raise_if_refused(outcome)


async def _follow(handle: InvocationHandle, answers: _DeskAnswers) -> InvocationStatus | None:
    """Print the run's events, answering its requests here, until it ends; ``None`` when the
    input ended while it waited (the run keeps waiting on Temporal)."""
    shown = _Shown()
    last: str | None = None
    while True:
        try:
            async for event in handle.stream(after=last):
                last = last if event.partial else event.id
                shown.feed(event)
        finally:
            shown.close()
        status = await settled_status(handle)
        if status.status not in _WAITING:
            return status
        requests = await handle.pending()
        try:
            for request in requests:
                await answer_request(answers, request, err_console)
        except NoAnswerError:
            err_console.print(
                f"[yellow]no answer:[/] input ended; {handle.workflow_id} waits on Temporal — "
                f"answer it later with `adk-temporal pending --workflow-id {handle.workflow_id}`"
            )
            return None
        await _answered(handle, {request.id for request in requests})


def _worker_turn(
    adk: AdkClient, key: SessionKey, agent: str, seen: Callable[[str], Awaitable[None]]
) -> Turn:
    """A turn run by the task queue's workers, followed through their session store;
    ``seen`` then warns if this client's store had none of its events."""

    async def turn(message: str) -> bool:
        handle = await start_invocation(
            adk, key, agent, message, _CONFIG, started_by=getpass.getuser()
        )
        status = await _follow(handle, _DeskAnswers(adk, handle.workflow_id))
        if status is None:
            return False
        _report(status)
        await seen(status.invocation_id)
        return True

    return turn


async def _chat_local(
    app: App, sessions: SessionService, data_dir: Path, key: SessionKey, agent: str
) -> int:
    runner = Runner(app, stores=Stores(sessions, artifact_store(data_dir, keys=store_keys())))
    return await _converse(_local_turn(runner, key, agent))


async def _chat_worker(
    address: str,
    namespace: str,
    task_queue: str,
    sessions: SessionService,
    key: SessionKey,
    agent: str,
    stores: tuple[str | None, Path],
) -> int:
    client = await connect(address, namespace)
    adk = AdkClient(client, task_queue=task_queue, session_service=sessions)

    async def seen(invocation_id: str) -> None:
        await warn_if_stored_elsewhere(invocation_id, key, sessions, *stores)

    return await _converse(_worker_turn(adk, key, agent, seen))


_CONFIG = RunConfig(stream=True)


"""Every chat turn streams: the text prints as the model writes it."""


@click.command()
@connection_options
@data_dir_option
@postgres_option
@new_session_options
@agent_option
@click.option(
    "--in-process",
    is_flag=True,
    help="Run the agents in this process, without Temporal (the same flow).",
)
@local_app_option("--in-process")
def chat(
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
    app_name: str,
    user_id: str,
    session_id: str,
    agent: str,
    in_process: bool,
    local_app: str | None,
) -> None:
    """Chat with an agent: each line is a message; approvals and inputs are asked inline.

    Without --session a new session starts (its id is printed). Type exit, or end the
    input (Ctrl-D), to stop; a run waiting for an answer when the input ends is cancelled
    in process, and left waiting on Temporal otherwise (`adk-temporal pending` lists it).
    Against workers, --data-dir (or --postgres-dsn) must be the workers' store.
    """
    key = SessionKey(app_name, user_id, session_id)
    served = local_agents(local_app) if in_process else None
    where = "in this process" if in_process else f"on task queue {task_queue}"
    err_console.print(
        f"chat with {escape(agent)} of app {escape(app_name)} as {escape(user_id)} {where}, "
        f"session {escape(session_id)} (--session {escape(session_id)} continues it) · "
        "type exit or press Ctrl-D to end"
    )

    async def body() -> int:
        if not (in_process or postgres_dsn):
            require_path(data_dir, "data directory")
        sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
        try:
            if served is not None:
                return await _chat_local(served, sessions, data_dir, key, agent)
            stores = (postgres_dsn, data_dir)
            return await _chat_worker(address, namespace, task_queue, sessions, key, agent, stores)
        finally:
            await sessions.close()

    run_command(body())
