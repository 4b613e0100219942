"""Values placed in Temporal visibility queries: quoted so they stay one literal, or refused.

Temporal's query parser honours ``''`` and ``\\'`` inside a literal, takes ``"`` as a second
string delimiter and ``--`` / ``#`` as comments; a value that could close its literal would
turn a filter into query text (issue 25, item 1).
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from adk_temporal.cli import main
from adk_temporal.errors import InvalidIdError
from adk_temporal.visibility import UnquotableValueError, invocations_query, quoted

INJECTION = 'x\\\' OR AdkApp = "other" -- '
"""The issue's filter: closes the literal with ``\\'``, widens the query, comments out the rest."""


def _inside(literal: str) -> str:
    """The text between a single-quoted literal's delimiters."""
    assert literal.startswith("'") and literal.endswith("'"), literal
    return literal[1:-1]


@pytest.mark.parametrize("value", ["u-1", "o'brien", "it''s", "t--u", "v#w", "é ü", "x\u00a0y"])
def test_a_quoted_value_stays_one_literal(value: str) -> None:
    """Every ``'`` is doubled and nothing else can end the literal: undoubling gives the value."""
    inside = _inside(quoted(value))
    assert "\\" not in inside and '"' not in inside
    assert inside.replace("''", "").count("'") == 0
    assert inside.replace("''", "'") == value


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (INJECTION, "backslash"),
        ("a\\b", "backslash"),
        ('a"b', "double quote"),
        ("x\nAdkApp = 'other'", "U+000A"),
        ("nul\0", "U+0000"),
        ("bidi\u202eevil", "U+202E"),
        ("line\u2028sep", "U+2028"),
        ("\ud800", "U+D800"),
    ],
)
def test_a_value_that_could_leave_its_literal_is_refused(value: str, named: str) -> None:
    """Backslashes, double quotes and control or format characters are refused by name,
    never passed into a query."""
    with pytest.raises(UnquotableValueError, match=re.escape(named)) as caught:
        quoted(value, "user_id")
    assert "user_id" in str(caught.value)


@pytest.mark.parametrize("field", ["app_name", "user_id", "session_id"])
def test_the_invocations_query_refuses_a_filter_outside_the_id_grammar(field: str) -> None:
    """A hostile app, user or session filter is an InvalidIdError naming the field; no query
    text is built from it."""
    with pytest.raises(InvalidIdError, match=field):
        invocations_query(**{field: INJECTION})


def test_the_invocations_query_keeps_a_quote_in_an_id_inside_its_literal() -> None:
    """An id with a single quote (valid in the grammar) is doubled, so the query keeps its
    shape: one clause per filter, joined by AND."""
    query = invocations_query(app_name="weather", user_id="o'brien", statuses=["completed"])
    assert query == (
        "WorkflowType = 'InvocationWorkflow' AND AdkApp = 'weather' AND "
        "AdkUser = 'o''brien' AND AdkStatus IN ('completed')"
    )


def test_an_id_the_grammar_allows_but_a_query_cannot_hold_is_refused() -> None:
    """A double quote passes the id grammar but cannot be matched in a query: refused, with
    the reason, instead of listing nothing."""
    with pytest.raises(UnquotableValueError, match="session_id"):
        invocations_query(session_id='s"1')


@pytest.mark.parametrize("option", ["--app", "--user", "--session"])
def test_cli_list_refuses_a_hostile_filter_as_a_usage_error(option: str) -> None:
    """`adk-temporal list --user "x\\' OR …"` is a usage error (exit 2) naming the option,
    before any server is asked."""
    result = CliRunner().invoke(
        main, ["list", option, INJECTION, "--address", "127.0.0.1:1"], catch_exceptions=False
    )
    assert result.exit_code == 2, result.output
    assert option in result.output
    assert "cannot contain" in result.output
