"""The errors of calling a remote A2A agent."""

from __future__ import annotations

from ..errors import AdkRequestError, AdkRunError

__all__ = ["RemoteAgentConfigError", "RemoteAgentUnavailableError"]


class RemoteAgentUnavailableError(AdkRunError):
    """A remote A2A agent could not be reached, or its card read; the step is retried."""


class RemoteAgentConfigError(AdkRequestError, ValueError):
    """A remote A2A agent is configured in a way no retry can fix (an unset token
    variable); its step fails at once."""
