"""The web console (``adk-temporal web --console``): sign in, chat, approve, answer, inspect.

Plain server-rendered pages; one small script follows a running invocation over
server-sent events. Signed in by a cookie session (an ``EventSource`` cannot send an
``Authorization`` header); every form carries a CSRF token (:mod:`.cookies`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from temporalio.client import WorkflowExecution

from ..answers import Refused
from ..approvals import (
    GrantNotFoundError,
    InboxAction,
    InboxFilter,
)
from ..events import Event
from ..flow.messages import PREVIEW_BYTES, call_summary
from ..history import USER_AUTHOR
from ..ids import SessionKey, workflow_id_for
from ..schedules import ScheduleView
from ..visibility import run_status
from ..workflows.messages import ADK_SESSION, Published
from .api import event_stream
from .auth import ALL_APPS, Scope, TokenBook, allows
from .body import read_form
from .caller import gateway
from .chat import ChatCard, chat_cards, clipped_json
from .cookies import CSRF_FIELD, ConsoleSessions, set_session_cookie
from .errors import ApiError
from .forms import AnswerForm, answer_form, form_value
from .gateway import Gateway, refusal_error, session_path
from .humantime import ago, duration, waiting_for
from .pages import html_page
from .paging import page_links, page_token
from .schedules import schedules_of
from .stored import file_response, version_param

__all__ = ["console_routes"]

_WAITING = ("awaiting_confirmation", "awaiting_input")


def _sessions(request: Request) -> ConsoleSessions:
    sessions: ConsoleSessions = request.app.state.console_sessions
    return sessions


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
    tool: str
    call: str
    args: str | None
    """The call's arguments as indented JSON; ``None`` when too large to publish."""
    payload: str | None
    """The payload as indented JSON (cut when ``cut``); ``None`` when not published."""
    cut: bool
    """Only the payload's first bytes are shown: the session page has it whole."""
    digest: str
    waited: str
    action: str
    """The session's console URL, which the answer forms post below."""
    answer: AnswerForm | None
    inbox: str = ""
    """Whose inbox, who claimed it until when, when it is due, its votes: one line."""
    claimed: bool = False
    """Someone holds a claim on it now."""


def _inbox_line(request: dict[str, Any], now: float) -> tuple[str, bool]:
    """A card's inbox line (assignee, claim, due time, votes) and whether it is claimed."""
    parts: list[str] = []
    if request.get("assignee"):
        parts.append(f"assigned to {request['assignee']}")
    claim = request.get("claim") or {}
    by = request.get("claimed_by") or claim.get("by")
    until: float = request.get("claimed_until") or claim.get("until") or 0.0
    held = bool(by) and until > now
    if held:
        parts.append(f"claimed by {by} for {duration(until - now)} more")
    due = request.get("due_at")
    if due is not None:
        parts.append(
            f"overdue by {duration(now - due)}" if due < now else f"due in {duration(due - now)}"
        )
    votes = request.get("votes") or []
    needed = request.get("approvals") or (request.get("policy") or {}).get("approvals") or 1
    if needed > 1 or votes:
        names = ", ".join(f"{v['by']} {_decided(v)}" for v in votes)
        parts.append(f"{len(votes)} of {needed} approvals" + (f" ({names})" if names else ""))
    return " · ".join(parts), held


def _decided(vote: dict[str, Any]) -> str:
    """A vote's decision as a listing (``decision``) or a worker (``approve``) gives it."""
    return str(vote.get("decision") or ("approved" if vote.get("approve") else "rejected"))


def _payload(request: dict[str, Any]) -> tuple[str | None, bool]:
    """The payload to show and whether it is cut: whole from a worker, or the preview."""
    if "payload" in request:
        return json.dumps(request["payload"], indent=2, ensure_ascii=False, default=str), False
    preview: str = request.get("payload_preview") or ""
    return preview or None, request.get("payload_size", 0) > PREVIEW_BYTES


def _card(ids: SessionKey, request: dict[str, Any], now: float) -> _Card:
    """The card of ``request``: a worker's whole request, or what the run published."""
    confirmation = request["kind"] == "confirmation"
    args = request.get("args")
    payload, cut = _payload(request) if confirmation else (None, False)
    line, held = _inbox_line(request, now)
    return _Card(
        kind=request["kind"],
        id=request["id"],
        title=request.get("hint" if confirmation else "message") or request["tool"],
        tool=request["tool"],
        call=request.get("call") or call_summary(request["tool"], args or {}),
        args=None if args is None else clipped_json(args),
        payload=payload,
        cut=cut,
        digest=request.get("payload_digest", ""),
        waited=waiting_for(request.get("opened_at"), now),
        action=_session_url(ids),
        answer=None if confirmation else answer_form(request.get("input_schema")),
        inbox=line,
        claimed=held,
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


def _answerer(request: Request, app: str) -> tuple[str | None, list[str]]:
    """Who a console answer is recorded as: the signed-in principal and the token's groups
    (after ``_posted``)."""
    session_id, _ = _signed_in(request, app)
    sessions = _sessions(request)
    return sessions.principal(session_id), sessions.groups(session_id)


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
    signed_in = sessions.sign_in(
        scope, principal=tokens.principal(token), groups=tokens.groups(token)
    )
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
"""The most waiting runs one page of the app page lists."""


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
    waited: str
    cards: list[_Card]


@dataclass(frozen=True)
class _RunRow:
    session: _Link
    agent: str
    status: str
    started: str
    started_at: str


def _opened(published: Published) -> float | None:
    """When the run's oldest open request was opened, if the run recorded it."""
    return min((r.opened_at for r in published.requests if r.opened_at is not None), default=None)


async def app_page(request: Request) -> Response:
    """Start a chat; the runs waiting for a human; recent runs."""
    app = request.path_params["app"]
    session_id, _ = _signed_in(request, app)
    served = gateway(request)
    # From what each run published (one visibility call a page, whatever the number of runs
    # or workers); the session page shows a request's payload whole.
    found, next_token = await served.waiting(
        app, page_size=_WAITING_SHOWN, page_token=page_token(request)
    )
    now = time.time()
    # Longest waiting first (the visibility list is newest first).
    found.sort(key=lambda run: _opened(run[1]) or now)
    mine = InboxFilter(viewer=_sessions(request).principal(session_id))
    waiting = [
        _Waiting(
            _Link(f"{ids.user_id}/{ids.session_id}", _session_url(ids)),
            waiting_for(_opened(published), now),
            [_card(ids, r.model_dump(), now) for r in published.requests if r.in_view(mine, now)],
        )
        for ids, published in found
    ]
    runs = [
        _RunRow(
            _Link(
                f"{r.user_id}/{r.session_id}",
                _session_url(SessionKey(app, r.user_id, r.session_id)),
            ),
            r.agent,
            r.status,
            ago(r.start_time, now),
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
        waiting_pages=page_links(request, _app_url(app), next_token),
        runs=runs,
        schedules_url=f"{_app_url(app)}/schedules",
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


@dataclass(frozen=True)
class _EventView:
    id: str
    author: str
    cards: list[ChatCard]


@dataclass(frozen=True)
class _RunLine:
    status: str
    agent: str
    workflow_id: str
    temporal_ui: str | None
    unpolled: list[str]
    """A line per step that waits on a task queue no worker polls."""


@dataclass(frozen=True)
class _ArtifactRow:
    name: str
    versions: list[_Link]
    types: str


@dataclass(frozen=True)
class _Turn:
    """An invocation the session can be rewound to before: its id and what the user said."""

    invocation_id: str
    message: str


def _turns(events: Sequence[Event]) -> list[_Turn]:
    """The session's invocations begun by a user message, oldest first."""
    seen: dict[str, _Turn] = {}
    for event in events:
        text = event.text() if event.author == USER_AUTHOR else ""
        if text and event.invocation_id not in seen:
            clipped = text if len(text) <= 80 else text[:79] + "…"
            seen[event.invocation_id] = _Turn(event.invocation_id, clipped)
    return list(seen.values())


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
        line = _RunLine(
            run.status,
            run.agent,
            run.workflow_id,
            run.links.temporal_ui,
            [w.line() for w in run.unpolled_waits],
        )
        status = run.status
    cards = None
    if status in _WAITING:
        now = time.time()
        cards = [_card(ids, r, now) for r in (await served.pending(ids)).requests]
    raw = request.query_params.get("raw") == "1"
    events = [
        _EventView(e.id, e.author, chat_cards(e, raw=raw))
        for e in (stored.events if stored else [])
    ]
    artifacts = [
        _ArtifactRow(
            a.name,
            [_Link(f"v{v}", _artifact_url(ids, a.name, v)) for v in a.versions],
            ", ".join(sorted(set(a.mime_types))),
        )
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
        events=[e for e in events if e.cards],
        raw=raw,
        follow=status == "running",
        cards=cards,
        refused=[] if run is None else run.refused_answers,
        graph=None if run is None else run.graph,
        queued=[] if run is None else run.queued,
        can_send=status not in ("running", *_WAITING),
        agents=served.agents(ids.app_name),
        state=json.dumps(stored.state, indent=2, ensure_ascii=False) if stored else "{}",
        artifacts=artifacts,
        turns=_turns(stored.events) if stored else [],
        grants=await _grant_rows(served, ids),
    )


@dataclass(frozen=True)
class _GrantRow:
    id: str
    tool: str
    where: str | None
    uses: int
    max_calls: int
    granted_by: str | None
    status: str


async def _grant_rows(served: Gateway, ids: SessionKey) -> list[_GrantRow]:
    """The standing grants the session's calls may use, as the session page lists them."""
    now = time.time()
    return [
        _GrantRow(g.id, g.tool, g.where, g.uses, g.max_calls, g.granted_by, g.status(now))
        for g in await served.grants(ids.app_name, ids.user_id, ids.session_id)
    ]


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
    who, _ = _answerer(request, ids.app_name)
    await gateway(request).start(
        ids.app_name,
        ids.user_id,
        ids.session_id,
        form.get("agent", ""),
        form.get("message", ""),
        started_by=who,
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
    who, groups = _answerer(request, ids.app_name)
    outcome = await served.confirm(
        ids, request_id, decision == "approve", answered_by=who, groups=groups, channel="console"
    )
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
    who, groups = _answerer(request, ids.app_name)
    outcome = await served.resume(
        ids, request_id, form_value(schema, form), answered_by=who, groups=groups, channel="console"
    )
    if outcome.outcome == "applied":
        await served.settled(ids, request_id)
    return _see_other(_session_url(ids))


async def inbox(request: Request) -> Response:
    """Claim, release or assign a request, as the signed-in principal."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    who, groups = _answerer(request, ids.app_name)
    fields = {
        "request_id": form.get("request_id", ""),
        "action": form.get("action", ""),
        "answered_by": who,
        "groups": groups,
        "channel": "console",
        "assignee": form.get("assignee") or None,
    }
    try:
        taken = InboxAction.model_validate(fields)
    except ValidationError as err:
        wrong = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in err.errors())
        raise ApiError(422, "invalid_form", wrong) from None
    served = gateway(request)
    outcome = await served.desk.inbox(workflow_id_for(ids), taken, wait=served.answer_wait)
    if isinstance(outcome, Refused):
        raise refusal_error(outcome)
    return _see_other(_session_url(ids))


async def confirm_all(request: Request) -> Response:
    """Approve or reject every open confirmation request, each as its own answer."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    decision = form.get("decision")
    if decision not in ("approve", "reject"):
        raise ApiError(422, "invalid_form", "decision must be approve or reject")
    who, groups = _answerer(request, ids.app_name)
    served = gateway(request)
    outcomes = await served.desk.confirm_batch(
        workflow_id_for(ids),
        decision == "approve",
        answered_by=who,
        groups=groups,
        channel="console",
        policy="update_first",
        wait=served.answer_wait,
    )
    refused = [o for _, o in outcomes if isinstance(o, Refused)]
    if refused:
        raise refusal_error(refused[0])
    return _see_other(_session_url(ids))


async def revoke_grant(request: Request) -> Response:
    """Revoke a standing grant, as the signed-in principal."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    who, _ = _answerer(request, ids.app_name)
    served = gateway(request)
    if served.sessions is None:
        raise ApiError(503, "no_session_store", "this gateway has no session store")
    try:
        await served.sessions.revoke_grant(
            ids.app_name, form.get("grant_id", ""), by=who, now=time.time()
        )
    except GrantNotFoundError as err:
        raise ApiError(404, "unknown_grant", str(err)) from None
    return _see_other(_session_url(ids))


async def cancel(request: Request) -> Response:
    """Cancel the session's invocation, once the form's "yes, cancel" box is ticked."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    if form.get("sure") != "yes":
        raise ApiError(422, "invalid_form", 'tick "Yes, cancel this run" to cancel it')
    await gateway(request).cancel(ids)
    return _see_other(_session_url(ids))


async def rewind(request: Request) -> Response:
    """Rewind the session to before a chosen invocation, once the box is ticked; refused
    (409) while an invocation of the session runs or waits."""
    ids = _ids(request)
    form = await _posted(request, ids.app_name)
    if form.get("sure") != "yes":
        raise ApiError(422, "invalid_form", 'tick "Yes, rewind" to rewind the session')
    await gateway(request).rewind(ids, form.get("before_invocation_id", ""))
    return _see_other(_session_url(ids))


# -------------------------------------------------------------- schedules


@dataclass(frozen=True)
class _ScheduleRow:
    """A schedule as its page shows it, with its latest invocations and its forms."""

    id: str
    what: str
    when: str
    sessions: str
    state: str
    next_run: str
    fired: int
    runs: list[_Link]
    action_url: str


def _schedule_row(app: str, view: ScheduleView, runs: list[_Link]) -> _ScheduleRow:
    s = view.schedule
    when = [*(f"cron {c}" for c in s.cron), *([f"every {s.every}"] if s.every else [])]
    return _ScheduleRow(
        id=s.schedule_id,
        what=f"{s.agent} for {s.user_id}: {s.message}",
        when=", ".join(when),
        sessions=f"shared session {s.shared_session}" if s.sessions == "shared" else "per firing",
        state=f"paused: {view.note}" if view.paused else "active",
        next_run=view.next_runs[0].isoformat() if view.next_runs and not view.paused else "",
        fired=view.fired,
        runs=runs,
        action_url=f"{_app_url(app)}/schedules/{quote(s.schedule_id, safe='')}",
    )


def _scheduled_run(app: str, user_id: str, wf: WorkflowExecution) -> _Link:
    """A scheduled invocation: its session and status, linking to the session's page."""
    session = wf.typed_search_attributes.get(ADK_SESSION) or ""
    url = _session_url(SessionKey(app, user_id, session)) if session else ""
    return _Link(f"{session} · {run_status(wf)}", url)


async def schedules_page(request: Request) -> Response:
    """The app's schedules: what each runs and when, its state, its latest invocations, and
    forms to pause, unpause and fire it."""
    app = request.path_params["app"]
    session_id, _ = _signed_in(request, app)
    schedules = schedules_of(request)
    rows = []
    for view in await schedules.list(app_name=app):
        page = await schedules.invocations(view.schedule.schedule_id, page_size=5)
        runs = [_scheduled_run(app, view.schedule.user_id, wf) for wf in page.executions]
        rows.append(_schedule_row(app, view, runs))
    return _page(request, "schedules.html", session_id, app=app, schedules=rows)


async def schedule_action(request: Request) -> Response:
    """Pause (with the form's note), unpause or fire one of the app's schedules."""
    app, schedule_id = request.path_params["app"], request.path_params["schedule_id"]
    form = await _posted(request, app)
    schedules = schedules_of(request)
    view = await schedules.describe(schedule_id)
    if view.schedule.app_name != app:
        raise ApiError(404, "schedule_not_found", f"app {app!r} has no schedule {schedule_id!r}")
    action = request.path_params["action"]
    note = form.get("note") or None
    if action == "pause":
        await schedules.pause(schedule_id, note)
    elif action == "unpause":
        await schedules.unpause(schedule_id, note)
    elif action == "trigger":
        await schedules.trigger(schedule_id)
    else:
        raise ApiError(404, "not_found", f"no schedule action {action!r}")
    return _see_other(f"{_app_url(app)}/schedules")


def _artifact_url(ids: SessionKey, name: str, version: int, *, file: bool = False) -> str:
    """The page of an artifact version, or (``file``) its bytes."""
    tail = "/file" if file else ""
    return f"{_session_url(ids)}/artifacts/{quote(name, safe='')}{tail}?version={version}"


async def artifact_page(request: Request) -> Response:
    """One artifact version opened: text, JSON indented, an image; and its download."""
    ids = _ids(request)
    session_id, _ = _signed_in(request, ids.app_name)
    content = await gateway(request).artifact(
        ids, request.path_params["name"], version_param(request)
    )
    return _page(
        request,
        "artifact.html",
        session_id,
        name=content.name,
        version=content.version,
        mime_type=content.mime_type,
        kind=content.kind,
        size=len(content.data),
        text=content.shown(),
        file_url=_artifact_url(ids, content.name, content.version, file=True),
        session_url=_session_url(ids),
    )


async def artifact_file(request: Request) -> Response:
    """One artifact version's bytes as saved (``download=1``: always as an attachment)."""
    ids = _ids(request)
    _signed_in(request, ids.app_name)
    content = await gateway(request).artifact(
        ids, request.path_params["name"], version_param(request)
    )
    return file_response(content, download=request.query_params.get("download") == "1")


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
        Route("/console/apps/{app}/schedules", _redirecting(schedules_page), methods=["GET"]),
        Route(
            "/console/apps/{app}/schedules/{schedule_id}/{action}",
            schedule_action,
            methods=["POST"],
        ),
        Route(session, _redirecting(session_page), methods=["GET"]),
        Route(f"{session}/events", session_events, methods=["GET"]),
        Route(f"{session}/messages", send_message, methods=["POST"]),
        Route(f"{session}/confirm", confirm, methods=["POST"]),
        Route(f"{session}/resume", resume, methods=["POST"]),
        Route(f"{session}/inbox", inbox, methods=["POST"]),
        Route(f"{session}/confirm-all", confirm_all, methods=["POST"]),
        Route(f"{session}/grants/revoke", revoke_grant, methods=["POST"]),
        Route(f"{session}/cancel", cancel, methods=["POST"]),
        Route(f"{session}/rewind", rewind, methods=["POST"]),
        Route(f"{session}/artifacts/{{name}}", _redirecting(artifact_page), methods=["GET"]),
        Route(f"{session}/artifacts/{{name}}/file", _redirecting(artifact_file), methods=["GET"]),
    ]
