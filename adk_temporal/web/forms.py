"""Input forms from a request's JSON schema, and the answer a submitted form makes.

Fields are generated for string (``format: date`` gets a date picker), number, integer,
boolean and enum values, and for objects of them (nested up to three levels). Anything else
— arrays, ``oneOf``, no schema — falls back to one JSON textarea. A schema that allows
``null`` gets a "send no value" checkbox.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .body import parse_json
from .errors import ApiError
from .pages import render

__all__ = [
    "JSON_FIELD",
    "NULL_FIELD",
    "AnswerField",
    "AnswerForm",
    "FieldKind",
    "answer_form",
    "form_value",
    "schema_fields",
]

JSON_FIELD = "answer.__json__"
"""The textarea of the fallback form."""
NULL_FIELD = "answer.__null__"
"""The checkbox that sends ``null``."""
_ROOT = "answer"
_MAX_DEPTH = 3
_SCALARS = {"string", "number", "integer", "boolean"}

FieldKind = Literal["object", "enum", "boolean", "number", "integer", "date", "text"]
"""What a generated field is: a fieldset, a select, a checkbox, or an input of that type."""
_INPUTS: dict[str, FieldKind] = {"boolean": "boolean", "number": "number", "integer": "integer"}
"""The fields of the scalars other than strings, by JSON type."""


@dataclass(frozen=True)
class AnswerField:
    """One generated field of an answer form, as ``templates/macros.html`` draws it."""

    kind: FieldKind
    name: str
    """The submitted name: ``answer``, ``answer.key``, ``answer.key.inner``."""
    label: str
    required: bool
    help: str = ""
    options: tuple[tuple[str, str], ...] = ()
    """An enum's ``(value as JSON, text)`` pairs."""
    children: tuple[AnswerField, ...] = ()
    """An object's fields."""

    @property
    def ident(self) -> str:
        """The element id (ids with dots would need escaping in CSS selectors)."""
        return self.name.replace(".", "-")


@dataclass(frozen=True)
class AnswerForm:
    """The fields that answer one request: generated ones, or one JSON textarea."""

    fields: tuple[AnswerField, ...] = ()
    nullable: bool = False
    """Whether a "send no value" checkbox comes first."""
    json_hint: str | None = None
    """The schema shown under the JSON textarea; ``None`` when fields are generated."""
    null_field: ClassVar[str] = NULL_FIELD
    json_field: ClassVar[str] = JSON_FIELD


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return list(kind) if isinstance(kind, list) else []


def _main_type(schema: dict[str, Any]) -> str | None:
    """The one non-null type a field can be generated for, or ``None``."""
    if "enum" in schema and all(isinstance(v, str | int | float) for v in schema["enum"]):
        return "enum"
    kinds = [k for k in _types(schema) if k != "null"]
    return kinds[0] if len(kinds) == 1 else None


def _supported(schema: Any, depth: int) -> bool:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return False
    kind = _main_type(schema)
    if kind == "object":
        properties = schema.get("properties")
        return isinstance(properties, dict) and all(
            _supported(s, depth + 1) for s in properties.values()
        )
    return kind == "enum" or kind in _SCALARS


def _field(name: str, label: str, schema: dict[str, Any], required: bool) -> AnswerField:
    kind = _main_type(schema)
    help_text = schema.get("description", "")
    if kind == "object":
        needed = set(schema.get("required", []))
        children = tuple(
            _field(f"{name}.{key}", key, sub, key in needed)
            for key, sub in schema["properties"].items()
        )
        return AnswerField("object", name, label, required, help_text, children=children)
    if kind == "enum":
        options = tuple((json.dumps(v), str(v)) for v in schema["enum"])
        return AnswerField("enum", name, label, required, help_text, options=options)
    text: FieldKind = "date" if schema.get("format") == "date" else "text"
    return AnswerField(_INPUTS.get(kind or "", text), name, label, required, help_text)


def answer_form(schema: dict[str, Any] | None) -> AnswerForm:
    """The form that answers a request with ``schema``."""
    if schema is None or not _supported(schema, 1):
        return AnswerForm(json_hint=json.dumps(schema, indent=2) if schema else "any JSON value")
    nullable = "null" in _types(schema)
    if _main_type(schema) != "object":
        return AnswerForm((_field(_ROOT, "Answer", schema, not nullable),), nullable)
    needed = set(schema.get("required", []))
    # With a null checkbox the fields cannot all be required by the browser.
    fields = tuple(
        _field(f"{_ROOT}.{key}", key, sub, key in needed and not nullable)
        for key, sub in schema["properties"].items()
    )
    return AnswerForm(fields, nullable)


def schema_fields(schema: dict[str, Any] | None) -> str:
    """The form fields (HTML) that answer a request with ``schema``."""
    return render("answer_fields.html", form=answer_form(schema))


def _scalar(name: str, raw: str, schema: dict[str, Any]) -> Any:
    kind = _main_type(schema)
    try:
        if kind == "enum":
            return parse_json(raw)
        if kind == "integer":
            return int(raw)
        if kind == "number":
            number = float(raw)
            # NaN and infinities would reach the tool as null: refused as for JSON bodies.
            if not math.isfinite(number):
                raise ValueError(raw)
            return int(number) if number.is_integer() and "." not in raw else number
    except (ValueError, ApiError):
        raise ApiError(422, "invalid_form", f"{name}: {raw!r} is not a {kind}") from None
    return raw


def _value(name: str, schema: dict[str, Any], form: dict[str, str]) -> tuple[bool, Any]:
    """``(present, value)`` of the field ``name``: empty optional fields are left out."""
    kind = _main_type(schema)
    if kind == "object":
        found = {}
        for key, sub in schema["properties"].items():
            present, value = _value(f"{name}.{key}", sub, form)
            if present:
                found[key] = value
        return True, found
    if kind == "boolean":
        return True, form.get(name) == "true"
    raw = form.get(name, "")
    if raw == "":
        return False, None
    return True, _scalar(name.removeprefix(f"{_ROOT}."), raw, schema)


def form_value(schema: dict[str, Any] | None, form: dict[str, str]) -> Any:
    """The answer a form rendered by :func:`schema_fields` submits.

    The workflow checks the answer against the schema; this only builds it.

    Raises:
        ApiError: 422 when a number field or the JSON textarea does not parse.
    """
    if form.get(NULL_FIELD) == "true":
        return None
    if JSON_FIELD in form:
        try:
            return parse_json(form[JSON_FIELD])
        except ApiError as err:
            problem = err.message.partition(": ")[2]
            raise ApiError(422, "invalid_form", f"the answer is not JSON: {problem}") from None
    if schema is None or not _supported(schema, 1):
        raise ApiError(422, "invalid_form", "the form has no answer")
    present, value = _value(_ROOT, schema, form)
    return value if present else None
