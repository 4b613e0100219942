"""Signed one-time answer links: ``GET`` shows what a link decides, ``POST`` applies it.

``GET`` never answers: mail scanners and link previews fetch every link they see. The token
is the credential (no bearer token): its signature, expiry and run are checked, and that it
works once is the run's own doing — the request is no longer open after the first answer.
"""

from __future__ import annotations

import logging
import re
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..signing import AnswerLink, LinkError, read_link
from .errors import ApiError
from .gateway import Gateway
from .pages import error_page, html_page, wants_html

__all__ = ["RedactLinks", "apply_link", "show_link"]

_LINK_PATH = re.compile(r"(/v1/links/)[^/?\s]+")


class RedactLinks(logging.Filter):
    """Keeps answer-link tokens out of access logs: each is a credential."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the token in the logged path by ``…``."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                _LINK_PATH.sub(r"\1…", a) if isinstance(a, str) else a for a in record.args
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
