"""The web console (``adk-temporal web --console``): sign in, chat, approve, answer, inspect.

Plain server-rendered pages; one small script follows a running invocation over
server-sent events. Signed in by a cookie session (an ``EventSource`` cannot send an
``Authorization`` header); every form carries a CSRF token (:mod:`.cookies`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..events import Event
from .api import event_stream, gateway
from .auth import ALL_APPS, Scope, TokenBook, allows
from .body import read_form
from .cookies import CSRF_FIELD, ConsoleSessions, set_session_cookie
from .errors import ApiError
from .forms import form_value, schema_fields
from .gateway import Gateway, SessionIds, session_path
from .pages import esc, html_page

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


def _session_url(ids: SessionIds) -> str:
    return session_path(ids, "/console")


def _nav(request: Request) -> str:
    sessions = _sessions(request)
    session_id = sessions.cookie_id(request)
    if sessions.scope(session_id) is None:
        return '<a href="/console/sign-in">Sign in</a>'
    return '<a href="/console">Apps</a> ' + _form(
        "/console/sign-out", sessions.csrf_token(session_id or ""), "", "Sign out"
    )


def _form(action: str, csrf: str, fields: str, button: str, *, css: str = "") -> str:
    klass = f' class="{css}"' if css else ""
    return (
        f'<form method="post" action="{esc(action)}"{klass}>'
        f'<input type="hidden" name="{CSRF_FIELD}" value="{esc(csrf)}">{fields}'
        f'<button type="submit">{esc(button)}</button></form>'
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
    fields = (
        '<div class="field"><label for="token">Access token</label>'
        '<input type="password" id="token" name="token" autocomplete="off" required></div>'
    )
    body = _form("/console/sign-in", sessions.csrf_token(session_id), fields, "Sign in")
    response = html_page("Sign in", body, nav=_nav(request))
    set_session_cookie(response, session_id, request.url.scheme == "https")
    return response


async def sign_in(request: Request) -> Response:
    """Check the token; bind a new session id to its scope."""
    sessions = _sessions(request)
    form = await read_form(request)
    sessions.check_csrf(sessions.cookie_id(request), form.get(CSRF_FIELD))
    tokens: TokenBook = request.app.state.tokens
    scope = tokens.authorize(form.get("token", "").strip(), None)
    sessions.sign_out(sessions.cookie_id(request))
    response = _see_other("/console")
    set_session_cookie(response, sessions.sign_in(scope), request.url.scheme == "https")
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
    _, scope = _signed_in(request, None)
    apps = _apps(gateway(request), scope)
    if len(apps) == 1:
        return _see_other(_app_url(apps[0]))
    items = "".join(f'<li><a href="{esc(_app_url(a))}">{esc(a)}</a></li>' for a in apps)
    body = f"<ul>{items}</ul>" if items else "<p>Open /console/apps/NAME for an app.</p>"
    return html_page("Apps", body, nav=_nav(request))


def _agent_field(served: Gateway, app: str) -> str:
    agents = served.agents(app)
    if agents is None:
        return (
            '<div class="field"><label for="agent">Agent</label>'
            '<input id="agent" name="agent" required></div>'
        )
    options = "".join(f'<option value="{esc(a)}">{esc(a)}</option>' for a in agents)
    return (
        '<div class="field"><label for="agent">Agent</label>'
        f'<select id="agent" name="agent">{options}</select></div>'
    )


def _message_field() -> str:
    return (
        '<div class="field"><label for="message">Message</label>'
        '<textarea id="message" name="message" rows="3" required></textarea></div>'
    )


async def app_page(request: Request) -> Response:
    """Start a chat; the runs waiting for a human; recent runs."""
    app = request.path_params["app"]
    session_id, _ = _signed_in(request, app)
    csrf = _sessions(request).csrf_token(session_id)
    served = gateway(request)
    start = _form(
        f"{_app_url(app)}/runs",
        csrf,
        _agent_field(served, app) + '<div class="field"><label for="user_id">User id</label>'
        '<input id="user_id" name="user_id" value="console-user" required></div>'
        '<div class="field"><label for="session_id">Session id (empty: a new one)</label>'
        '<input id="session_id" name="session_id"></div>' + _message_field(),
        "Send",
    )
    # From what each run published (one visibility query, whatever the number of runs or
    # workers); the session page shows a request's payload whole.
    waiting = [
        f'<li><a href="{esc(_session_url(ids))}">{esc("/".join(ids[1:]))}</a>'
        + "".join(_request_html(ids, r.model_dump(), csrf) for r in published.requests)
        + "</li>"
        for ids, published in (await served.waiting(app))[:_WAITING_SHOWN]
    ]
    runs = await served.list_runs(app, limit=20)
    rows = "".join(
        f'<tr><td><a href="{esc(_session_url((app, r.user_id, r.session_id)))}">'
        f"{esc(r.user_id)}/{esc(r.session_id)}</a></td><td>{esc(r.agent)}</td>"
        f"<td>{esc(r.status)}</td><td>{esc(r.start_time or '')}</td></tr>"
        for r in runs
    )
    body = (
        f"<section><h2>New chat</h2>{start}</section>"
        f"<section><h2>Waiting for a human</h2>"
        + (f'<ul class="waiting">{"".join(waiting)}</ul>' if waiting else "<p>None.</p>")
        + "</section><section><h2>Recent runs</h2>"
        + (
            "<table><thead><tr><th>Session</th><th>Agent</th><th>Status</th>"
            f"<th>Started</th></tr></thead><tbody>{rows}</tbody></table>"
            if rows
            else "<p>None yet.</p>"
        )
        + "</section>"
    )
    return html_page(f"App {app}", body, nav=_nav(request))


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
    return _see_other(_session_url((app, created.user_id, created.session_id)))


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


def _event_html(event: Event) -> str:
    body = "".join(f'<p class="{k}">{esc(t)}</p>' for k, t in _event_lines(event))
    return (
        f'<li class="event" data-event-id="{esc(event.id)}"><strong>{esc(event.author)}</strong>'
        f"{body}</li>"
    )


def _request_html(ids: SessionIds, request: dict[str, Any], csrf: str) -> str:
    action = _session_url(ids)
    rid = esc(request["id"])
    if request["kind"] == "confirmation":
        payload = request.get("payload")
        shown = (
            f"<pre>{esc(json.dumps(payload, indent=2))}</pre>"
            if "payload" in request
            else f"<p>payload digest {esc(request.get('payload_digest', ''))}</p>"
        )
        fields = f'<input type="hidden" name="confirmation_id" value="{rid}">'
        return (
            f'<article class="request" aria-label="Approval request {rid}">'
            f"<h3>Approval: {esc(request.get('hint') or request['tool'])}</h3>"
            f"<p>Call <code>{esc(request.get('call') or request['tool'])}</code></p>{shown}"
            '<div class="decide">'
            + _form(f"{action}/confirm", csrf, fields + _decision("approve"), "Approve")
            + _form(f"{action}/confirm", csrf, fields + _decision("reject"), "Reject")
            + "</div></article>"
        )
    fields = f'<input type="hidden" name="interrupt_id" value="{rid}">' + schema_fields(
        request.get("input_schema")
    )
    return (
        f'<article class="request" aria-label="Input request {rid}">'
        f"<h3>Input: {esc(request.get('message') or request['tool'])}</h3>"
        + _form(f"{action}/resume", csrf, fields, "Send answer")
        + "</article>"
    )


def _decision(value: str) -> str:
    return f'<input type="hidden" name="decision" value="{value}">'


def _ids(request: Request) -> SessionIds:
    p = request.path_params
    return p["app"], p["user"], p["session"]


async def session_page(request: Request) -> Response:
    """A session: its events (live while it runs), open requests, state and artifacts."""
    ids = _ids(request)
    session_id, _ = _signed_in(request, ids[0])
    csrf = _sessions(request).csrf_token(session_id)
    served = gateway(request)
    stored = await served.session(ids)
    events = "".join(_event_html(e) for e in stored.events) if stored else ""
    try:
        run = await served.show(ids)
    except ApiError as err:
        if err.status != 404:
            raise
        run = None
    url = _session_url(ids)
    parts = []
    if run is not None:
        ui = run.links.temporal_ui
        parts.append(
            f'<p>Status <strong id="status">{esc(run.status)}</strong> · agent '
            f"{esc(run.agent)} · <code>{esc(run.workflow_id)}</code>"
            + (f' · <a href="{esc(ui)}">open in the Temporal UI</a>' if ui else "")
            + "</p>"
        )
    live = (
        f'<p id="follow" role="status" data-events="{esc(url)}/events">Following the run…</p>'
        if run is not None and run.status == "running"
        else ""
    )
    parts.append(
        f'<section><h2>Conversation</h2><ol id="events" class="events">{events}</ol>{live}'
        "</section>"
    )
    if run is not None and run.status in _WAITING:
        requests = (await served.pending(ids)).requests
        parts.append(
            "<section><h2>Waiting for you</h2>"
            + "".join(_request_html(ids, r, csrf) for r in requests)
            + "</section>"
        )
    if run is not None and run.refused_answers:
        refused = "".join(f"<li>{esc(r)}</li>" for r in run.refused_answers)
        parts.append(f"<section><h2>Refused answers</h2><ul>{refused}</ul></section>")
    if run is None or run.status not in ("running", *_WAITING):
        parts.append(
            "<section><h2>Send a message</h2>"
            + _form(
                f"{url}/messages", csrf, _agent_field(served, ids[0]) + _message_field(), "Send"
            )
            + "</section>"
        )
    else:
        parts.append(_form(f"{url}/cancel", csrf, "", "Cancel the run", css="cancel"))
    state = json.dumps(stored.state, indent=2, ensure_ascii=False) if stored else "{}"
    parts.append(f"<section><h2>State</h2><pre>{esc(state)}</pre></section>")
    artifacts = await served.artifact_versions(ids)
    rows = "".join(
        f"<tr><td>{esc(a.name)}</td><td>{esc(', '.join(map(str, a.versions)))}</td>"
        f"<td>{esc(', '.join(sorted(set(a.mime_types))))}</td></tr>"
        for a in artifacts
    )
    parts.append(
        "<section><h2>Artifacts</h2>"
        + (
            "<table><thead><tr><th>Name</th><th>Versions</th><th>Type</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            if rows
            else "<p>None.</p>"
        )
        + "</section>"
    )
    title = f"Session {ids[1]}/{ids[2]}"
    return html_page(title, "".join(parts), nav=_nav(request))


async def session_events(request: Request) -> Response:
    """The session's events as server-sent events, for the page's script."""
    ids = _ids(request)
    try:
        _signed_in(request, ids[0])
    except _SignIn:
        raise ApiError(401, "unauthenticated", "sign in at /console/sign-in first") from None
    return await event_stream(gateway(request), ids, request)


async def send_message(request: Request) -> Response:
    """Start the session's next invocation."""
    ids = _ids(request)
    form = await _posted(request, ids[0])
    await gateway(request).start(
        ids[0], ids[1], ids[2], form.get("agent", ""), form.get("message", "")
    )
    return _see_other(_session_url(ids))


async def confirm(request: Request) -> Response:
    """Approve or reject from the console."""
    ids = _ids(request)
    form = await _posted(request, ids[0])
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
    form = await _posted(request, ids[0])
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
    await _posted(request, ids[0])
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
