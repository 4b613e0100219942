"""Forgetting a session, a user or an app: rows, artifacts and data keys, then a log entry.

:func:`forget` deletes what the stores hold of the target — each session's rows and
artifacts; for a user or an app also the user-scoped artifacts and the user (and app) state
— then the target's data keys, and records who asked, why and what went. With the keys
gone, whatever copy of the target's data survives elsewhere (Temporal history, a backup,
artifact bytes a bucket kept) no longer opens. It is engine-neutral: a caller on Temporal
first cancels the target's open runs (``AdkClient.forget``), so no step writes the data
back while it goes. Forgetting again, or what holds nothing, deletes nothing and is still
logged.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from ..artifacts import ArtifactService, DeleteRequest, ListRequest
from ..artifacts.requests import USER_SCOPE_PREFIX
from ..errors import AdkRequestError
from ..ids import SessionKey
from ..sessions import ErasableStore, SessionService
from .datakeys import DataKeys
from .scopes import Target
from .store import ForgetEntry

__all__ = ["MAX_REASON_CHARS", "CannotForgetError", "forget", "sessions_of"]

MAX_REASON_CHARS = 1000
"""The longest reason (and name of who asks) the forget log takes."""

_LEVELS = {"session": 0, "user": 1, "app": 2}
# A session id no store holds: listing an artifact store for it shows the user's names only.
_NO_SESSION = "_"


class CannotForgetError(AdkRequestError):
    """A forget cannot keep its promise as asked; nothing was deleted.

    Data keys wider than the target (one key per app, forgetting a session), a store that
    cannot list a user's or app's sessions, or a missing reason.
    """


def _check(target: Target, keys: DataKeys, sessions: SessionService, by: str, reason: str) -> None:
    if not by.strip() or not reason.strip():
        raise CannotForgetError("a forget needs who asks (by) and why (reason), for the log")
    if len(reason) > MAX_REASON_CHARS or len(by) > MAX_REASON_CHARS:
        raise CannotForgetError(
            f"the reason and who asks are at most {MAX_REASON_CHARS} characters each (the "
            f"reason has {len(reason)}): name a ticket rather than quote it"
        )
    if _LEVELS[keys.level] > _LEVELS[target.level]:
        raise CannotForgetError(
            f"data keys are per {keys.level}, so forgetting {target.level} {target.scope} "
            f"alone cannot erase its payloads from history; forget the whole {keys.level}, "
            "or use finer data keys (data_keys.level in the key file)"
        )
    if target.level != "session" and not isinstance(sessions, ErasableStore):
        raise CannotForgetError(
            f"{type(sessions).__name__} cannot list a {target.level}'s sessions; forget "
            "them one by one"
        )


async def sessions_of(target: Target, sessions: SessionService, keys: DataKeys) -> list[SessionKey]:
    """Every session the target covers: those the store holds, and those only the key
    store still knows (their rows already gone)."""
    if target.level == "session":
        return [target.session_key()]
    found: set[SessionKey] = set()
    for scope in await asyncio.to_thread(keys.store.scopes, target.scope):
        parts = scope.split("/")
        if len(parts) == 3:
            found.add(SessionKey(*parts))
    users = [target.user_id] if target.user_id is not None else []
    if target.user_id is None:
        assert isinstance(sessions, ErasableStore)  # _check
        users = await sessions.user_ids(target.app_name)
    for user in users:
        found.update(
            SessionKey(target.app_name, user, s.id)
            for s in await sessions.list(target.app_name, user)
        )
    return sorted(found)


async def _delete_artifacts(
    artifacts: ArtifactService, key: SessionKey, *, user_scope: bool
) -> int:
    listed = await artifacts.list(ListRequest.of(key))
    names = [n for n in listed.file_names if n.startswith(USER_SCOPE_PREFIX) == user_scope]
    for name in names:
        await artifacts.delete(DeleteRequest.of(key, file_name=name, version=0))
    return len(names)


async def _delete_user_scopes(
    target: Target,
    covered: Sequence[SessionKey],
    artifacts: ArtifactService | None,
    sessions: SessionService,
) -> int:
    """Delete the user-scoped artifacts and state of every user the target covers."""
    users = {k.user_id for k in covered}
    if target.user_id is not None:
        users.add(target.user_id)
    deleted = 0
    for user in sorted(users):
        if artifacts is not None:
            key = SessionKey(target.app_name, user, _NO_SESSION)
            deleted += await _delete_artifacts(artifacts, key, user_scope=True)
    if isinstance(sessions, ErasableStore):
        await sessions.delete_scope_state(target.app_name, target.user_id)
    return deleted


async def forget(
    target: Target,
    *,
    keys: DataKeys,
    sessions: SessionService,
    artifacts: ArtifactService | None,
    by: str,
    reason: str,
    channel: str = "library",
    runs_cancelled: Sequence[str] = (),
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> ForgetEntry:
    """Forget ``target``: its rows, artifacts and data keys, logged as one entry.

    Args:
        target: A session, a user or an app.
        keys: The deployment's data keys (the key store holds the log too).
        sessions: The session store.
        artifacts: The artifact store; ``None`` when the deployment has none.
        by: Who asks, as their channel authenticated them.
        reason: Why (a request reference, "retention: idle 90 days").
        channel: How the request came: ``cli``, ``gateway``, ``retention``, ``library``.
        runs_cancelled: Runs of the target the caller cancelled first, for the log.
        dry_run: List what would go, delete and log nothing.
        clock: POSIX seconds, stamped on the entry.

    Returns:
        The log entry (``outcome="dry_run"`` for a dry run, which is not logged).

    Raises:
        InvalidIdError: An id of the target breaks the id grammar.
        CannotForgetError: See the class; nothing was deleted.
    """
    target.check()
    _check(target, keys, sessions, by, reason)
    covered = await sessions_of(target, sessions, keys)
    entry = ForgetEntry(
        at=clock(),
        target=target.scope,
        level=target.level,
        by=by,
        channel=channel,
        reason=reason,
        sessions=[str(k) for k in covered],
        runs_cancelled=list(runs_cancelled),
        key_ids=[],
        outcome="dry_run" if dry_run else "forgotten",
    )
    if dry_run:
        return entry
    for key in covered:
        if artifacts is not None:
            entry.artifacts += await _delete_artifacts(artifacts, key, user_scope=False)
        await sessions.delete(key)
    if target.level != "session":
        entry.artifacts += await _delete_user_scopes(target, covered, artifacts, sessions)
    # The store's calls block (a file lock, a database round trip): off the event loop.
    entry.key_ids = [k.key_id for k in await asyncio.to_thread(keys.forget, target.scope)]
    await asyncio.to_thread(keys.store.record, entry)
    return entry
