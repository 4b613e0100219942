"""Reading request bodies within a size limit, as JSON models or as console forms."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, NoReturn, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from .errors import ApiError

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "parse_json",
    "read_body",
    "read_form",
    "read_model",
    "validated",
]

MAX_BODY_BYTES = 1 << 20
"""The largest body accepted (1 MiB); the answers it carries have smaller budgets still."""

MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects a body may have (the body itself is level 1).

Everything after the parser — validation, the budgets' checks, Temporal's converter —
walks a value recursively; a bound well below Python's recursion limit keeps a deep body
a refusal here instead of a ``RecursionError`` (a 500) somewhere later."""

M = TypeVar("M", bound=BaseModel)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "body_too_large", f"the request body is over {limit} bytes")


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The body, read chunk by chunk and abandoned as soon as it passes ``limit``.

    Content-Length only lets a large body be refused before reading; a chunked or lying
    request is still stopped by the count.

    Raises:
        ApiError: 413 when the body is larger than ``limit``.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdecimal() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _invalid(problem: str) -> ApiError:
    return ApiError(400, "invalid_json", f"the body is not strict JSON: {problem}")


def _no_constant(name: str) -> NoReturn:
    # Python's json reads NaN and the infinities, which JSON has not: an answer holding one
    # would cross Temporal as non-standard JSON (and reach the tool as null).
    raise _invalid(f"{name} is NaN or infinite, which JSON cannot represent")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        _no_constant(text if len(text) <= 40 else f"{text[:40]}…")
    return value


def _depth(data: Any) -> int:
    """How deeply ``data`` nests arrays and objects (a scalar is 0), without recursing."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, level + 1) for item in items)
    return deepest


def parse_json(body: bytes | str) -> Any:
    """A body parsed as strict JSON nested at most :data:`MAX_JSON_DEPTH` levels.

    Raises:
        ApiError: 400 ``invalid_json`` naming the problem: not UTF-8 or not JSON, ``NaN``,
            ``Infinity``, ``-Infinity`` or a number that overflows to infinity (``1e999``),
            an integer over Python's digit limit, or nesting deeper than the bound.
    """
    try:
        data = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise _invalid(f"it is nested more than {MAX_JSON_DEPTH} levels deep") from None
    except json.JSONDecodeError as err:
        raise _invalid(str(err)) from None
    except UnicodeDecodeError:
        raise _invalid("it is not UTF-8") from None
    except ValueError:
        # Only an integer longer than Python's limit for converting digits gets here.
        limit = sys.get_int_max_str_digits()
        raise _invalid(f"an integer has more than {limit} digits") from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise _invalid(f"it is nested more than {MAX_JSON_DEPTH} levels deep")
    return data


async def read_model(request: Request, model: type[M], limit: int = MAX_BODY_BYTES) -> M:
    """The JSON body as ``model``.

    Raises:
        ApiError: 413 over ``limit``, 400 not strict bounded JSON (:func:`parse_json`), 422
            not the model's shape.
    """
    return validated(model, parse_json(await read_body(request, limit)))


def validated(model: type[M], data: Any) -> M:
    """Parsed JSON ``data`` as ``model``.

    Raises:
        ApiError: 422 naming each field that does not fit the model.
    """
    try:
        return model.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in err.errors()
        )
        raise ApiError(422, "invalid_body", problems) from None


async def read_form(request: Request, limit: int = MAX_BODY_BYTES) -> dict[str, str]:
    """A urlencoded form's fields (the last value of a repeated name wins).

    Raises:
        ApiError: 413 over ``limit``, 415 for another content type.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        raise ApiError(415, "unsupported_media_type", "send an urlencoded form")
    body = await read_body(request, limit)
    try:
        return dict(parse_qsl(body.decode(), keep_blank_values=True))
    except UnicodeDecodeError:
        raise ApiError(400, "invalid_form", "the form is not UTF-8") from None
