"""What forgetting and retention ask of a session store beyond ``SessionService``.

Forget and retention (:mod:`adk_temporal.keys`) find an app's users and its idle sessions
and delete the state rows of a user or an app; the three built-in stores implement
:class:`ErasableStore`. A store without it can still forget one session (``delete``), but
not a user, an app, or by age.
"""

from __future__ import annotations

import builtins
from typing import Protocol, runtime_checkable

from ..ids import SessionKey

__all__ = ["ErasableStore"]


@runtime_checkable
class ErasableStore(Protocol):
    """Lists an app's users and idle sessions; deletes a user's or an app's state."""

    async def user_ids(self, app_name: str) -> builtins.list[str]:
        """Every user of ``app_name`` with a session or user state, sorted."""
        ...

    async def idle_sessions(
        self, app_name: str, before: float, limit: int
    ) -> builtins.list[tuple[SessionKey, float]]:
        """Sessions of ``app_name`` last updated before ``before`` (POSIX seconds), with
        that time, least recently updated first, at most ``limit``."""
        ...

    async def delete_scope_state(self, app_name: str, user_id: str | None) -> None:
        """Delete the user state of ``user_id``, or with ``None`` the app's state and
        every user state of the app; sessions are not touched."""
        ...
