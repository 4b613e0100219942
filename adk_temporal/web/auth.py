"""Bearer tokens, each scoped to apps and naming who holds it, read from a file or an
environment variable.

Two formats, told apart by the first character: a JSON object ``{"TOKEN": ["app1", "app2"]}``
(``"*"`` or ``["*"]`` for every app) or ``{"TOKEN": {"apps": [...], "principal": "alice",
"groups": ["finance"]}}``, or lines ``TOKEN app1,app2`` with ``#`` comments, optionally
followed by ``principal=alice groups=finance,ops``. The principal is who an answer sent with
the token is recorded as (``token:<sha256>`` when none is named); the groups are what an
approval policy's approvers may name. Tokens are kept only as SHA-256 digests, so a memory
dump or a log of the book shows none, and a lookup by digest takes the same time whatever
the token's prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

from ..approvals import InvalidPolicyError
from ..approvals.names import check_name
from .errors import ApiError

__all__ = [
    "ALL_APPS",
    "MIN_TOKEN_CHARS",
    "Holder",
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


@dataclass(frozen=True)
class Holder:
    """Who a token names: the principal its answers are recorded as (``None``: the token's
    digest stands for it) and the groups approval policies may name."""

    principal: str | None = None
    groups: frozenset[str] = frozenset()


_IDENTITY_FIELDS = ("principal", "groups")


def _holder(fields: Mapping[str, Any], where: str) -> Holder:
    unknown = set(fields) - set(_IDENTITY_FIELDS)
    if unknown:
        raise TokenFileError(
            f"{where}: unknown field {', '.join(sorted(unknown))}; a token may name "
            "principal and groups"
        )
    principal = fields.get("principal")
    groups = fields.get("groups", [])
    names = groups.split(",") if isinstance(groups, str) else groups
    try:
        if principal is not None:
            check_name(principal if isinstance(principal, str) else "", "the principal")
        if not isinstance(names, list):
            raise InvalidPolicyError("the groups must be a list of names or 'g1,g2'")
        clean = frozenset(check_name(str(g).strip(), "a group") for g in names if str(g).strip())
    except InvalidPolicyError as err:
        raise TokenFileError(f"{where}: {err}") from None
    return Holder(principal, clean)


def _line_entry(content: str, where: str) -> tuple[str, Scope, Holder]:
    """One line ``TOKEN app1,app2 [principal=NAME] [groups=g1,g2]``."""
    token, _, rest = content.partition(" ")
    apps: list[str] = []
    fields: dict[str, str] = {}
    for word in rest.split():
        key, equals, value = word.partition("=")
        if equals:
            fields[key] = value
        else:
            apps.append(word)
    return _check_token(token, where), _apps(" ".join(apps), where), _holder(fields, where)


def _json_entry(token: str, value: Any, where: str) -> tuple[str, Scope, Holder]:
    """One JSON entry: the apps, or an object of apps, principal and groups."""
    if isinstance(value, dict):
        fields = dict(value)
        apps = fields.pop("apps", None)
        return _check_token(token, where), _apps(apps, where), _holder(fields, where)
    return _check_token(token, where), _apps(value, where), Holder()


def _check_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenFileError(
            f"{where}: tokens need at least {MIN_TOKEN_CHARS} characters and no spaces"
        )
    return token


@dataclass(frozen=True)
class TokenBook:
    """Which apps each known token may use, and who holds it."""

    scopes: Mapping[str, Scope] = field(default_factory=dict)
    """Scope by SHA-256 hex digest of the token."""
    holders: Mapping[str, Holder] = field(default_factory=dict)
    """Who holds each token, by digest (a token naming nobody is absent)."""

    @classmethod
    def parse(cls, text: str, source: str) -> TokenBook:
        """Read a book in either format; ``source`` names it in error messages.

        Raises:
            TokenFileError: The text is malformed, a token is too short or given twice, or
                a principal or group is not a usable name.
        """
        entries: list[tuple[str, Scope, Holder]] = []
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                loaded = json.loads(stripped)
            except json.JSONDecodeError as err:
                raise TokenFileError(f"{source}: not valid JSON ({err.msg})") from None
            for token, value in loaded.items():
                entries.append(_json_entry(token, value, f"{source}: token {len(entries) + 1}"))
        else:
            for number, line in enumerate(text.splitlines(), 1):
                content = line.split("#", 1)[0].strip()
                if content:
                    entries.append(_line_entry(content, f"{source}, line {number}"))
        return cls.of(entries, source)

    @classmethod
    def of(
        cls,
        entries: Iterable[tuple[str, Scope] | tuple[str, Scope, Holder]],
        source: str = "tokens",
    ) -> TokenBook:
        """A book of ``(token, apps)`` or ``(token, apps, holder)`` entries.

        Raises:
            TokenFileError: A token is given twice.
        """
        scopes: dict[str, Scope] = {}
        holders: dict[str, Holder] = {}
        for token, apps, *holder in entries:
            key = _digest(token)
            if key in scopes:
                raise TokenFileError(f"{source}: a token is listed twice")
            scopes[key] = apps
            if holder and holder[0] != Holder():
                holders[key] = holder[0]
        return cls(scopes, holders)

    def merged(self, other: TokenBook) -> TokenBook:
        """Both books' tokens.

        Raises:
            TokenFileError: A token is in both.
        """
        if self.scopes.keys() & other.scopes.keys():
            raise TokenFileError("a token is both in the tokens file and the variable")
        return TokenBook({**self.scopes, **other.scopes}, {**self.holders, **other.holders})

    def scope(self, token: str) -> Scope | None:
        """The apps ``token`` may use; ``None`` for an unknown token."""
        return self.scopes.get(_digest(token))

    def principal(self, token: str) -> str:
        """Who ``token`` is: the principal the book names for it, else a name that shows
        nothing of the token (``token:<sha256>``). Answers sent with the token are recorded
        as this; the limits kept per token (console sessions, event streams) count it."""
        key = _digest(token)
        holder = self.holders.get(key)
        return holder.principal if holder is not None and holder.principal else "token:" + key

    def groups(self, token: str) -> list[str]:
        """The groups the book puts ``token``'s holder in, sorted (empty when none)."""
        holder = self.holders.get(_digest(token))
        return sorted(holder.groups) if holder is not None else []

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
