"""Reading request bodies within a size limit, as JSON models or as console forms."""

from __future__ import annotations

import json
from typing import TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from .errors import ApiError

__all__ = ["MAX_BODY_BYTES", "read_body", "read_form", "read_model"]

MAX_BODY_BYTES = 1 << 20
"""The largest body accepted (1 MiB); the answers it carries have smaller budgets still."""

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


async def read_model(request: Request, model: type[M], limit: int = MAX_BODY_BYTES) -> M:
    """The JSON body as ``model``.

    Raises:
        ApiError: 413 over ``limit``, 400 not JSON, 422 not the model's shape.
    """
    body = await read_body(request, limit)
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ApiError(400, "invalid_json", f"the body is not JSON: {err}") from None
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
