"""The gateway's ASGI application: the JSON API, answer links, the console, the refusals."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Protocol

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from temporalio.service import RPCError

from ..errors import AdkError
from .adk import DEV_UI_PATH, DEV_UI_POLICY, AdkAccess, AdkSurface, adk_routes, dev_ui_routes
from .api import OPERATIONS
from .auth import TokenBook
from .console import console_routes
from .cookies import ConsoleSessions
from .cors import cors_options
from .errors import ApiError, api_error
from .gateway import Gateway
from .links import RedactLinks
from .openapi import openapi_document, routes
from .pages import error_page
from .schedules import SCHEDULE_OPERATIONS
from .sse import StreamLimits, StreamSlots

__all__ = ["Surface", "create_app"]

log = logging.getLogger(__name__)
# The path of a failed request may hold an answer link's token, a credential.
log.addFilter(RedactLinks())

_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    # The link pages carry a credential in their URL: never hand it on as a referrer.
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; form-action 'self'; "
        b"frame-ancestors 'none'; base-uri 'none'",
    ),
]


_DEV_UI_HEADERS = [
    *(h for h in _HEADERS if h[0] != b"content-security-policy"),
    (b"content-security-policy", DEV_UI_POLICY),
]


class _SecurityHeaders:
    """Adds the headers above to every response (streams included, unlike a
    ``BaseHTTPMiddleware``, which would buffer them); ADK's dev UI pages get their own
    content policy."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = _DEV_UI_HEADERS if path.startswith(DEV_UI_PATH) else _HEADERS

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await self.app(scope, receive, with_headers)


_HTTP_TYPES = {404: "not_found", 405: "method_not_allowed"}


async def _refusal(request: Request, exc: Exception) -> Response:
    err = api_error(exc)
    if err is None and isinstance(exc, HTTPException):
        err = ApiError(exc.status_code, _HTTP_TYPES.get(exc.status_code, "http_error"), exc.detail)
    if err is None:
        log.exception("unexpected failure of %s %s", request.method, request.url.path)
        err = ApiError(500, "internal_error", "the gateway failed; its log says why")
    path = request.url.path
    # Console pages refuse as pages; their event stream's script reads JSON like the API.
    if path.startswith("/console") and not path.endswith("/events"):
        return error_page(err)
    return JSONResponse(
        err.document().model_dump(exclude_none=True), status_code=err.status, headers=err.headers
    )


def _version() -> str:
    try:
        return version("adk-temporal")
    except PackageNotFoundError:
        return "0"


class Surface(Protocol):
    """Routes a package above the gateway serves beside its own (A2A's), so the gateway
    never imports what serves on it."""

    def routes(self) -> list[BaseRoute]:
        """The routes."""
        ...

    def attach(self, app: Starlette) -> None:
        """Leave on ``app`` what the routes read when they serve (``app.state`` holds the
        gateway and its tokens)."""
        ...


def create_app(
    gateway: Gateway,
    tokens: TokenBook,
    *,
    console: bool = False,
    cors_origins: Sequence[str] = (),
    stream_limits: StreamLimits | None = None,
    adk_local: bool = False,
    adk_dev_ui: Path | None = None,
    surfaces: Sequence[Surface] = (),
) -> Starlette:
    """The ASGI app serving ``gateway`` to holders of ``tokens``; the console only when
    ``console`` is true; cross-origin calls from ``cors_origins`` only; event streams within
    ``stream_limits`` (by default :class:`~adk_temporal.web.sse.StreamLimits`' own).

    ADK's API-server routes (:mod:`adk_temporal.web.adk`) take the same tokens, or with
    ``adk_local`` none, from this machine only; ``adk_dev_ui`` (a directory holding ADK's
    built dev UI) serves that UI under ``/dev-ui/``. ``surfaces`` are served beside (A2A's,
    :class:`adk_temporal.a2a.routes.A2aRoutes`: each agent of the served app under
    ``/a2a/{agent}``, for the same tokens), attached once the app holds the gateway and tokens.

    Raises:
        DevUiError: ``adk_dev_ui`` holds no built dev UI.
    """
    operations = [*OPERATIONS, *SCHEDULE_OPERATIONS]
    document = openapi_document(operations, "adk-temporal gateway", _version())

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    served: list[BaseRoute] = [
        *routes(operations),
        Route("/openapi.json", openapi, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[(__package__, "static")]), name="static"),
    ]
    if console:
        served += console_routes()
    served += adk_routes()
    if adk_dev_ui is not None:
        served += dev_ui_routes(adk_dev_ui)
    for surface in surfaces:
        served += surface.routes()
    handlers = {kind: _refusal for kind in (ApiError, AdkError, RPCError, HTTPException, Exception)}
    app = Starlette(routes=served, exception_handlers=handlers)
    app.add_middleware(_SecurityHeaders)
    if cors_origins:
        # Outermost, so a preflight is answered before authentication asks for a token.
        app.add_middleware(CORSMiddleware, **cors_options(cors_origins))
    app.state.gateway = gateway
    app.state.tokens = tokens
    app.state.console_sessions = ConsoleSessions()
    app.state.streams = StreamSlots(stream_limits or StreamLimits())
    app.state.adk = AdkSurface(gateway, AdkAccess(tokens, local_only=adk_local))
    for surface in surfaces:
        surface.attach(app)
    return app
