"""Forwarding a model step's streamed text to the session's followers.

The model produces text faster than some stores take writes; the step must never wait on
its followers. :class:`PartialForwarder` queues the text and publishes it from a task of its
own, merging whatever queued up while the previous publish ran into one piece — so a slow
store means fewer, larger pieces, never a slower model step. Forwarding is best effort: a
store that fails to publish costs the followers the live text (the final event still comes),
never the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Self

from google.genai import types

from ..events import Event
from ..ids import SessionKey
from ..sessions import PartialChannel

__all__ = ["PartialForwarder"]

logger = logging.getLogger(__name__)

_FLUSH_SECONDS = 5.0
"""How long the step waits, once the model is done, for the last pieces to be published."""


class PartialForwarder:
    """Publishes streamed text as partial events of one step, in the background.

    Use as an async context manager around the model call; :meth:`offer` queues text. On
    exit the queued text is published (bounded by a few seconds) before the step appends
    its final event, so no piece arrives after the event that supersedes it.

    Args:
        channel: The store's side channel that carries the pieces.
        key: The step's session.
        template: The final event's identity (id, invocation, author, branch, scope).
        attempt: The step's attempt number, copied onto every piece.
    """

    def __init__(
        self, channel: PartialChannel, key: SessionKey, template: Event, attempt: int
    ) -> None:
        self._channel = channel
        self._key = key
        self._template = template.model_copy(update={"partial": True, "attempt": attempt})
        self._queued: list[str] = []
        self._ready = asyncio.Event()
        self._done = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        """Start the publishing task."""
        self._task = asyncio.create_task(self._publish_loop())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Publish what is queued, then stop; at once when the step was cancelled.

        A failed attempt's text is published too: followers show it until the retry's
        pieces, marked with the next attempt number, replace it.
        """
        self._done = True
        self._ready.set()
        task = self._task
        if task is None:
            return
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            task.cancel()
        try:
            async with asyncio.timeout(_FLUSH_SECONDS):
                await task
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def offer(self, text: str) -> None:
        """Queue ``text`` for publishing; never waits."""
        if text:
            self._queued.append(text)
            self._ready.set()

    async def _publish_loop(self) -> None:
        failed = False
        while True:
            await self._ready.wait()
            self._ready.clear()
            if self._queued:
                text, self._queued = "".join(self._queued), []
                piece = self._template.model_copy(
                    update={"content": types.Content(role="model", parts=[types.Part(text=text)])}
                )
                try:
                    await self._channel.publish_partial(self._key, piece)
                except Exception:
                    if not failed:
                        logger.warning(
                            "cannot publish streamed text of event %s; followers get the final "
                            "event only",
                            piece.id,
                            exc_info=True,
                        )
                    failed = True
            if self._done and not self._queued:
                return
