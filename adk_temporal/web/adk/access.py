"""Who may use ADK's routes: holders of the gateway's bearer tokens, or — in development
mode — any program on this machine, since ADK's client and dev UI send no credentials.

Development mode is only safe while nothing but this machine can reach the gateway, so it
refuses, besides a bind address that is not loopback (``adk-temporal web``), every request
from another address, every request naming another host (a DNS-rebinding page would name
its own), and every request a page of another origin sent (a page on any site can post to
a port on this machine; ADK's own server checks ``Origin`` the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request

from ...ports import is_loopback
from ..auth import TokenBook, bearer_token
from ..errors import ApiError

__all__ = ["LOCAL_PRINCIPAL", "AdkAccess"]

LOCAL_PRINCIPAL = "local"
"""Who answered, as recorded for an answer sent in development mode."""


def _host_name(authority: str) -> str:
    """The host of a ``Host`` header's ``host[:port]``."""
    return urlsplit(f"//{authority}").hostname or ""


@dataclass(frozen=True)
class AdkAccess:
    """The rule ADK's routes follow.

    Args:
        tokens: The gateway's bearer tokens and their apps.
        local_only: Development mode: no token asked, only this machine served.
    """

    tokens: TokenBook
    local_only: bool = False

    def authorize(self, request: Request, app: str | None) -> str:
        """Who the caller is (recorded with its answers), once it may use ``app`` (any app
        when ``None``).

        Raises:
            ApiError: 401/403 as the token rules say; in development mode, 403 for a
                request from, to or sent by a page of another host.
        """
        if not self.local_only:
            token = bearer_token(request)
            self.tokens.authorize(token, app)
            return self.tokens.principal(token or "")
        client = request.client.host if request.client else ""
        if not is_loopback(client):
            raise ApiError(403, "local_only", "development mode serves this machine only")
        host = request.headers.get("host", "")
        if not is_loopback(_host_name(host)):
            raise ApiError(
                403, "local_only", f"development mode answers requests to localhost, not {host!r}"
            )
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != host:
            raise ApiError(
                403,
                "cross_origin",
                f"a page of {origin!r} may not call this gateway in development mode",
            )
        return LOCAL_PRINCIPAL

    def groups(self, request: Request) -> list[str]:
        """The groups the tokens file puts the caller in (none in development mode)."""
        if self.local_only:
            return []
        return self.tokens.groups(bearer_token(request) or "")

    def visible(self, request: Request, names: list[str]) -> list[str]:
        """The app names of ``names`` the caller may use (all in development mode).

        Raises:
            ApiError: As :meth:`authorize`.
        """
        self.authorize(request, None)
        if self.local_only:
            return names
        scope = self.tokens.scope(bearer_token(request) or "") or frozenset()
        return [n for n in names if "*" in scope or n in scope]
