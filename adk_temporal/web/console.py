"""The web console (``adk-temporal web --console``): sign in, chat, approve, answer, inspect.

Plain server-rendered pages; one small script follows a running invocation over
server-sent events. Signed in by a cookie session (an ``EventSource`` cannot send an
``Authorization`` header); every form carries a CSRF token (:mod:`.cookies`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..events import Event
from ..ids import SessionKey
from .api import event_stream, gateway
from .auth import ALL_APPS, Scope, TokenBook, allows
from .body import read_form
from .cookies import CSRF_FIELD, ConsoleSessions, set_session_cookie
from .errors import ApiError
from .forms import AnswerForm, answer_form, form_value
from .gateway import Gateway, session_path
from .pages import html_page

__all__ = ["console_routes"]

_CLIP = 400
_WAITING = ("awaiting_confirmation", "awaiting_input")


def _sessions(request: Request) -> ConsoleSessions:
    sessions: ConsoleSessions = request.app.state.console_sessions
    return sessions


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "…"


def _app_url(app: str) -> str:
    return f"/console/apps/{quote(app, safe='')}"


def _session_url(ids: SessionKey) -> str:
    return session_path(ids, "/console")


def _page(request: Request, template: str, session_id: str, **context: Any) -> HTMLResponse:
    """A console page whose forms, the nav's sign-out one included, carry the CSRF token of
    ``session_id``."""
    sessions = _sessions(request)
    return html_page(
        template,
        csrf=sessions.csrf_token(session_id),
        signed_in=sessions.scope(session_id) is not None,
        **context,
    )


@dataclass(frozen=True)
class _Link:
    text: str
    url: str


@dataclass(frozen=True)
class _Card:
    """An open request as a card shows it (``templates/macros.html``, ``request_card``)."""

    kind: str
    id: str
    title: str
    call: str
    payload: str | None
    """The payload as indented JSON; ``None`` when only its digest was published."""
    digest: str
    action: str
    """The session's console URL, which the answer forms post below."""
    answer: AnswerForm | None


def _card(ids: SessionKey, request: dict[str, Any]) -> _Card:
    """The card of ``request``: a worker's whole request, or what the run published."""
    confirmation = request["kind"] == "confirmation"
    return _Card(
        kind=request["kind"],
        id=request["id"],
        title=request.get("hint" if confirmation else "message") or request["tool"],
        call=request.get("call") or request["tool"],
        payload=json.dumps(request["payload"], indent=2) if "payload" in request else None,
        digest=request.get("payload_digest", ""),
        action=_session_url(ids),
        answer=None if confirmation else answer_form(request.get("input_schema")),
    )


class _SignIn(Exception):
    """The browser is not signed in: go to the sign-in page."""


def _signed_in(request: Request, app: str | None) -> tuple[str, Scope]:
    """The session id and scope of a signed-in browser allowed to use ``app``.

    Raises:
        _SignIn: Not signed in.
        ApiError: 403 outside the scope.
    """
    sessions = _sessions(request)
    session_id = sessions.cookie_id(request)
    scope = sessions.scope(session_id)
    if session_id is None or scope is None:
        raise _SignIn
    if app is not None and not allows(scope, app):
        raise ApiError(403, "forbidden", f"your token may not use app {app!r}")
    return session_id, scope


async def _posted(request: Request, app: str | None) -> dict[str, str]:
    """The form of a console POST, once its sender is signed in and its CSRF token checks."""
    try:
        session_id, _ = _signed_in(request, app)
    except _SignIn:
        raise ApiError(401, "unauthenticated", "sign in at /console/sign-in first") from None
    form = await read_form(request)
    _sessions(request).check_csrf(session_id, form.get(CSRF_FIELD))
    return form


def _see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


# ---------------------------------------------------------------- sign in


async def sign_in_page(request: Request) -> Response:
    """The sign-in form; gives the browser a session id to bind the form's CSRF token to."""
    sessions = _sessions(request)
    session_id = sessions.cookie_id(request) or sessions.new_id()
    response = _page(request, "sign_in.html", session_id)
    set_session_cookie(response, session_id, request)
    return response


async def sign_in(request: Request) -> Response:
    """Check the token; bind a new session id to its scope, counted as the token's."""
    sessions = _sessions(request)
    form = await read_form(request)
    sessions.check_csrf(sessions.cookie_id(request), form.get(CSRF_FIELD))
    tokens: TokenBook = request.app.state.tokens
    token = form.get("token", "").strip()
    scope = tokens.authorize(token, None)
    sessions.sign_out(sessions.cookie_id(request))
    response = _see_other("/console")
    signed_in = sessions.sign_in(scope, principal=tokens.principal(token))
    set_session_cookie(response, signed_in, request)
    return response


async def sign_out(request: Request) -> Response:
    """Forget the browser's session."""
    await _posted(request, None)
    _sessions(request).sign_out(_sessions(request).cookie_id(request))
    response = _see_other("/console/sign-in")
    response.delete_cookie("adk_console", path="/")
    return response


# ---------------------------------------------------------------- apps


_WAITING_SHOWN = 50
"""The most waiting runs the app page lists."""


def _apps(served: Gateway, scope: Scope) -> list[str]:
    named = [served.app.name] if served.app is not None and served.app.name else []
    return sorted({*(a for a in named if allows(scope, a)), *(scope - {ALL_APPS})})


async def home(request: Request) -> Response:
    """The apps the token may use."""
    session_id, scope = _signed_in(request, None)
    apps = _apps(gateway(request), scope)
    if len(apps) == 1:
        return _see_other(_app_url(apps[0]))
    return _page(request, "home.html", session_id, apps=[_Link(a, _app_url(a)) for a in apps])


@dataclass(frozen=True)
class _Waiting:
    session: _Link
    cards: list[_Card]


@dataclass(frozen=True)
class _RunRow:
    session: _Link
    agent: str
    status: str
    started: str


async def app_page(request: Request) -> Response:
    """Start a chat; the runs waiting for a human; recent runs."""
    app = request.path_params["app"]
    session_id, _ = _signed_in(request, app)
    served = gateway(request)
    # From what each run published (one visibility query, whatever the number of runs or
    # workers); the session page shows a request's payload whole.
    waiting = [
        _Waiting(
            _Link(f"{ids.user_id}/{ids.session_id}", _session_url(ids)),
            [_card(ids, r.model_dump()) for r in published.requests],
        )
        for ids, published in (await served.waiting(app))[:_WAITING_SHOWN]
    ]
    runs = [
        _RunRow(
            _Link(
                f"{r.user_id}/{r.session_id}",
                _session_url(SessionKey(app, r.user_id, r.session_id)),
            ),
            r.agent,
            r.status,
            r.start_time or "",
        )
        for r in await served.list_runs(app, limit=20)
    ]
    return _page(
        request,
        "app.html",
        session_id,
        app=app,
        agents=served.agents(app),
        start_url=f"{_app_url(app)}/runs",
        waiting=waiting,
        runs=runs,
    )


async def start_chat(request: Request) -> Response:
    """Start an invocation from the new-chat form."""
    app = request.path_params["app"]
    form = await _posted(request, app)
    created = await gateway(request).start(
        app,
        form.get("user_id", ""),
        form.get("session_id") or None,
        form.get("agent", ""),
        form.get("message", ""),
    )
    return _see_other(_session_url(SessionKey(app, created.user_id, created.session_id)))


# ---------------------------------------------------------------- one session


def _event_lines(event: Event) -> list[tuple[str, str]]:
    """``(kind, text)`` for each part: what the console shows of an event."""
    lines: list[tuple[str, str]] = []
    for part in event.parts():
        if part.text:
            lines.append(("text", part.text))
        if part.function_call is not None:
            call = part.function_call
            lines.append(("call", f"{call.name}({json.dumps(call.args or {})})"))
        if part.function_response is not None:
            reply = part.function_response
            lines.append(("response", f"{reply.name} → {_clip(json.dumps(reply.response))}"))
    if event.error_message:
        lines.append(("error", f"{event.error_code}: {event.error_message}"))
    if event.actions.artifact_delta:
        saved = ", ".join(f"{k} v{v}" for k, v in event.actions.artifact_delta.items())
        lines.append(("delta", f"saved {saved}"))
    return lines


@dataclass(frozen=True)
class _EventView:
    id: str
    author: str
    lines: list[tuple[str, str]]


@dataclass(frozen=True)
class _RunLine:
    status: str
    agent: str
    workflow_id: str
    temporal_ui: str | None


@dataclass(frozen=True)
class _ArtifactRow:
    name: str
    versions: str
    types: str


def _ids(request: Request) -> SessionKey:
    p = request.path_params
    return SessionKey(p["app"], p["user"], p["session"])


async def session_page(request: Request) -> Response:
    """A session: its events (live while it runs), open requests, state and artifacts."""
    ids = _ids(request)
    session_id, _ = _signed_in(request, ids.app_name)
    served = gateway(request)
    stored = await served.session(ids)
    try:
        run = await served.show(ids)
    except ApiError as err:
        if err.status != 404:
            raise
        run = None
    line = status = None
    if run is not None:
        line = _RunLine(run.status, run.agent, run.workflow_id, run.links.temporal_ui)
        status = run.status
    cards = None
    if status in _WAITING:
        cards = [_card(ids, r) for r in (await served.pending(ids)).requests]
    events = [_EventView(e.id, e.author, _event_lines(e)) for e in stored.events] if stored else []
    artifacts = [
        _ArtifactRow(a.name, ", ".join(map(str, a.versions)), ", ".join(sorted(set(a.mime_types))))
        for a in await served.artifact_versions(ids)
    ]
    return _page(
        request,
        "session.html",
        session_id,
        user=ids.user_id,
        session=ids.session_id,
        url=_session_url(ids),
        run=line,
        events=events,
        follow=status == "running",
        cards=cards,
        refused=[] if run is None else run.refused_answers,
        can_send=status not in ("running", *_WAITING),
        agents=served.agents(ids.app_name),
        state=json.dumps(stored.state, indent=2, ensure_ascii=False) if stored else "{}",
        artifacts=artifacts,
    )


async def session_events(request: Request) -> Response:
    """The session's events as server-sent events, for the page's script."""
    ids = _ids(request)
    try:
        session_id, _ = _signed_in(request, ids.app_name)
    except _SignIn:
        raise ApiError(401, "unauthenticated", "sign in at /console/sign-in first") from None
    # Counted as the token's streams: a browser must not get around the token's limit.
    principal = _sessions(request).principal(session_id)
    return await event_stream(gateway(request), ids, request, principal)


async def send_message(request: Request) -> Response:
    """Start the session's next invocation."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    await gateway(request).start(
        ids.app_name, ids.user_id, ids.session_id, form.get("agent", ""), form.get("message", "")
    )
    return _see_other(_session_url(ids))


async def confirm(request: Request) -> Response:
    """Approve or reject from the console."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    decision = form.get("decision")
    if decision not in ("approve", "reject"):
        raise ApiError(422, "invalid_form", "decision must be approve or reject")
    request_id = form.get("confirmation_id", "")
    served = gateway(request)
    outcome = await served.confirm(ids, request_id, decision == "approve")
    if outcome.outcome == "applied":
        await served.settled(ids, request_id)
    return _see_other(_session_url(ids))


async def resume(request: Request) -> Response:
    """Answer an input request from its generated form."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    served = gateway(request)
    request_id = form.get("interrupt_id", "")
    requests = (await served.pending(ids)).requests
    schema = next((r.get("input_schema") for r in requests if r["id"] == request_id), None)
    outcome = await served.resume(ids, request_id, form_value(schema, form))
    if outcome.outcome == "applied":
        await served.settled(ids, request_id)
    return _see_other(_session_url(ids))


async def cancel(request: Request) -> Response:
    """Cancel the session's invocation."""
    ids = _ids(request)
    await _posted(request, ids.app_name)
    await gateway(request).cancel(ids)
    return _see_other(_session_url(ids))


def _redirecting(endpoint: Any) -> Any:
    """Send a browser that is not signed in to the sign-in page."""

    async def wrapped(request: Request) -> Response:
        try:
            response: Response = await endpoint(request)
        except _SignIn:
            return _see_other("/console/sign-in")
        return response

    wrapped.__doc__ = endpoint.__doc__
    return wrapped


def console_routes() -> list[BaseRoute]:
    """The console's pages, form targets and event stream."""
    session = "/console/apps/{app}/users/{user}/sessions/{session}"
    return [
        Route("/console", _redirecting(home), methods=["GET"]),
        Route("/console/sign-in", sign_in_page, methods=["GET"]),
        Route("/console/sign-in", sign_in, methods=["POST"]),
        Route("/console/sign-out", sign_out, methods=["POST"]),
        Route("/console/apps/{app}", _redirecting(app_page), methods=["GET"]),
        Route("/console/apps/{app}/runs", start_chat, methods=["POST"]),
        Route(session, _redirecting(session_page), methods=["GET"]),
        Route(f"{session}/events", session_events, methods=["GET"]),
        Route(f"{session}/messages", send_message, methods=["POST"]),
        Route(f"{session}/confirm", confirm, methods=["POST"]),
        Route(f"{session}/resume", resume, methods=["POST"]),
        Route(f"{session}/cancel", cancel, methods=["POST"]),
    ]
