"""Agent-to-agent over A2A, durable on both sides.

Serving: ``adk-temporal web --a2a`` makes each agent of the served app an A2A agent (card,
JSON-RPC endpoint; :mod:`.routes`). A task is one invocation and its context the session
(:mod:`.tasks`); every call reads the task from Temporal and the session store
(:mod:`.handler`), so any gateway process answers for it after any restart. A pause is
``input-required`` (``auth-required`` for credentials) with each open request as a data
part (:mod:`.wire`), and the client's next message on the task answers it through the
answer desk (:mod:`.answers`).

Calling: :class:`RemoteA2aAgent` is a remote A2A agent used as a sub-agent or an agent
tool; each turn is a durable remote step (:mod:`.client`), and a question of its task
becomes a request of ours, answered back on the same remote task (the flow's side:
:mod:`adk_temporal.flow.remote`).

Needs the ``a2a`` extra: ``pip install 'adk-temporal[a2a]'``.
"""

from __future__ import annotations

from .agent import RemoteA2aAgent
from .credentials import request_credential
from .errors import RemoteAgentConfigError, RemoteAgentUnavailableError

__all__ = [
    "RemoteA2aAgent",
    "RemoteAgentConfigError",
    "RemoteAgentUnavailableError",
    "request_credential",
]
