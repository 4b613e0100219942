"""``run --local`` and ``chat``: an invocation's requests answered on the terminal.

The events print as they are appended; when the run pauses, each open request is put to
the person at the terminal — approve or reject, or a JSON value checked against the
request's schema (asked again until it fits) — and the run goes on. Prompts run in a thread
so the invocation's other branches keep working while the terminal waits.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from collections.abc import Callable
from typing import Any, Protocol

import click
from rich.console import Console
from rich.markup import escape

from .answers import AnswerRefusedError
from .errors import InvalidResumeInputError
from .events import Event
from .flow.messages import InvocationStatus, PendingConfirmation, PendingInput, PendingRequest
from .runner import LocalInvocation

__all__ = ["Answerable", "NoAnswerError", "answer_on_terminal", "answer_request"]


class NoAnswerError(Exception):
    """The terminal closed (end of input) while a request waited for an answer."""


def _prompt(text: str, **kwargs: Any) -> Any:
    try:
        return click.prompt(text, err=True, **kwargs)
    except click.Abort as err:
        raise NoAnswerError(text) from err


def _confirm(request: PendingConfirmation, console: Console) -> bool:
    args = ", ".join(f"{k}={v!r}" for k, v in request.args.items())
    console.print(f"[bold yellow]approval needed[/] for {request.tool}({args}): {request.hint}")
    if request.payload is not None:
        console.print(f"  payload {json.dumps(request.payload, default=str)}")
    answer: str = _prompt("approve?", type=click.Choice(["y", "n"]))
    return answer == "y"


def _input(request: PendingInput, console: Console) -> Any:
    console.print(f"[bold yellow]input needed[/] for {request.tool}: {request.message}")
    if request.input_schema is not None:
        console.print(f"  schema {json.dumps(request.input_schema)}")
    while True:
        text: str = _prompt("answer (JSON)")
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            console.print(f"[red]not JSON:[/] {err.msg}; try again")


class Answerable(Protocol):
    """What takes an answer: an in-process invocation, or a Temporal invocation's handle."""

    async def confirm(self, confirmation_id: str, confirmed: bool) -> None:
        """Approve or reject one confirmation request, checked."""
        ...

    async def resume(self, interrupt_id: str, input: Any) -> None:
        """Answer one input request, checked against its schema."""
        ...


async def answer_request(target: Answerable, request: PendingRequest, console: Console) -> None:
    """Ask the person at the terminal for ``request``'s answer and give it to ``target``;
    an input the request's schema refuses is asked for again. An answer refused for another
    reason (``target`` raising :class:`AnswerRefusedError`: answered meanwhile elsewhere,
    the run closed…) is printed with its reason and who answered first.

    Raises:
        NoAnswerError: The terminal's input ended before an answer was given.
    """
    try:
        if request.kind == "confirmation":
            approved = await asyncio.to_thread(_confirm, request, console)
            await target.confirm(request.id, approved)
            return
        while True:
            value = await asyncio.to_thread(_input, request, console)
            try:
                await target.resume(request.id, value)
                return
            except InvalidResumeInputError as err:
                console.print(f"[red]refused:[/] {err}; try again")
    except AnswerRefusedError as err:
        console.print(f"[yellow]not taken:[/] {escape(str(err))}")


class _AsUser:
    """An in-process invocation answered as the person at this terminal (their login name),
    so the audit names them as it does for the CLI and ``chat`` on Temporal."""

    def __init__(self, invocation: LocalInvocation, who: str) -> None:
        self._invocation = invocation
        self._who = who

    async def confirm(self, confirmation_id: str, confirmed: bool) -> None:
        """Approve or reject one confirmation request, as :attr:`_who`."""
        await self._invocation.confirm(confirmation_id, confirmed, answered_by=self._who)

    async def resume(self, interrupt_id: str, input: Any) -> None:
        """Answer one input request, as :attr:`_who`."""
        await self._invocation.resume(interrupt_id, input, answered_by=self._who)


async def answer_on_terminal(
    invocation: LocalInvocation,
    show: Callable[[Event], None],
    console: Console,
    who: str | None = None,
) -> InvocationStatus:
    """Show the invocation's events and answer its requests until it ends.

    Args:
        invocation: The in-process invocation.
        show: Prints one event; pieces of a streamed reply (``partial``) come too.
        console: Where the questions go (stderr, so stdout keeps the events).
        who: Who answers, as the audit records it; the operating-system user by default.

    Returns:
        The final status (completed or failed).

    Raises:
        NoAnswerError: The terminal's input ended while a request was open.
    """
    answerer = _AsUser(invocation, who or getpass.getuser())
    shown: set[str] = set()
    while True:
        async for event in invocation.stream():
            if event.partial:
                show(event)
            elif event.id not in shown:
                shown.add(event.id)
                show(event)
        if invocation.done():
            await invocation.result()
            return await invocation.status()
        for request in await invocation.pending():
            await answer_request(answerer, request, console)
