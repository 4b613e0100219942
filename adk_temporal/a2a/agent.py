"""``RemoteA2aAgent``: an A2A agent elsewhere, as one of ours (ADK's ``RemoteA2aAgent``;
``google/adk/a2a/agent/_remote_a2a_agent.py`` in google-adk 2.13).

As in ADK, a turn sends what was said since the remote agent last replied, in a context that
keeps the conversation on the far side, and the remote task's reply becomes this agent's
event. Unlike ADK's, each turn is a durable step, and a question of the remote task
(``input-required``, ``auth-required``) pauses our invocation with a request carrying it
and its original call id; the answer goes back on the same remote task. ADK resumes such a
task only from the next message of a later invocation, once the session says it paused.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import timedelta

from ..agents import BaseAgent, RemoteAgent
from ..extras import needs_extra
from ..flow.remote import RemoteReply, RemoteTurn
from .errors import RemoteAgentConfigError

__all__ = ["RemoteA2aAgent"]


class RemoteA2aAgent(RemoteAgent):
    """A remote A2A agent, reached through its agent card.

    Args:
        name: The agent's name here (a Python identifier); the author of its replies.
        agent_card: The URL of its agent card, or the base URL its well-known card is under.
        description: One line other agents see (and transfer by); the card's is not read.
        token_env: An environment variable holding a bearer token for it, read on the
            worker at each call (never in history).
        headers: More HTTP headers sent with each call.
        timeout: How long one HTTP call may take.
        poll_interval: How often a task is read while it works and no stream is open.
        streaming: Follow its tasks over a stream when its card offers one.
        sub_agents: Must be empty: a remote agent's agents are its own.

    Raises:
        ValueError: Sub-agents are given, or the card URL is not http(s).
        MissingExtraError: The ``a2a`` extra is not installed.
    """

    def __init__(
        self,
        name: str,
        agent_card: str,
        *,
        description: str = "",
        token_env: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: timedelta = timedelta(seconds=30),
        poll_interval: timedelta = timedelta(milliseconds=500),
        streaming: bool = True,
        sub_agents: Iterable[BaseAgent] = (),
    ) -> None:
        with needs_extra("a2a", f"remote agent {name!r}"):
            import a2a.client  # noqa: F401
        super().__init__(name, description=description, sub_agents=sub_agents)
        if self.sub_agents:
            raise ValueError(f"remote agent {name!r} cannot have sub-agents of ours")
        if not agent_card.startswith(("http://", "https://")):
            raise ValueError(f"remote agent {name!r}: agent_card must be an http(s) URL")
        self.agent_card = agent_card
        self.token_env = token_env
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.streaming = streaming

    def http_headers(self) -> dict[str, str]:
        """The headers of each call: ``headers``, and the bearer token when one is set.

        Raises:
            RemoteAgentConfigError: ``token_env`` names a variable that is unset or empty.
        """
        sent = dict(self.headers)
        if self.token_env is not None:
            token = os.environ.get(self.token_env, "")
            if not token:
                raise RemoteAgentConfigError(
                    f"remote agent {self.name!r}: set {self.token_env} to its bearer token"
                )
            sent["Authorization"] = f"Bearer {token}"
        return sent

    async def exchange(self, turn: RemoteTurn) -> RemoteReply:
        """Send ``turn`` to the remote agent and follow its task (:mod:`.client`).

        Raises:
            RemoteAgentUnavailableError: The agent could not be reached (retried).
        """
        from .client import RemoteEndpoint, exchange

        endpoint = RemoteEndpoint(
            name=self.name,
            agent_card=self.agent_card,
            headers=self.http_headers(),
            timeout=self.timeout.total_seconds(),
            poll_interval=self.poll_interval.total_seconds(),
            streaming=self.streaming,
        )
        return await exchange(endpoint, turn)
