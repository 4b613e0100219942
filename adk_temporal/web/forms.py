"""Input forms from a request's JSON schema, and the answer a submitted form makes.

Fields are generated for string (``format: date`` gets a date picker), number, integer,
boolean and enum values, and for objects of them (nested up to three levels). Anything else
— arrays, ``oneOf``, no schema — falls back to one JSON textarea. A schema that allows
``null`` gets a "send no value" checkbox.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import ApiError
from .pages import esc

__all__ = ["JSON_FIELD", "NULL_FIELD", "form_value", "schema_fields"]

JSON_FIELD = "answer.__json__"
"""The textarea of the fallback form."""
NULL_FIELD = "answer.__null__"
"""The checkbox that sends ``null``."""
_ROOT = "answer"
_MAX_DEPTH = 3
_SCALARS = {"string", "number", "integer", "boolean"}


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


def _field(name: str, label: str, schema: dict[str, Any], required: bool) -> str:
    kind = _main_type(schema)
    ident = esc(name.replace(".", "-"))
    help_text = schema.get("description", "")
    marker = " (required)" if required else ""
    label_html = f'<label for="{ident}">{esc(label)}{marker}</label>'
    note = f'<small id="{ident}-help">{esc(help_text)}</small>' if help_text else ""
    described = f' aria-describedby="{ident}-help"' if help_text else ""
    req = " required" if required else ""
    if kind == "object":
        needed = set(schema.get("required", []))
        inner = "".join(
            _field(f"{name}.{key}", key, sub, key in needed)
            for key, sub in schema["properties"].items()
        )
        return f"<fieldset><legend>{esc(label)}</legend>{note}{inner}</fieldset>"
    if kind == "enum":
        options = "".join(
            f'<option value="{esc(json.dumps(v))}">{esc(v)}</option>' for v in schema["enum"]
        )
        blank = "" if required else '<option value="">(none)</option>'
        return (
            f'<div class="field">{label_html}<select id="{ident}" name="{esc(name)}"'
            f"{described}{req}>{blank}{options}</select>{note}</div>"
        )
    if kind == "boolean":
        return (
            f'<div class="field"><input type="checkbox" id="{ident}" name="{esc(name)}" '
            f'value="true"{described}>{label_html}{note}</div>'
        )
    if kind in ("number", "integer"):
        step = "1" if kind == "integer" else "any"
        return (
            f'<div class="field">{label_html}<input type="number" step="{step}" id="{ident}" '
            f'name="{esc(name)}"{described}{req}>{note}</div>'
        )
    html_type = "date" if schema.get("format") == "date" else "text"
    return (
        f'<div class="field">{label_html}<input type="{html_type}" id="{ident}" '
        f'name="{esc(name)}"{described}{req}>{note}</div>'
    )


def schema_fields(schema: dict[str, Any] | None) -> str:
    """The form fields (HTML) that answer a request with ``schema``."""
    nullable = isinstance(schema, dict) and "null" in _types(schema)
    none_box = (
        f'<div class="field"><input type="checkbox" id="answer-null" name="{NULL_FIELD}" '
        'value="true"><label for="answer-null">Send no value (null)</label></div>'
        if nullable
        else ""
    )
    if schema is not None and _supported(schema, 1):
        if _main_type(schema) == "object":
            needed = set(schema.get("required", []))
            # With a null checkbox the fields cannot all be required by the browser.
            return none_box + "".join(
                _field(f"{_ROOT}.{key}", key, sub, key in needed and not nullable)
                for key, sub in schema["properties"].items()
            )
        return none_box + _field(_ROOT, "Answer", schema, not nullable)
    hint = json.dumps(schema, indent=2) if schema else "any JSON value"
    return (
        f'<div class="field"><label for="answer-json">Answer as JSON</label>'
        f'<textarea id="answer-json" name="{JSON_FIELD}" rows="6" '
        f'aria-describedby="answer-json-help">null</textarea>'
        f'<small id="answer-json-help">Schema: <code>{esc(hint)}</code></small></div>'
    )


def _scalar(name: str, raw: str, schema: dict[str, Any]) -> Any:
    kind = _main_type(schema)
    try:
        if kind == "enum":
            return json.loads(raw)
        if kind == "integer":
            return int(raw)
        if kind == "number":
            number = float(raw)
            return int(number) if number.is_integer() and "." not in raw else number
    except ValueError:
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
            return json.loads(form[JSON_FIELD])
        except json.JSONDecodeError as err:
            raise ApiError(422, "invalid_form", f"the answer is not JSON: {err}") from None
    if schema is None or not _supported(schema, 1):
        raise ApiError(422, "invalid_form", "the form has no answer")
    present, value = _value(_ROOT, schema, form)
    return value if present else None
