"""Retention: forget an app's sessions that stayed idle longer than the app keeps them.

An app keeps its sessions for ``App.retention`` (``None``: for ever). :func:`sweep` lists
the sessions last updated before that — oldest first, a bounded batch per sweep — skips
those whose run is still open (a run waiting for an approval is not idle, however old), and
forgets the rest one by one, each a forget-log entry by ``retention``. A dry run lists the
same sessions and deletes nothing. On Temporal a schedule runs it (``adk_retention``,
``adk-temporal retention schedule``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field

from ..artifacts import ArtifactService
from ..ids import SessionKey
from ..sessions import ErasableStore, SessionService
from .datakeys import DataKeys
from .forgetting import CannotForgetError, forget
from .scopes import Target

__all__ = ["DEFAULT_SWEEP_LIMIT", "IdleSession", "RetentionReport", "SweepRequest", "sweep"]

DEFAULT_SWEEP_LIMIT = 500
"""Sessions one sweep looks at, at most; the next sweep takes the rest."""


class SweepRequest(BaseModel):
    """One sweep asked of an app's workers (the input of ``adk_retention``)."""

    app_name: str
    dry_run: bool = False
    limit: int = Field(default=DEFAULT_SWEEP_LIMIT, ge=1, le=10_000)


class IdleSession(BaseModel):
    """A session past the retention limit, as a sweep lists it."""

    session: str
    """``app/user/session``."""
    last_update: float
    """When it last changed (POSIX seconds)."""
    outcome: str
    """``forgotten``, ``would_forget`` (dry run) or ``kept: <why>``."""


class RetentionReport(BaseModel):
    """What one sweep did."""

    app_name: str
    retention_days: float | None
    """The app's retention in days; ``None``: the app keeps sessions for ever."""
    cutoff: float | None = None
    """Sessions last updated before this (POSIX seconds) are past the limit."""
    dry_run: bool = False
    sessions: list[IdleSession] = Field(default_factory=list)

    @property
    def forgotten(self) -> list[str]:
        """The sessions forgotten (or, in a dry run, that would be)."""
        return [s.session for s in self.sessions if not s.outcome.startswith("kept")]


async def sweep(
    app_name: str,
    *,
    retention: timedelta | None,
    keys: DataKeys,
    sessions: SessionService,
    artifacts: ArtifactService | None,
    run_is_open: Callable[[SessionKey], Awaitable[bool]],
    dry_run: bool = False,
    limit: int = DEFAULT_SWEEP_LIMIT,
    clock: Callable[[], float] = time.time,
) -> RetentionReport:
    """Forget ``app_name``'s sessions idle longer than ``retention`` (see the module).

    Args:
        app_name: The app.
        retention: How long the app keeps an idle session; ``None`` forgets nothing.
        keys: The deployment's data keys.
        sessions: The session store (an :class:`~adk_temporal.sessions.ErasableStore`).
        artifacts: The artifact store, or ``None``.
        run_is_open: Whether a session has a run still open (such sessions are kept).
        dry_run: List the sessions, forget none.
        limit: Look at this many sessions at most.
        clock: POSIX seconds.

    Returns:
        Each session past the limit and what became of it.

    Raises:
        CannotForgetError: The session store cannot list idle sessions.
    """
    if retention is None:
        return RetentionReport(app_name=app_name, retention_days=None, dry_run=dry_run)
    if not isinstance(sessions, ErasableStore):
        raise CannotForgetError(f"{type(sessions).__name__} cannot list idle sessions")
    now = clock()
    cutoff = now - retention.total_seconds()
    days = retention.total_seconds() / 86400
    report = RetentionReport(app_name=app_name, retention_days=days, cutoff=cutoff, dry_run=dry_run)
    for key, updated in await sessions.idle_sessions(app_name, cutoff, limit):
        if await run_is_open(key):
            outcome = "kept: a run is open"
        elif dry_run:
            outcome = "would_forget"
        else:
            outcome = await _forget_idle(key, updated, days, keys, sessions, artifacts, clock)
        report.sessions.append(IdleSession(session=str(key), last_update=updated, outcome=outcome))
    return report


async def _forget_idle(
    key: SessionKey,
    updated: float,
    days: float,
    keys: DataKeys,
    sessions: SessionService,
    artifacts: ArtifactService | None,
    clock: Callable[[], float],
) -> str:
    since = datetime.fromtimestamp(updated, UTC).strftime("%Y-%m-%d")
    try:
        await forget(
            Target(app_name=key.app_name, user_id=key.user_id, session_id=key.session_id),
            keys=keys,
            sessions=sessions,
            artifacts=artifacts,
            by="retention",
            channel="retention",
            reason=f"retention: idle since {since}, the app keeps sessions {days:g} days",
            clock=clock,
        )
    except CannotForgetError as err:
        # Keys per user or app: one session cannot be erased alone; said, not failed.
        return f"kept: {err}"
    return "forgotten"
