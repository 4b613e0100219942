"""Console sign-in sessions and their CSRF tokens.

A browser gets an opaque random id in an HttpOnly, SameSite=Strict cookie; signing in with
a bearer token binds a *new* id to that token's scope (the old id cannot be planted
beforehand). Every console form carries ``csrf = HMAC(server key, id)``, a synchronizer
token that needs no storage; a POST whose token does not match its cookie is refused with
403. Sessions live in this process: a restarted gateway asks to sign in again. The cookie
is ``Secure`` when the request came over TLS, directly or through a trusted proxy.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from starlette.requests import HTTPConnection
from starlette.responses import Response

from ..signing import same_text
from .auth import Scope
from .errors import ApiError

__all__ = [
    "COOKIE",
    "CSRF_FIELD",
    "MAX_SESSIONS",
    "MAX_SESSIONS_PER_PRINCIPAL",
    "ConsoleSessions",
    "principal_of_scope",
    "secure_connection",
    "set_session_cookie",
]

COOKIE = "adk_console"
"""The cookie holding the browser's session id."""
CSRF_FIELD = "csrf"
"""The form field holding the CSRF token."""
_LIFETIME_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000
"""Signed-in browsers kept in all."""
MAX_SESSIONS_PER_PRINCIPAL = 1_000
"""Signed-in browsers kept per principal (token): its own oldest go first."""


def principal_of_scope(scope: Scope) -> str:
    """The principal of a sign-in that names none: its scope (tokens of one scope share)."""
    return "scope:" + ",".join(sorted(scope))


@dataclass(frozen=True)
class _SignedIn:
    scope: Scope
    principal: str
    since: float
    groups: tuple[str, ...] = ()


@dataclass
class ConsoleSessions:
    """The signed-in browsers of one gateway process.

    Bounded per principal and in all: any valid token (another app's too) may sign in as
    often as it likes, so a cap shared by everyone would let one token's flood sign every
    other browser out. A principal over its cap loses its own oldest session; a gateway
    over its cap takes the oldest session of the principal holding the most.
    """

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    most: int = MAX_SESSIONS
    """Sessions kept in all."""
    most_per_principal: int = MAX_SESSIONS_PER_PRINCIPAL
    """Sessions kept per principal."""
    _signed_in: dict[str, _SignedIn] = field(default_factory=dict, init=False, repr=False)
    """Every session, oldest first."""
    _by_principal: dict[str, dict[str, None]] = field(default_factory=dict, init=False, repr=False)
    """Each principal's session ids, oldest first."""

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

    def sign_in(
        self,
        scope: Scope,
        now: float | None = None,
        *,
        principal: str | None = None,
        groups: Sequence[str] = (),
    ) -> str:
        """A new session id bound to ``scope``, counted against ``principal`` (the token
        signing in; by default :func:`principal_of_scope`), in the token's ``groups``."""
        now = time.time() if now is None else now
        principal = principal_of_scope(scope) if principal is None else principal
        self._expire(now)
        own = self._by_principal.get(principal, {})
        while own and len(own) >= self.most_per_principal:
            self._forget(next(iter(own)))
        while self._signed_in and len(self._signed_in) >= self.most:
            biggest = max(self._by_principal.values(), key=len)
            self._forget(next(iter(biggest)))
        session_id = self.new_id()
        self._signed_in[session_id] = _SignedIn(scope, principal, now, tuple(groups))
        self._by_principal.setdefault(principal, {})[session_id] = None
        return session_id

    def scope(self, session_id: str | None, now: float | None = None) -> Scope | None:
        """The scope ``session_id`` signed in with; ``None`` when not (or no longer)."""
        signed = self._current(session_id, now)
        return None if signed is None else signed.scope

    def principal(self, session_id: str | None, now: float | None = None) -> str | None:
        """The principal ``session_id`` signed in as; ``None`` when not (or no longer)."""
        signed = self._current(session_id, now)
        return None if signed is None else signed.principal

    def groups(self, session_id: str | None, now: float | None = None) -> list[str]:
        """The groups of the token ``session_id`` signed in with (empty when not signed in)."""
        signed = self._current(session_id, now)
        return [] if signed is None else list(signed.groups)

    def sign_out(self, session_id: str | None) -> None:
        """Forget ``session_id``."""
        self._forget(session_id or "")

    def _current(self, session_id: str | None, now: float | None) -> _SignedIn | None:
        signed = self._signed_in.get(session_id or "")
        if signed is None:
            return None
        if (time.time() if now is None else now) - signed.since > _LIFETIME_SECONDS:
            self._forget(session_id or "")
            return None
        return signed

    def _expire(self, now: float) -> None:
        """Forget the sessions past their lifetime (the oldest come first)."""
        while self._signed_in:
            session_id, signed = next(iter(self._signed_in.items()))
            if now - signed.since <= _LIFETIME_SECONDS:
                return
            self._forget(session_id)

    def _forget(self, session_id: str) -> None:
        signed = self._signed_in.pop(session_id, None)
        if signed is None:
            return
        own = self._by_principal[signed.principal]
        del own[session_id]
        if not own:
            del self._by_principal[signed.principal]


def secure_connection(connection: HTTPConnection) -> bool:
    """Whether ``connection`` came over TLS: its own scheme, or the one a trusted proxy
    forwarded (uvicorn rewrites the scheme from ``X-Forwarded-Proto`` only for the proxies
    ``web --forwarded-allow-ips`` names)."""
    return connection.url.scheme in ("https", "wss")


def set_session_cookie(response: Response, session_id: str, connection: HTTPConnection) -> None:
    """Give the browser ``session_id`` (never readable by scripts, never sent cross-site,
    only over TLS when ``connection`` came over TLS)."""
    response.set_cookie(
        COOKIE,
        session_id,
        httponly=True,
        samesite="strict",
        secure=secure_connection(connection),
        path="/",
    )
