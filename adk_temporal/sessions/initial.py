"""Creating a session with initial state, as ADK's ``create_session(..., state=...)`` does.

The one place the client, the in-process runner, the gateway and the command line create a
session: the state is checked against the state budget before the store is touched, and an
id is made when none is given.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ..budgets import Budgets, check_budget
from ..ids import SessionKey
from .conversations import ConversationStore
from .session import Session

__all__ = ["create_session"]


async def create_session(
    store: ConversationStore,
    *,
    app_name: str,
    user_id: str,
    state: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    budgets: Budgets | None = None,
) -> Session:
    """Create a session of ``user_id`` in ``app_name`` holding ``state``.

    Args:
        store: The session store the workers read.
        app_name: The app.
        user_id: The user.
        state: Initial state, split by scope as an event's ``state_delta`` (``app:`` and
            ``user:`` keys go to the shared scopes, ``temp:`` keys are dropped).
        session_id: The new session's id; ``s-`` and 12 hex digits when ``None``.
        budgets: ``state_delta_bytes`` bounds the state (the defaults when ``None``).

    Returns:
        The new session, with no events.

    Raises:
        BudgetExceededError: The state is over ``state_delta_bytes`` (nothing is stored).
        UnencodableValueError: The state is not JSON (nothing is stored).
        InvalidSessionRequestError: An id is empty or breaks the id grammar.
        SessionExistsError: The session exists already (it is left as it was).
    """
    limits = budgets or Budgets()
    initial = dict(state or {})
    check_budget(initial, "the initial state", limits.state_delta_bytes, "state_delta_bytes")
    key = SessionKey(app_name, user_id, session_id or f"s-{uuid.uuid4().hex[:12]}")
    return await store.create(key, state=initial)
