"""``ConversationStore``: sessions, their events in append order, and their scoped state.

State lives in three scopes — ``app:`` keys per app, ``user:`` keys per app and user, the rest
per session; ``temp:`` keys are never stored. Steps read a session worker-side and append
what they produced, and may be retried, so appends are idempotent by event id.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..errors import SessionExistsError, SessionNotFoundError
from ..events import Event
from ..ids import SessionKey
from .session import Session

__all__ = ["ConversationStore"]


class ConversationStore(Protocol):
    """Stores sessions, their events and their scoped state.

    A session is identified by its :class:`~adk_temporal.ids.SessionKey`; the same session
    id under another user is another session. Returned :class:`Session` objects are
    snapshots: mutating them never changes the store, and they do not follow later writes.

    Events carry a per-session sequence number: 1 for the first event appended, then
    consecutive. It is not a field of :class:`Event`; it is the event's 1-based position in
    ``Session.events``, which lets a reader ask only for events it has not seen yet.

    Every method refuses a key whose fields are empty or break the id grammar with
    ``InvalidSessionRequestError``, before touching storage.
    """

    async def create(self, key: SessionKey, *, state: Mapping[str, Any] | None = None) -> Session:
        """Create an empty session (``SessionKey.fresh`` makes a key with a random id).

        Args:
            key: The new session's identity.
            state: Initial state, split by scope like an event's ``state_delta``: ``app:``
                keys update the app's state and ``user:`` keys the user's state (both are
                shared with other sessions), ``temp:`` keys are dropped. Values must be
                JSON-serialisable.

        Returns:
            The new session, with no events and the merged state view.

        Raises:
            SessionExistsError: The session already exists (nothing is changed).
            InvalidSessionRequestError: A state value is not JSON-serialisable.
        """
        ...

    async def get(
        self, key: SessionKey, *, after_sequence: int = 0, limit: int | None = None
    ) -> Session:
        """Read a session with its events in append order.

        Args:
            key: The session.
            after_sequence: Return only events with a higher sequence number. Sequence
                numbers are 1-based positions, so passing the number of events already seen
                returns just the new ones; ``0`` returns all of them. The state is always
                the full current state.
            limit: Return at most this many events (the first after ``after_sequence``),
                for readers that go through a long session a page at a time; ``None``: all.

        Returns:
            The session with the merged state view (session, ``app:`` and ``user:`` keys).

        Raises:
            SessionNotFoundError: No such session.
            InvalidSessionRequestError: ``after_sequence`` is negative, or ``limit`` is
                below 1.
        """
        ...

    async def get_state(self, key: SessionKey) -> dict[str, Any]:
        """Read only a session's merged state, without loading its events.

        Returns:
            The same mapping ``get(key).state`` would return (a copy).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    async def get_initial_state(self, key: SessionKey) -> dict[str, Any]:
        """Read the session's own state as :meth:`create` set it, before any event.

        What rewind and fork start from (:mod:`adk_temporal.rewind`): no event records it.
        Only session keys: the ``app:`` and ``user:`` keys given at creation went to the
        shared scopes, which later writes of other sessions change. A session created before
        this was recorded reads as ``{}``.

        Returns:
            A copy of the session-scoped initial state (``{}`` when none was given).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    async def list(self, app_name: str, user_id: str) -> builtins.list[Session]:
        """List a user's sessions of one app.

        Returns:
            The sessions sorted by id, each with its merged state but **no events**. An app
            or user with no sessions gives an empty list.

        Raises:
            InvalidSessionRequestError: ``app_name`` or ``user_id`` is empty or breaks the
                id grammar.
        """
        ...

    async def delete(self, key: SessionKey) -> None:
        """Delete a session, its events and what it staged; the app and user state stay.

        Deleting a session that does not exist is not an error, so a retried delete is
        harmless.
        """
        ...

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> builtins.list[Event]:
        """Append events to a session and apply their state deltas, in one transaction.

        Idempotent by event id: an event whose id is already stored in this session (by an
        earlier call or earlier in the same batch) is skipped and its state delta is not
        applied again, so a retried activity changes nothing. The stored event wins even if
        the retry carries different content.

        Each new event gets the next sequence number. Its ``state_delta`` is applied by
        scope (``app:`` keys to the app, ``user:`` keys to the user, the rest to the
        session, each key assigned as is); ``temp:`` keys are removed from the stored
        event's ``state_delta`` as well as from the state. An event with ``timestamp == 0``
        is stamped with the service clock. The session's ``last_update_time`` becomes the
        timestamp of the last newly stored event, as in ADK, not the time of the call; a batch
        that stores nothing new leaves it unchanged. The caller's events are never modified.
        The partial pieces the new events supersede are dropped (:mod:`.partials`). A
        partial event given here is not stored and its state delta not applied (ADK: pieces
        of a streamed reply are never persisted; they travel through :mod:`.partials`).

        Args:
            key: The session.
            events: The events to append, in order. Every event needs a non-empty ``id``;
                an empty sequence only checks that the session exists.
            unstage: Ids of staged events these events were made from (:mod:`.staging`);
                removed in the same transaction (ids with nothing staged are ignored).

        Returns:
            One stored event per given non-partial event, in the given order: the newly
            stored event, or for a skipped one the event stored earlier under its id.

        Raises:
            SessionNotFoundError: No such session (nothing is stored).
            InvalidSessionRequestError: An event has an empty id or a state value that is
                not JSON-serialisable (nothing is stored).
        """
        ...

    async def get_or_create(
        self, key: SessionKey, *, state: Mapping[str, Any] | None = None
    ) -> Session:
        """Read a session, creating it first when it does not exist.

        Safe when several workers race: whoever loses the create reads the winner's
        session. ``state`` is used only when this call creates the session.

        Returns:
            The existing or newly created session, with its events.
        """
        try:
            return await self.get(key)
        except SessionNotFoundError:
            pass
        try:
            return await self.create(key, state=state)
        except SessionExistsError:
            # Another worker created it between our read and our create; theirs stands.
            return await self.get(key)
