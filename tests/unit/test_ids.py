"""The id grammar (SPEC §3): one rule for app, user and session ids everywhere."""

from __future__ import annotations

import pytest

from adk_temporal.artifacts import LoadRequest
from adk_temporal.artifacts.requests import validate_request
from adk_temporal.errors import InvalidArtifactRequestError, InvalidIdError
from adk_temporal.ids import SessionKey, check_session_ids, workflow_id_for


def test_distinct_triples_never_share_a_workflow_id() -> None:
    """x/y + s and x + y/s used to alias adk/pa/x/y/s; both are refused now."""
    with pytest.raises(InvalidIdError, match="user_id cannot contain path separators"):
        workflow_id_for(SessionKey("pa", "x/y", "s"))
    with pytest.raises(InvalidIdError, match="session_id cannot contain path separators"):
        workflow_id_for(SessionKey("pa", "x", "y/s"))
    assert workflow_id_for(SessionKey("pa", "x", "s")) == "adk/pa/x/s"


@pytest.mark.parametrize(
    ("app", "user", "session", "message"),
    [
        ("", "", "s", "missing required fields: app_name, user_id"),
        ("a", "u\\v", "s", "user_id cannot contain path separators or NUL"),
        ("a", "u", "s\0", "session_id cannot contain path separators or NUL"),
        (".", "u", "s", "app_name cannot be '.' or '..'"),
        ("a", "u", "user", "session_id cannot be 'user'"),
        ("a", "C:x", "s", "user_id cannot start with a drive prefix like 'C:'"),
        ("a", "u", "c:foo", "session_id cannot start with a drive prefix like 'C:'"),
        ("a" * 129, "u", "s", "app_name is 129 bytes long; the limit is 128"),
        ("a", "u\nforged: log line", "s", "user_id cannot contain control .* U\\+000A"),
        ("a", "u", "s\r", "session_id cannot contain control .* U\\+000D"),
        ("a\x1b[31m", "u", "s", "app_name cannot contain control .* U\\+001B"),
        ("a", "\u202eevil", "s", "user_id cannot contain control or format .* U\\+202E"),
        ("a", "u", "s\u2028x", "session_id cannot contain control .* U\\+2028"),
        ("a", "u", "zero\u200bwidth", "session_id cannot contain control .* U\\+200B"),
    ],
)
def test_each_rule_names_the_field(app: str, user: str, session: str, message: str) -> None:
    """A refused id says which field broke which rule, and is a ValueError."""
    with pytest.raises(InvalidIdError, match=message) as caught:
        check_session_ids(SessionKey(app, user, session))
    assert isinstance(caught.value, ValueError)


def test_the_limit_counts_bytes_not_characters() -> None:
    """64 two-byte characters fit in 128 bytes; 65 do not."""
    check_session_ids(SessionKey("a", "é" * 64, "s"))
    with pytest.raises(InvalidIdError, match="130 bytes"):
        check_session_ids(SessionKey("a", "é" * 65, "s"))


def test_ids_may_hold_spaces_and_letters_of_any_script() -> None:
    """Printable text of any script, spaces included, is a valid id."""
    check_session_ids(SessionKey("报告 app", "José Müller", "セッション-1"))


def test_artifact_file_names_refuse_control_characters_too() -> None:
    """One grammar: a file name with a newline is refused before any backend is touched."""
    with pytest.raises(InvalidArtifactRequestError, match="file_name cannot contain control"):
        validate_request(
            LoadRequest(app_name="a", user_id="u", session_id="s", file_name="r\n.txt")
        )
