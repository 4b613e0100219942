"""Server-rendered HTML: the templates, and refusals as pages.

Every page is a Jinja2 template under ``templates/`` that escapes whatever it prints, and a
variable a template names but is not given fails the render instead of printing nothing.
"""

from __future__ import annotations

from html import escape
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from .cookies import CSRF_FIELD
from .errors import ApiError

__all__ = ["error_page", "html_page", "render", "wants_html"]


def _escaped(value: Any) -> Markup:
    # Jinja would write &#34; and &#39;; html.escape's &quot; and &#x27; are what the pages
    # have always carried (and what tests match). Markup (a macro's output) passes as is.
    if hasattr(value, "__html__"):
        return Markup(value)
    return Markup(escape(str(value), quote=True))


_templates = Environment(
    loader=PackageLoader("adk_temporal.web", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    finalize=_escaped,
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.globals["csrf_field"] = CSRF_FIELD


def render(template: str, **context: Any) -> str:
    """The HTML of ``template`` (a name under ``templates/``) given ``context``.

    Raises:
        jinja2.UndefinedError: The template uses a variable ``context`` does not have.
    """
    return _templates.get_template(template).render(context)


def html_page(template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` renders from ``context``, as a response with ``status``."""
    return HTMLResponse(render(template, **context), status_code=status)


def error_page(err: ApiError) -> HTMLResponse:
    """A refusal as a page, with the same status the JSON refusal has."""
    reason = err.refusal.reason if err.refusal is not None else None
    return html_page(
        "error.html", status=err.status, message=err.message, kind=err.type, reason=reason
    )


def wants_html(request: Request) -> bool:
    """Whether the client prefers a page (a browser) to JSON."""
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept.split(",")[0]
