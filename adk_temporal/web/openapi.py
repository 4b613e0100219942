"""The route table of the JSON API, and the OpenAPI document written from it.

Each :class:`Operation` is both a Starlette route and its OpenAPI entry, so the document
cannot drift from what is served.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .errors import ErrorDocument

__all__ = ["Operation", "openapi_document", "routes"]

Endpoint = Callable[[Request], Awaitable[Response]]

_REASONS = {
    400: "Malformed request",
    401: "No token, or an unknown one",
    403: "The token's scope does not include the app",
    404: "No such invocation or request",
    409: "Conflicts with the run's state",
    413: "Body over 1 MiB",
    415: "Unsupported media type",
    422: "Well-formed but invalid",
    502: "Temporal refused the request",
    503: "Temporal is unavailable",
}


@dataclass(frozen=True)
class Operation:
    """One route of the API and what the OpenAPI document says of it."""

    method: str
    path: str
    endpoint: Endpoint
    summary: str
    body: type[BaseModel] | None = None
    reply: type[BaseModel] | None = None
    replies: tuple[int, ...] = (200,)
    errors: tuple[int, ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    """Query parameters: ``(name, description)``."""
    media_type: str = "application/json"
    bearer: bool = True


def routes(operations: Sequence[Operation]) -> list[Route]:
    """The Starlette routes of ``operations``."""
    return [Route(op.path, op.endpoint, methods=[op.method]) for op in operations]


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def openapi_document(operations: Sequence[Operation], title: str, version: str) -> dict[str, Any]:
    """An OpenAPI 3.1 description of ``operations``."""
    models: set[type[BaseModel]] = {ErrorDocument}
    for op in operations:
        models.update(m for m in (op.body, op.reply) if m is not None)
    _, definitions = models_json_schema(
        [(m, "validation") for m in sorted(models, key=lambda m: m.__name__)],
        ref_template="#/components/schemas/{model}",
    )
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        entry: dict[str, Any] = {"summary": op.summary, "responses": {}}
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", op.path)
        ]
        parameters += [
            {"name": name, "in": "query", "description": text, "schema": {"type": "string"}}
            for name, text in op.query
        ]
        if parameters:
            entry["parameters"] = parameters
        if op.body is not None:
            entry["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _ref(op.body)}},
            }
        for status in op.replies:
            content = {op.media_type: {"schema": _ref(op.reply)}} if op.reply else {}
            entry["responses"][str(status)] = {
                "description": "Accepted" if status == 202 else "Success",
                **({"content": content} if content else {}),
            }
        for status in sorted({*op.errors, *((401, 403) if op.bearer else ())}):
            entry["responses"][str(status)] = {
                "description": _REASONS[status],
                "content": {"application/json": {"schema": _ref(ErrorDocument)}},
            }
        if not op.bearer:
            entry["security"] = []
        paths.setdefault(op.path, {})[op.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "paths": paths,
        "components": {
            "schemas": definitions.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
