"""Pure logic of the console: CSRF tokens and sessions, forms from JSON schemas."""

from __future__ import annotations

from typing import Any

import pytest

from adk_temporal.examples.weather import TRAVEL_DATES_SCHEMA
from adk_temporal.web.cookies import ConsoleSessions
from adk_temporal.web.errors import ApiError
from adk_temporal.web.forms import JSON_FIELD, NULL_FIELD, form_value, schema_fields

# ---------------------------------------------------------------- CSRF and sessions


def test_csrf_token_binds_to_the_session_and_the_server_key() -> None:
    sessions = ConsoleSessions()
    sid = sessions.new_id()
    sessions.check_csrf(sid, sessions.csrf_token(sid))
    other = ConsoleSessions()
    for session_id, token in (
        (sid, None),
        (None, sessions.csrf_token(sid)),
        (sid, sessions.csrf_token(sessions.new_id())),
        (sid, other.csrf_token(sid)),
        (sid, "é"),
    ):
        with pytest.raises(ApiError) as refused:
            sessions.check_csrf(session_id, token)
        assert refused.value.status == 403


def test_sign_in_gives_a_new_id_that_expires_and_signs_out() -> None:
    sessions = ConsoleSessions()
    planted = sessions.new_id()
    sid = sessions.sign_in(frozenset({"weather"}), now=1000.0)
    assert sid != planted
    assert sessions.scope(planted) is None
    assert sessions.scope(sid, now=1001.0) == frozenset({"weather"})
    assert sessions.scope(sid, now=1000.0 + 13 * 3600) is None
    sid = sessions.sign_in(frozenset({"weather"}))
    sessions.sign_out(sid)
    assert sessions.scope(sid) is None


# ---------------------------------------------------------------- forms


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Who travels"},
        "nights": {"type": "integer"},
        "budget": {"type": "number"},
        "insured": {"type": "boolean"},
        "class": {"enum": ["economy", "business"]},
        "when": {
            "type": "object",
            "properties": {"start": {"type": "string", "format": "date"}},
            "required": ["start"],
        },
    },
    "required": ["name"],
}


def test_fields_for_each_kind_with_labels() -> None:
    html = schema_fields(SCHEMA)
    assert '<label for="answer-name">name (required)</label>' in html
    assert 'type="text" id="answer-name" name="answer.name" aria-describedby' in html
    assert 'type="number" step="1" id="answer-nights"' in html
    assert 'type="number" step="any" id="answer-budget"' in html
    assert 'type="checkbox" id="answer-insured"' in html
    assert '<option value="&quot;business&quot;">business</option>' in html
    assert "<legend>when</legend>" in html
    assert 'type="date" id="answer-when-start" name="answer.when.start"' in html
    assert JSON_FIELD not in html


def test_form_value_builds_the_answer() -> None:
    form = {
        "answer.name": "Ada",
        "answer.nights": "3",
        "answer.budget": "99.5",
        "answer.insured": "true",
        "answer.class": '"business"',
        "answer.when.start": "2026-12-01",
    }
    assert form_value(SCHEMA, form) == {
        "name": "Ada",
        "nights": 3,
        "budget": 99.5,
        "insured": True,
        "class": "business",
        "when": {"start": "2026-12-01"},
    }
    # Empty optional fields are left out; an unchecked box is false.
    assert form_value(SCHEMA, {"answer.name": "Ada"}) == {
        "name": "Ada",
        "insured": False,
        "when": {},
    }


def test_bad_number_is_a_422() -> None:
    with pytest.raises(ApiError) as refused:
        form_value(SCHEMA, {"answer.nights": "three"})
    assert refused.value.status == 422
    assert "nights" in refused.value.message


@pytest.mark.parametrize("raw", ["nan", "inf", "-Infinity", "1e999"])
def test_a_number_field_refuses_nan_and_infinities(raw: str) -> None:
    """A number field with NaN or an infinity (which would reach the tool as null): 422."""
    schema = {"type": "object", "properties": {"price": {"type": "number"}}}
    assert form_value(schema, {"answer.price": "2.5"}) == {"price": 2.5}
    with pytest.raises(ApiError) as refused:
        form_value(schema, {"answer.price": raw})
    assert refused.value.status == 422


@pytest.mark.parametrize("raw", ["NaN", "[1e999]", "[" * 200 + "]" * 200])
def test_the_json_box_takes_only_strict_bounded_json(raw: str) -> None:
    """The console's JSON answer box refuses what the API refuses: 422, not a 500."""
    with pytest.raises(ApiError) as refused:
        form_value(None, {JSON_FIELD: raw})
    assert refused.value.status == 422
    assert refused.value.message.startswith("the answer is not JSON: ")


def test_nullable_schema_offers_null() -> None:
    html = schema_fields(TRAVEL_DATES_SCHEMA)
    assert NULL_FIELD in html
    assert 'type="date"' in html
    assert form_value(TRAVEL_DATES_SCHEMA, {NULL_FIELD: "true", "answer.start": "x"}) is None
    assert form_value(
        TRAVEL_DATES_SCHEMA, {"answer.start": "2026-12-01", "answer.end": "2026-12-05"}
    ) == {
        "start": "2026-12-01",
        "end": "2026-12-05",
    }


@pytest.mark.parametrize(
    "schema", [None, {"type": "array", "items": {"type": "string"}}, {"oneOf": [{}, {}]}]
)
def test_other_schemas_fall_back_to_json(schema: dict[str, Any] | None) -> None:
    html = schema_fields(schema)
    assert JSON_FIELD in html
    assert '<label for="answer-json">' in html
    assert form_value(schema, {JSON_FIELD: '["a"]'}) == ["a"]
    with pytest.raises(ApiError):
        form_value(schema, {JSON_FIELD: "[oops"})


def test_scalar_schema_is_one_field() -> None:
    html = schema_fields({"type": "integer"})
    assert 'name="answer"' in html
    assert form_value({"type": "integer"}, {"answer": "7"}) == 7


def test_field_text_is_escaped() -> None:
    html = schema_fields(
        {"type": "object", "properties": {"<b>": {"type": "string", "description": "<i>"}}}
    )
    assert "<b>" not in html
    assert "<i>" not in html
