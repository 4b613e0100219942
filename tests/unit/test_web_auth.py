"""Bearer tokens: the file formats, scopes, and the refusals (401 / 403)."""

from __future__ import annotations

import pytest

from adk_temporal.web.auth import TokenBook, TokenFileError
from adk_temporal.web.errors import ApiError

A = "a" * 20
B = "b" * 20


def test_lines_format_with_comments_and_wildcard() -> None:
    book = TokenBook.parse(f"# ops\n{A} weather, travel\n\n{B} *  # admin\n", "tokens.txt")
    assert book.scope(A) == frozenset({"weather", "travel"})
    assert book.scope(B) == frozenset({"*"})
    assert book.scope("c" * 20) is None


def test_json_format() -> None:
    book = TokenBook.parse(f'{{"{A}": ["weather"], "{B}": "*"}}', "tokens.json")
    assert book.scope(A) == frozenset({"weather"})
    assert book.scope(B) == frozenset({"*"})


def test_the_book_keeps_no_token_in_clear() -> None:
    book = TokenBook.parse(f"{A} weather", "t")
    assert A not in repr(book)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("short weather", "at least 16 characters"),
        (f"{A}", "at least one app"),
        (f"{A} weather\n{A} other", "listed twice"),
        ('{"x": ', "not valid JSON"),
        (f'{{"{A}": 3}}', "list of names"),
    ],
)
def test_malformed_books_are_refused_with_the_place(text: str, problem: str) -> None:
    with pytest.raises(TokenFileError, match=problem):
        TokenBook.parse(text, "tokens.txt")


def test_merging_refuses_a_token_given_twice() -> None:
    book = TokenBook.parse(f"{A} weather", "file")
    assert book.merged(TokenBook.parse(f"{B} x", "env")).scope(B) == frozenset({"x"})
    with pytest.raises(TokenFileError):
        book.merged(TokenBook.parse(f"{A} other", "env"))


def test_authorize_401_without_or_with_unknown_token_403_outside_scope() -> None:
    book = TokenBook.parse(f"{A} weather\n{B} *", "t")
    for token in (None, "", "z" * 20):
        with pytest.raises(ApiError) as missing:
            book.authorize(token, "weather")
        assert missing.value.status == 401
        assert "WWW-Authenticate" in missing.value.headers
    with pytest.raises(ApiError) as outside:
        book.authorize(A, "travel")
    assert outside.value.status == 403
    assert book.authorize(A, "weather") == {"weather"}
    assert book.authorize(B, "anything") == {"*"}
