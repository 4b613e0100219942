"""Next and previous links of a console list read a page at a time from visibility.

Temporal's page tokens only go forward, so the way back travels in the URL: ``back`` holds
the tokens of the pages before this one, ``~`` standing for the first page (a character no
token contains).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request

__all__ = ["PageLinks", "page_links", "page_token"]

_FIRST = "~"
_MAX_BACK = 50
"""The most pages a previous link leads back through; deeper, the oldest are forgotten."""


@dataclass(frozen=True)
class PageLinks:
    """The URLs of the previous and next pages; ``None`` where there is none."""

    previous: str | None
    next: str | None


def page_token(request: Request) -> str | None:
    """The token of the page the request asks for; ``None`` for the first page."""
    return request.query_params.get("page") or None


def _url(base: str, token: str | None, back: list[str]) -> str:
    params = {"page": token or "", "back": ".".join(back)}
    query = urlencode({k: v for k, v in params.items() if v})
    return f"{base}?{query}" if query else base


def page_links(request: Request, base: str, next_token: str | None) -> PageLinks:
    """The links around the page the request shows, whose listing handed out ``next_token``."""
    back = [t for t in (request.query_params.get("back") or "").split(".") if t]
    here = page_token(request)
    previous = None
    if here is not None:
        before = back[-1] if back else _FIRST
        previous = _url(base, None if before == _FIRST else before, back[:-1])
    following = None
    if next_token is not None:
        following = _url(base, next_token, [*back, here or _FIRST][-_MAX_BACK:])
    return PageLinks(previous, following)
