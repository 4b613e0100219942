"""Bearer tokens, each scoped to apps, read from a file or an environment variable.

Two formats, told apart by the first character: a JSON object ``{"TOKEN": ["app1", "app2"]}``
(``"*"`` or ``["*"]`` for every app), or lines ``TOKEN app1,app2`` with ``#`` comments.
Tokens are kept only as SHA-256 digests, so a memory dump or a log of the book shows none,
and a lookup by digest takes the same time whatever the token's prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

from .errors import ApiError

__all__ = [
    "ALL_APPS",
    "MIN_TOKEN_CHARS",
    "Scope",
    "TokenBook",
    "TokenFileError",
    "allows",
    "bearer_token",
]

ALL_APPS = "*"
"""The scope entry that grants every app."""
MIN_TOKEN_CHARS = 16
"""Shorter tokens are refused when the book is read: they could be guessed."""

Scope = frozenset[str]
"""The app names a token may use (``{"*"}``: all)."""


class TokenFileError(ValueError):
    """A tokens file or variable is malformed; the message says where."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _apps(value: Any, where: str) -> Scope:
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TokenFileError(f"{where}: the apps must be a list of names or 'app1,app2'")
    apps = frozenset(n.strip() for n in names if n.strip())
    if not apps:
        raise TokenFileError(f"{where}: a token needs at least one app (or '*')")
    return apps


def _check_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenFileError(
            f"{where}: tokens need at least {MIN_TOKEN_CHARS} characters and no spaces"
        )
    return token


@dataclass(frozen=True)
class TokenBook:
    """Which apps each known token may use."""

    scopes: Mapping[str, Scope] = field(default_factory=dict)
    """Scope by SHA-256 hex digest of the token."""

    @classmethod
    def parse(cls, text: str, source: str) -> TokenBook:
        """Read a book in either format; ``source`` names it in error messages.

        Raises:
            TokenFileError: The text is malformed, a token is too short or given twice.
        """
        entries: list[tuple[str, Scope]] = []
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                loaded = json.loads(stripped)
            except json.JSONDecodeError as err:
                raise TokenFileError(f"{source}: not valid JSON ({err.msg})") from None
            for token, apps in loaded.items():
                where = f"{source}: token {len(entries) + 1}"
                entries.append((_check_token(token, where), _apps(apps, where)))
        else:
            for number, line in enumerate(text.splitlines(), 1):
                content = line.split("#", 1)[0].strip()
                if not content:
                    continue
                token, _, apps = content.partition(" ")
                where = f"{source}, line {number}"
                entries.append((_check_token(token, where), _apps(apps.strip(), where)))
        return cls.of(entries, source)

    @classmethod
    def of(cls, entries: Iterable[tuple[str, Scope]], source: str = "tokens") -> TokenBook:
        """A book of ``(token, apps)`` pairs.

        Raises:
            TokenFileError: A token is given twice.
        """
        scopes: dict[str, Scope] = {}
        for token, apps in entries:
            key = _digest(token)
            if key in scopes:
                raise TokenFileError(f"{source}: a token is listed twice")
            scopes[key] = apps
        return cls(scopes)

    def merged(self, other: TokenBook) -> TokenBook:
        """Both books' tokens.

        Raises:
            TokenFileError: A token is in both.
        """
        if self.scopes.keys() & other.scopes.keys():
            raise TokenFileError("a token is both in the tokens file and the variable")
        return TokenBook({**self.scopes, **other.scopes})

    def scope(self, token: str) -> Scope | None:
        """The apps ``token`` may use; ``None`` for an unknown token."""
        return self.scopes.get(_digest(token))

    def principal(self, token: str) -> str:
        """Who ``token`` is, for the limits kept per token (console sessions, event
        streams): a name that shows nothing of the token, never logged."""
        return "token:" + _digest(token)

    def authorize(self, token: str | None, app: str | None) -> Scope:
        """The token's scope, when it may use ``app`` (any app when ``None``).

        Raises:
            ApiError: 401 without a token or with an unknown one, 403 outside its scope.
        """
        challenge = {"WWW-Authenticate": 'Bearer realm="adk-temporal"'}
        if not token:
            raise ApiError(401, "unauthenticated", "send 'Authorization: Bearer TOKEN'", challenge)
        scope = self.scope(token)
        if scope is None:
            raise ApiError(401, "unauthenticated", "the token is not known", challenge)
        if app is not None and not allows(scope, app):
            raise ApiError(403, "forbidden", f"the token may not use app {app!r}")
        return scope


def allows(scope: Scope, app: str) -> bool:
    """Whether a token of ``scope`` may use ``app``."""
    return ALL_APPS in scope or app in scope


def bearer_token(connection: HTTPConnection) -> str | None:
    """The token of an ``Authorization: Bearer`` header; never read from the query string,
    which access logs print."""
    scheme, _, token = connection.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
