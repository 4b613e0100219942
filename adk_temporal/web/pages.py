"""Server-rendered HTML: the page frame, escaping, and refusals as pages."""

from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files
from string import Template
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from .errors import ApiError

__all__ = ["error_page", "esc", "html_page", "wants_html"]


def esc(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return escape(str(value), quote=True)


@cache
def _frame() -> Template:
    return Template((files(__package__) / "templates" / "page.html").read_text())


def html_page(title: str, body: str, *, nav: str = "", status: int = 200) -> HTMLResponse:
    """A whole page: ``body`` (already HTML) under an ``h1`` of ``title``."""
    text = _frame().substitute(title=esc(title), body=body, nav=nav)
    return HTMLResponse(text, status_code=status)


def error_page(err: ApiError) -> HTMLResponse:
    """A refusal as a page, with the same status the JSON refusal has."""
    body = f'<p role="alert" class="error">{esc(err.message)}</p><p>({esc(err.type)})</p>'
    return html_page("Refused", body, status=err.status)


def wants_html(request: Request) -> bool:
    """Whether the client prefers a page (a browser) to JSON."""
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept.split(",")[0]
