"""The id grammar (SPEC §3): one rule for app, user and session ids everywhere."""

from __future__ import annotations

import pytest

from adk_temporal.errors import InvalidIdError
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
