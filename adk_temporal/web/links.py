"""Signed one-time answer links: ``GET`` shows what a link decides, ``POST`` applies it.

``GET`` never answers: mail scanners and link previews fetch every link they see. The token
is the credential (no bearer token): its signature, expiry and run are checked, and that it
works once is the run's own doing — the request is no longer open after the first answer.
"""

from __future__ import annotations

import logging
import re
import time
from urllib.parse import unquote_plus

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..signing import AnswerLink, LinkError, read_link
from .errors import ApiError
from .gateway import Gateway
from .pages import error_page, html_page, wants_html

__all__ = ["RedactLinks", "apply_link", "redacted_target", "show_link"]

# Everything after the links route is the token (also behind an extra or a doubled slash).
_LINK_PATH = re.compile(r"(/links?/)[^?\s]*", re.IGNORECASE)
# Only names no random token looks like: lower-case words (a name such as a base64 token
# followed by "=" padding would otherwise be kept).
_SAFE_NAME = re.compile(r"[a-z][a-z_\-]{0,31}")
_NAMES_SHOWN = 20


def redacted_target(target: str) -> str:
    """``target`` (a request's path and query) as a log line may show it: an answer link's
    token is ``…``, and of the query only the parameters' names are kept.

    Any query value may be a credential (``access_token``, ``key``, ``sig``, a pasted
    bearer token under a name nobody foresaw), so none is kept; a bare item (no ``=``) or a
    name that is not a lower-case word is shown as a value, ``…``.
    """
    path, mark, query = target.partition("?")
    path = _LINK_PATH.sub(r"\1…", path)
    if not mark:
        return path
    names: list[str] = []
    for item in re.split("[&;]", query):
        if not item:
            continue
        name, equals, _ = item.partition("=")
        name = unquote_plus(name)
        names.append(f"{name}=…" if equals and _SAFE_NAME.fullmatch(name) else "…")
    if len(names) > _NAMES_SHOWN:
        names = [*names[:_NAMES_SHOWN], "…"]
    return f"{path}?{'&'.join(names)}"


class RedactLinks(logging.Filter):
    """Keeps credentials out of the request paths logged: answer-link tokens and every
    query value (uvicorn's access log prints the path with its query string)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace each logged request target by :func:`redacted_target`'s."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                redacted_target(a) if isinstance(a, str) and a.startswith("/") else a
                for a in record.args
            )
        return True


def _link(request: Request) -> tuple[Gateway, AnswerLink]:
    served: Gateway = request.app.state.gateway
    if served.link_secret is None:
        raise ApiError(
            404,
            "links_disabled",
            "this gateway checks no answer links: the app has no "
            "notifications secret (App(notifications=...) or --link-secret-env)",
        )
    try:
        link = read_link(served.link_secret, request.path_params["token"], now=time.time())
    except LinkError as err:
        raise ApiError(400, "invalid_link", str(err)) from None
    return served, link


async def show_link(request: Request) -> Response:
    """``GET /v1/links/{token}``: what the link would answer, and a button that does."""
    try:
        served, link = _link(request)
        _, published = await served.described(served.adk.handle(link.workflow_id))
    except ApiError as err:
        return error_page(err)
    verb = "Approve" if link.decision == "approve" else "Reject"
    request_ = next((r for r in published.requests if r.id == link.request_id), None)
    if request_ is None:
        return html_page(
            "link_closed.html", request_id=link.request_id, workflow_id=link.workflow_id
        )
    return html_page(
        "link.html",
        verb=verb,
        decision=link.decision,
        summary=request_.hint or request_.call,
        call=request_.call,
        workflow_id=link.workflow_id,
        request_id=link.request_id,
        action=request.url.path,
    )


async def apply_link(request: Request) -> Response:
    """``POST /v1/links/{token}``: apply the link's answer, once."""
    html = wants_html(request)
    try:
        served, link = _link(request)
        outcome = await served.apply_link(link)
    except ApiError as err:
        if html:
            return error_page(err)
        raise
    status = 200 if outcome.outcome == "applied" else 202
    if not html:
        return JSONResponse(outcome.model_dump(mode="json"), status_code=status)
    return html_page(
        "link_applied.html",
        status=status,
        request_id=link.request_id,
        done="approved" if link.decision == "approve" else "rejected",
        accepted=status == 202,
    )
