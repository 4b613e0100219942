"""Capture: recorded sessions written as an ADK eval set, one case per session.

Each chosen session becomes an :class:`~.evalsets.EvalCase` whose conversation is the
session's turns as ADK's eval sees them (:mod:`.conversions`: the user's message, the tool
calls and responses, the final response, with usage) and whose ``session_input`` holds the
app, the user and the session's initial state, so ``adk-temporal eval`` — or ADK's own
``adk eval`` — replays the real conversation as a regression case. The session store is
only read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import SessionNotFoundError
from ..ids import SessionKey
from ..sessions import ConversationStore, Session
from .conversions import session_invocations
from .evalsets import EvalCase, EvalSet, EvalSetError, SessionInput

__all__ = ["SessionSelection", "capture_eval_set", "select_sessions"]


@dataclass(frozen=True)
class SessionSelection:
    """Which recorded sessions to take: an app's, of some users, by id and last update.

    Args:
        app_name: The app.
        user_ids: The users whose sessions are taken (a store lists sessions per user).
        session_ids: Only these sessions; every session of the users when empty.
        since: Only sessions last updated at or after this time (seconds since the epoch).
        until: Only sessions last updated before this time.
    """

    app_name: str
    user_ids: Sequence[str]
    session_ids: Sequence[str] = ()
    since: float | None = None
    until: float | None = None

    def admits(self, session: Session) -> bool:
        """Whether ``session``'s last update falls in the time range."""
        updated = session.last_update_time
        return (self.since is None or updated >= self.since) and (
            self.until is None or updated < self.until
        )


async def select_sessions(store: ConversationStore, selection: SessionSelection) -> list[Session]:
    """The chosen sessions with their events, by user then session id.

    Raises:
        SessionNotFoundError: A named session is not in the store for any given user.
        EvalSetError: No session matches.
    """
    chosen: list[Session] = []
    for user_id in selection.user_ids:
        listed = await store.list(selection.app_name, user_id)
        by_id = {s.id: s for s in listed}
        for session_id in selection.session_ids or sorted(by_id):
            if session_id in by_id and selection.admits(by_id[session_id]):
                chosen.append(await store.get(SessionKey(selection.app_name, user_id, session_id)))
    named = {s.id for s in chosen}
    absent = [s for s in selection.session_ids if s not in named]
    if absent and selection.since is None and selection.until is None:
        raise SessionNotFoundError(
            f"no session {', '.join(map(repr, absent))} of app {selection.app_name!r} for "
            f"user {', '.join(map(repr, selection.user_ids))}"
        )
    if not chosen:
        raise EvalSetError(
            f"no recorded session of app {selection.app_name!r} matches (users "
            f"{', '.join(map(repr, selection.user_ids))}); check --user and the time range"
        )
    return chosen


async def capture_eval_set(
    store: ConversationStore, sessions: Sequence[Session], *, eval_set_id: str
) -> EvalSet:
    """An eval set with one case per session (its turns as recorded), named by session id.

    Raises:
        EvalSetError: A session has no turn to capture.
    """
    cases = []
    for session in sessions:
        turns = session_invocations(session.events)
        if not turns:
            raise EvalSetError(f"session {session.key} has no user turn to capture")
        initial = await store.get_initial_state(session.key)
        cases.append(
            EvalCase(
                eval_id=session.id,
                conversation=turns,
                session_input=SessionInput(
                    app_name=session.app_name, user_id=session.user_id, state=initial
                ),
                creation_timestamp=turns[0].creation_timestamp,
            )
        )
    return EvalSet(
        eval_set_id=eval_set_id,
        name=eval_set_id,
        description=f"{len(cases)} recorded session(s), captured by adk-temporal",
        eval_cases=cases,
        creation_timestamp=time.time(),
    )
