"""The A2A routes of ``adk-temporal web --a2a``: per served agent, its card at
``/a2a/{agent}/.well-known/agent-card.json`` and its JSON-RPC endpoint at ``/a2a/{agent}``.

The endpoint takes the gateway's bearer tokens (scoped to apps, as for its API): the caller
is authenticated before a2a-sdk's dispatcher sees the request, its body bounded and read as
strict JSON, and each token's tasks live under a user id of its own, so a caller finds only
the tasks it started. Streams count against the gateway's limits per token.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers.response_helpers import agent_card_to_dict, build_error_response
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Receive, Scope, Send

from ..agents import BaseAgent
from ..web.auth import TokenBook, bearer_token
from ..web.body import parse_json, read_body
from ..web.errors import ApiError
from ..web.gateway import Gateway
from ..web.sse import StreamSlots
from .card import agent_card
from .handler import Caller, DurableRequestHandler

__all__ = ["A2A_PATH", "A2aRoutes", "A2aSurface"]

A2A_PATH = "/a2a"
"""Where the agents' endpoints and cards are served."""

_CALLER = "adk_temporal.a2a.caller"
_STREAMING = frozenset(
    {"SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"}
)
"""The methods answered by a stream (A2A 1.0's names, then 0.3's)."""


def user_of(principal: str) -> str:
    """The user id a principal's tasks and sessions live under: derived, showing nothing
    of the token."""
    return "a2a-" + hashlib.sha256(principal.encode()).hexdigest()[:24]


class _CallerContext(DefaultServerCallContextBuilder):
    """a2a-sdk's call context with the authenticated caller."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["caller"] = request.scope[_CALLER]
        return context


@dataclass
class A2aSurface:
    """What the A2A routes serve: the gateway's agents to holders of its tokens."""

    gateway: Gateway
    tokens: TokenBook
    dispatcher: JsonRpcDispatcher

    @classmethod
    def build(cls, gateway: Gateway, tokens: TokenBook) -> A2aSurface:
        """The surface over ``gateway`` (which must serve an app and have its session store).

        Raises:
            ValueError: The gateway serves no app, or has no session store.
        """
        if gateway.app is None:
            raise ValueError("serving A2A needs the served app (--app)")
        dispatcher = JsonRpcDispatcher(
            DurableRequestHandler(gateway), _CallerContext(), enable_v0_3_compat=True
        )
        return cls(gateway, tokens, dispatcher)

    def target(self, name: str) -> tuple[str, BaseAgent]:
        """The app and agent an endpoint's ``name`` stands for.

        Raises:
            ApiError: 404 for an agent the gateway does not serve.
        """
        app = self.gateway.app
        assert app is not None  # checked by build
        for agent in app.agents:
            if agent.name == name:
                return app.name or agent.name, agent
        served = ", ".join(a.name for a in app.agents)
        raise ApiError(404, "unknown_agent", f"no agent {name!r} here; served: {served}")


def _surface(request: Request) -> A2aSurface:
    surface: A2aSurface = request.app.state.a2a
    return surface


async def card(request: Request) -> Response:
    """``GET /a2a/{agent}/.well-known/agent-card.json``: the agent's card (public, as A2A
    clients read it before they authenticate)."""
    name = request.path_params["agent"]
    _, agent = _surface(request).target(name)
    url = str(request.base_url).rstrip("/") + f"{A2A_PATH}/{name}"
    return JSONResponse(agent_card_to_dict(agent_card(agent, url)))


class _Releasing(Response):
    """A response that gives its stream slot back once it is over, however it ends."""

    def __init__(self, inner: Response, release: Callable[[], None]) -> None:
        self._inner = inner
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._inner(scope, receive, send)
        finally:
            self._release()


def _replay(body: bytes) -> Receive:
    """A ``receive`` handing the body already read to the dispatcher."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def rpc(request: Request) -> Response:
    """``POST /a2a/{agent}``: one JSON-RPC call of A2A, by an authenticated caller."""
    surface = _surface(request)
    app, agent = surface.target(request.path_params["agent"])
    token = bearer_token(request)
    surface.tokens.authorize(token, app)
    principal = surface.tokens.principal(token or "")
    raw = await read_body(request)
    try:
        body = parse_json(raw)
    except ApiError as err:
        return JSONResponse(build_error_response(None, JSONParseError(message=str(err))))
    method = body.get("method") if isinstance(body, dict) else None
    scope = dict(request.scope)
    scope[_CALLER] = Caller(principal, app, agent.name, user_of(principal))
    release = None
    if method in _STREAMING:
        slots: StreamSlots = request.app.state.streams
        release = slots.take(principal)
    try:
        response = await surface.dispatcher.handle_requests(Request(scope, _replay(raw)))
    except BaseException:
        if release is not None:
            release()
        raise
    return _Releasing(response, release) if release is not None else response


class A2aRoutes:
    """A2A on the gateway, as a :class:`~adk_temporal.web.server.Surface`: each agent of the
    served app under ``/a2a/{agent}``, for the gateway's tokens."""

    def routes(self) -> list[BaseRoute]:
        """Each served agent's card and endpoint."""
        return [
            Route(f"{A2A_PATH}/{{agent}}/.well-known/agent-card.json", card, methods=["GET"]),
            Route(f"{A2A_PATH}/{{agent}}", rpc, methods=["POST"]),
        ]

    def attach(self, app: Starlette) -> None:
        """Serve ``app``'s gateway to its tokens (:meth:`A2aSurface.build`).

        Raises:
            ValueError: The gateway serves no app.
        """
        app.state.a2a = A2aSurface.build(app.state.gateway, app.state.tokens)
