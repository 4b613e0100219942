"""Console sign-in sessions and their CSRF tokens.

A browser gets an opaque random id in an HttpOnly, SameSite=Strict cookie; signing in with
a bearer token binds a *new* id to that token's scope (the old id cannot be planted
beforehand). Every console form carries ``csrf = HMAC(server key, id)``, a synchronizer
token that needs no storage; a POST whose token does not match its cookie is refused with
403. Sessions live in this process: a restarted gateway asks to sign in again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

from starlette.requests import HTTPConnection
from starlette.responses import Response

from ..signing import same_text
from .auth import Scope
from .errors import ApiError

__all__ = ["COOKIE", "CSRF_FIELD", "ConsoleSessions", "set_session_cookie"]

COOKIE = "adk_console"
"""The cookie holding the browser's session id."""
CSRF_FIELD = "csrf"
"""The form field holding the CSRF token."""
_LIFETIME_SECONDS = 12 * 3600
_MAX_SESSIONS = 10_000


@dataclass
class ConsoleSessions:
    """The signed-in browsers of one gateway process."""

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    _signed_in: dict[str, tuple[Scope, float]] = field(default_factory=dict)

    @staticmethod
    def new_id() -> str:
        """A fresh, unguessable session id."""
        return secrets.token_urlsafe(32)

    @staticmethod
    def cookie_id(connection: HTTPConnection) -> str | None:
        """The session id the browser sent."""
        return connection.cookies.get(COOKIE) or None

    def csrf_token(self, session_id: str) -> str:
        """The CSRF token of the forms shown to ``session_id``."""
        return hmac.new(self.key, session_id.encode(), hashlib.sha256).hexdigest()

    def check_csrf(self, session_id: str | None, token: str | None) -> None:
        """Return quietly when ``token`` belongs to ``session_id``.

        Raises:
            ApiError: 403 without a session cookie, without a token, or with another one.
        """
        if not session_id or not token:
            raise ApiError(403, "csrf", "the form has no CSRF token; reload the page")
        if not same_text(token, self.csrf_token(session_id)):
            raise ApiError(403, "csrf", "the form's CSRF token does not match; reload the page")

    def sign_in(self, scope: Scope, now: float | None = None) -> str:
        """A new session id bound to ``scope``."""
        now = time.time() if now is None else now
        if len(self._signed_in) >= _MAX_SESSIONS:
            del self._signed_in[next(iter(self._signed_in))]  # the oldest
        session_id = self.new_id()
        self._signed_in[session_id] = (scope, now)
        return session_id

    def scope(self, session_id: str | None, now: float | None = None) -> Scope | None:
        """The scope ``session_id`` signed in with; ``None`` when not (or no longer)."""
        if not session_id or session_id not in self._signed_in:
            return None
        scope, since = self._signed_in[session_id]
        if (time.time() if now is None else now) - since > _LIFETIME_SECONDS:
            del self._signed_in[session_id]
            return None
        return scope

    def sign_out(self, session_id: str | None) -> None:
        """Forget ``session_id``."""
        self._signed_in.pop(session_id or "", None)


def set_session_cookie(response: Response, session_id: str, secure: bool) -> None:
    """Give the browser ``session_id`` (never readable by scripts, never sent cross-site)."""
    response.set_cookie(
        COOKIE, session_id, httponly=True, samesite="strict", secure=secure, path="/"
    )
