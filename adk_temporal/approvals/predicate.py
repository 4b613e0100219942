"""A small, safe predicate language over a call's arguments: what a standing grant covers.

``amount <= 50``, ``currency == "EUR" and amount < 100``, ``to in ["alice", "bob"]``,
``not (order.kind == "refund")``. Names are argument paths (``order.kind``); literals are
numbers, double-quoted strings, ``true``, ``false``, ``null`` and lists of them; the
operators are ``== != < <= > >= in``, ``and``, ``or``, ``not`` and parentheses. It is
parsed by hand and evaluated over plain values: nothing is ever passed to ``eval``, and a
predicate is bounded in length and nesting.

A call is covered only when the predicate is true for it. A missing argument, or a
comparison of values of different kinds (a string with a number), makes the whole
predicate false, ``not`` included: a grant never covers a call by accident.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InvalidPolicyError

__all__ = ["MAX_PREDICATE_CHARS", "Predicate"]

MAX_PREDICATE_CHARS = 500
"""The longest predicate text."""

_MAX_DEPTH = 20

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
      | (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<op><=|>=|==|!=|<|>|\(|\)|\[|\]|,)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}


class _Mismatch(Exception):
    """A value is missing or of another kind than the comparison needs."""


Node = Callable[[Mapping[str, Any]], Any]


def _path(name: str) -> Node:
    def read(args: Mapping[str, Any]) -> Any:
        value: Any = args
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise _Mismatch(name)
            value = value[part]
        return value

    return read


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "in":
        if not isinstance(right, list):
            raise _Mismatch(op)
        return any(_compare("==", left, item) for item in right)
    if op in ("==", "!="):
        same_kind = (_number(left) and _number(right)) or type(left) is type(right)
        if not same_kind:
            raise _Mismatch(op)
        return bool(left == right) == (op == "==")
    comparable = (_number(left) and _number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    )
    if not comparable:
        raise _Mismatch(op)
    return bool(
        {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    )


class _Parser:
    def __init__(self, text: str) -> None:
        self._tokens = _tokens(text)
        self._at = 0

    def _peek(self) -> str | None:
        return self._tokens[self._at][1] if self._at < len(self._tokens) else None

    def _take(self, expected: str | None = None, what: str = "more") -> tuple[str, str]:
        if self._at >= len(self._tokens):
            raise InvalidPolicyError(f"the predicate ends early (expected {expected or what})")
        kind, text = self._tokens[self._at]
        if expected is not None and text != expected:
            raise InvalidPolicyError(f"the predicate has {text!r} where {expected!r} belongs")
        self._at += 1
        return kind, text

    def parse(self) -> Node:
        node = self._or(0)
        if self._at != len(self._tokens):
            raise InvalidPolicyError(f"the predicate goes on after its end: {self._peek()!r}")
        return node

    def _or(self, depth: int) -> Node:
        if depth > _MAX_DEPTH:
            raise InvalidPolicyError(f"the predicate nests deeper than {_MAX_DEPTH} levels")
        terms = [self._and(depth)]
        while self._peek() == "or":
            self._take()
            terms.append(self._and(depth))
        return terms[0] if len(terms) == 1 else lambda a: any(_truth(t(a)) for t in terms)

    def _and(self, depth: int) -> Node:
        terms = [self._not(depth)]
        while self._peek() == "and":
            self._take()
            terms.append(self._not(depth))
        return terms[0] if len(terms) == 1 else lambda a: all(_truth(t(a)) for t in terms)

    def _not(self, depth: int) -> Node:
        if self._peek() == "not":
            self._take()
            inner = self._not(depth + 1)
            return lambda a: not _truth(inner(a))
        return self._comparison(depth)

    def _comparison(self, depth: int) -> Node:
        left = self._value(depth)
        if self._peek() not in ("==", "!=", "<", "<=", ">", ">=", "in"):
            return left
        _, op = self._take()
        right = self._value(depth)
        return lambda a: _compare(op, left(a), right(a))

    def _value(self, depth: int) -> Node:
        kind, text = self._take(what="a value")
        if text == "(":
            inner = self._or(depth + 1)
            self._take(")")
            return inner
        if text == "[":
            return self._list(depth)
        return _literal(kind, text)

    def _list(self, depth: int) -> Node:
        items: list[Node] = []
        while self._peek() != "]":
            items.append(self._value(depth + 1))
            if self._peek() != "]":
                self._take(",")
        self._take("]")
        return lambda a: [item(a) for item in items]


def _literal(kind: str, text: str) -> Node:
    if kind == "number":
        value: Any = json.loads(text)
    elif kind == "string":
        value = json.loads(text)
    elif text in _CONSTANTS:
        value = _CONSTANTS[text]
    elif kind == "name" and text not in _KEYWORDS:
        return _path(text)
    else:
        raise InvalidPolicyError(f"the predicate has {text!r} where a value belongs")
    return lambda _: value


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Mismatch("not a condition")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        found = _TOKEN.match(text, at)
        if found is None or found.lastgroup is None:
            raise InvalidPolicyError(f"the predicate cannot be read at {text[at : at + 20]!r}")
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        at = found.end()
    if not tokens:
        raise InvalidPolicyError("the predicate is empty")
    return tokens


@dataclass(frozen=True)
class Predicate:
    """A parsed predicate; :meth:`covers` evaluates it over a call's arguments."""

    text: str
    _node: Node

    @classmethod
    def parse(cls, text: str) -> Predicate:
        """Parse ``text``.

        Raises:
            InvalidPolicyError: The text is longer than :data:`MAX_PREDICATE_CHARS`, nests
                too deep, or is not a predicate (the message says where).
        """
        if len(text) > MAX_PREDICATE_CHARS:
            raise InvalidPolicyError(
                f"the predicate is {len(text)} characters, over {MAX_PREDICATE_CHARS}"
            )
        try:
            return cls(text, _Parser(text).parse())
        except ValueError as err:  # json's reading of a string literal
            if isinstance(err, InvalidPolicyError):
                raise
            raise InvalidPolicyError(f"the predicate has a malformed literal: {err}") from None

    def covers(self, args: Mapping[str, Any]) -> bool:
        """Whether the predicate is true for ``args``; false on any missing value or
        mismatched kinds."""
        try:
            return _truth(self._node(args))
        except (_Mismatch, RecursionError):
            return False
