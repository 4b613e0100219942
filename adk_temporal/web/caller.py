"""Who calls the JSON API and about what: the gateway served, the path's app and session
once the bearer token may use them, the token's principal and groups, the query's filters
and page size."""

from __future__ import annotations

from starlette.requests import Request

from ..ids import SessionKey, id_problem
from ..visibility import MAX_PAGE_SIZE, quote_problem
from .auth import TokenBook, bearer_token
from .errors import ApiError
from .gateway import Gateway

__all__ = [
    "authorized",
    "gateway",
    "groups",
    "page_size",
    "principal",
    "query_filter",
    "session_of",
]


def gateway(request: Request) -> Gateway:
    """The gateway the app serves."""
    served: Gateway = request.app.state.gateway
    return served


def authorized(request: Request) -> str:
    """The path's app, once the bearer token may use it."""
    app: str = request.path_params["app"]
    tokens: TokenBook = request.app.state.tokens
    tokens.authorize(bearer_token(request), app)
    return app


def session_of(request: Request) -> SessionKey:
    """The path's session, once the bearer token may use its app."""
    app = authorized(request)
    return SessionKey(app, request.path_params["user"], request.path_params["session"])


def query_filter(request: Request, field: str) -> str | None:
    """A list filter from the query string, once it is an id a visibility query can hold.

    Raises:
        ApiError: 400 naming the field: it breaks the id grammar or cannot be quoted (a
            filter reaches the visibility query, where a quote could end its literal).
    """
    value = request.query_params.get(field)
    if value:
        problem = id_problem(field, value) or quote_problem(field, value)
        if problem is not None:
            raise ApiError(400, "invalid_query", problem)
    return value


def page_size(request: Request, default: str) -> int:
    """``page_size`` from the query string (``default`` when absent).

    Raises:
        ApiError: 422 when it is not a number from 1 to :data:`MAX_PAGE_SIZE`.
    """
    value = request.query_params.get("page_size", default)
    if not value.isdecimal() or not 1 <= int(value) <= MAX_PAGE_SIZE:
        raise ApiError(
            422, "invalid_query", f"page_size (limit) must be a number from 1 to {MAX_PAGE_SIZE}"
        )
    return int(value)


def principal(request: Request) -> str:
    """Who the bearer token is: what an answer records, whatever its body claims."""
    tokens: TokenBook = request.app.state.tokens
    return tokens.principal(bearer_token(request) or "")


def groups(request: Request) -> list[str]:
    """The groups the tokens file puts the bearer token's holder in (never the body's)."""
    tokens: TokenBook = request.app.state.tokens
    return tokens.groups(bearer_token(request) or "")
