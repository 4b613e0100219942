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


def test_a_token_may_name_its_principal_and_groups_in_either_format() -> None:
    """``principal=`` and ``groups=`` after a line's apps, or an object in JSON, name who
    answers with the token; a token naming nobody is its digest, in no group."""
    lines = TokenBook.parse(
        f"{A} weather, travel principal=alice groups=finance,ops\n{B} weather", "t"
    )
    assert lines.scope(A) == frozenset({"weather", "travel"})
    assert (lines.principal(A), lines.groups(A)) == ("alice", ["finance", "ops"])
    assert lines.principal(B).startswith("token:") and lines.groups(B) == []
    book = TokenBook.parse(
        f'{{"{A}": {{"apps": "*", "principal": "bob", "groups": ["finance"]}}, "{B}": ["x"]}}',
        "t.json",
    )
    assert (book.principal(A), book.groups(A), book.scope(A)) == (
        "bob",
        ["finance"],
        frozenset("*"),
    )
    merged = lines.merged(TokenBook.parse("c" * 20 + " x groups=audit", "env"))
    assert merged.groups("c" * 20) == ["audit"] and merged.principal(A) == "alice"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"{A} weather role=admin", "unknown field role"),
        (f'{{"{A}": {{"apps": ["w"], "principal": ""}}}}', "principal"),
        (f'{{"{A}": {{"apps": ["w"], "groups": 3}}}}', "groups"),
        (f"{A} weather groups=ok,\x07bell", "control"),
    ],
)
def test_bad_holders_are_refused_with_the_place(text: str, problem: str) -> None:
    """An unknown field, an empty principal, groups that are no list and a name with a
    control character are refused, naming the line or token."""
    with pytest.raises(TokenFileError, match=problem):
        TokenBook.parse(text, "tokens.txt")
