"""The JSON API under ``/v1``: start, list, show, answer, cancel and follow invocations;
rewind and fork sessions.

Every route but the answer links needs ``Authorization: Bearer TOKEN`` with the path's app
in the token's scope. A session's invocation is the resource
``/v1/apps/{app}/users/{user}/sessions/{session}``.
"""

from __future__ import annotations

from typing import get_args
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..audit import AuditList, audit_entries, revocation_entries
from ..double_texting import QueuedSummary
from ..flow.messages import AdkStatus
from ..ids import SessionKey, workflow_id_for
from ..keys import ForgetEntry, Target
from ..rewind import ForkResult, RewindResult
from ..visibility import run_status
from .approving import APPROVAL_OPERATIONS
from .body import read_model
from .caller import (
    authorized,
    gateway,
    groups,
    page_size,
    principal,
    query_filter,
    session_of,
)
from .errors import ApiError
from .gateway import Gateway, session_path
from .links import apply_link, show_link
from .models import (
    AnswerOutcome,
    CancelOutcome,
    ConfirmBody,
    ForgetBody,
    ForkBody,
    PendingView,
    ResumeBody,
    RewindBody,
    RunCreated,
    RunList,
    RunView,
    StartRunBody,
    WaitingList,
    WaitingRun,
    WithdrawBody,
)
from .openapi import Operation
from .sse import sse_response
from .stored import (
    ArtifactEntry,
    ArtifactList,
    ArtifactView,
    StateView,
    version_param,
)

__all__ = ["OPERATIONS", "SESSION", "USER"]

USER = "/v1/apps/{app}/users/{user}"
"""The resource of one user of an app."""
SESSION = f"{USER}/sessions/{{session}}"
"""The resource of one session's invocation."""
_STATUSES = frozenset(get_args(AdkStatus))


def _json(
    model: RunCreated
    | RunList
    | RunView
    | PendingView
    | AnswerOutcome
    | CancelOutcome
    | WaitingList,
    status: int = 200,
) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json"), status_code=status)


async def start_run(request: Request) -> Response:
    """``POST /v1/apps/{app}/runs``."""
    app = authorized(request)
    body = await read_model(request, StartRunBody)
    created = await gateway(request).start(
        app,
        body.user_id,
        body.session_id,
        body.agent,
        body.message,
        pin_agent=body.pin_agent,
        double_texting=body.double_texting,
        started_by=principal(request),
    )
    return _json(created, 201 if created.status == "running" else 202)


async def list_runs(request: Request) -> Response:
    """``GET /v1/apps/{app}/runs``."""
    app = authorized(request)
    statuses = [s for value in request.query_params.getlist("status") for s in value.split(",")]
    unknown = set(statuses) - _STATUSES
    if unknown:
        raise ApiError(
            422,
            "invalid_query",
            f"unknown status {', '.join(sorted(unknown))}; use {', '.join(sorted(_STATUSES))}",
        )
    size = page_size(request, request.query_params.get("limit", "50"))
    runs = await gateway(request).runs_page(
        app,
        statuses=statuses,
        user_id=query_filter(request, "user_id"),
        session_id=query_filter(request, "session_id"),
        page_size=size,
        page_token=request.query_params.get("page_token") or None,
    )
    return _json(runs)


async def list_waiting(request: Request) -> Response:
    """``GET /v1/apps/{app}/pending``: one page of the runs waiting for an answer."""
    app = authorized(request)
    served = gateway(request)
    found, token = await served.waiting(
        app,
        page_size=page_size(request, "50"),
        page_token=request.query_params.get("page_token") or None,
    )
    runs = [
        WaitingRun(
            workflow_id=workflow_id_for(ids),
            user_id=ids.user_id,
            session_id=ids.session_id,
            requests=[r.model_dump(mode="json") for r in published.requests],
            links=served.links(ids, workflow_id_for(ids), None),
            schedule_id=published.schedule_id,
        )
        for ids, published in found
    ]
    return _json(WaitingList(runs=runs, next_page_token=token))


async def show_run(request: Request) -> Response:
    """``GET {session}``."""
    return _json(await gateway(request).show(session_of(request)))


async def pending(request: Request) -> Response:
    """``GET {session}/pending``."""
    return _json(await gateway(request).pending(session_of(request)))


async def session_state(request: Request) -> Response:
    """``GET {session}/state``: the session's state as stored."""
    ids = session_of(request)
    stored = await gateway(request).session(ids)
    if stored is None:
        raise ApiError(404, "unknown_session", f"session {'/'.join(ids)} has no stored state")
    return JSONResponse(StateView(state=stored.state).model_dump(mode="json"))


async def audit(request: Request) -> Response:
    """``GET {session}/audit``: the session's answered requests — decision, who, channel,
    when, call digest — oldest first."""
    ids = session_of(request)
    stored = await gateway(request).session(ids)
    if stored is None:
        raise ApiError(404, "unknown_session", f"session {'/'.join(ids)} is not stored")
    grants = await gateway(request).grants(ids.app_name, ids.user_id, ids.session_id)
    listed = AuditList(entries=audit_entries(stored.events) + revocation_entries(grants))
    return JSONResponse(listed.model_dump(mode="json"))


async def artifacts(request: Request) -> Response:
    """``GET {session}/artifacts``: the session's artifacts and their versions."""
    ids = session_of(request)
    base = f"{session_path(ids)}/artifacts"
    listed = ArtifactList(
        artifacts=[
            ArtifactEntry(
                name=a.name,
                versions=a.versions,
                mime_types=a.mime_types,
                url=f"{base}/{quote(a.name, safe='')}?version={a.versions[-1]}",
            )
            for a in await gateway(request).artifact_versions(ids)
        ]
    )
    return JSONResponse(listed.model_dump(mode="json"))


async def artifact(request: Request) -> Response:
    """``GET {session}/artifacts/{name}?version=``: one version's content as JSON."""
    ids = session_of(request)
    version = version_param(request)
    content = await gateway(request).artifact(ids, request.path_params["name"], version)
    return JSONResponse(content.view().model_dump(mode="json"))


def _answered(outcome: AnswerOutcome) -> JSONResponse:
    return _json(outcome, 200 if outcome.outcome == "applied" else 202)


async def confirm(request: Request) -> Response:
    """``POST {session}/confirm``; recorded as answered by the token (in the token's
    groups), never as the body's ``answered_by``, ``groups`` or ``channel``."""
    ids = session_of(request)
    body = await read_model(request, ConfirmBody)
    return _answered(
        await gateway(request).confirm(
            ids,
            body.confirmation_id,
            body.confirmed,
            body.payload,
            body.call_digest,
            answered_by=principal(request),
            groups=groups(request),
            edited_args=body.edited_args,
            grant=body.grant,
        )
    )


async def resume(request: Request) -> Response:
    """``POST {session}/resume``; recorded as answered by the token."""
    ids = session_of(request)
    body = await read_model(request, ResumeBody)
    outcome = await gateway(request).resume(
        ids, body.interrupt_id, body.input, answered_by=principal(request), groups=groups(request)
    )
    return _answered(outcome)


async def cancel(request: Request) -> Response:
    """``POST {session}/cancel``."""
    return _json(await gateway(request).cancel(session_of(request)), 202)


async def withdraw(request: Request) -> Response:
    """``POST {session}/withdraw``."""
    ids = session_of(request)
    body = await read_model(request, WithdrawBody)
    withdrawn = await gateway(request).withdraw(ids, body.invocation_id)
    return JSONResponse(withdrawn.model_dump(mode="json"))


async def rewind(request: Request) -> Response:
    """``POST {session}/rewind``: 201 with the rewind event, 200 when a retry found it."""
    ids = session_of(request)
    body = await read_model(request, RewindBody)
    result = await gateway(request).rewind(ids, body.before_invocation_id, body.event_id)
    return JSONResponse(result.model_dump(mode="json"), status_code=201 if result.appended else 200)


async def fork(request: Request) -> Response:
    """``POST {session}/fork``: 201 with the new session."""
    ids = session_of(request)
    body = await read_model(request, ForkBody)
    result = await gateway(request).fork(ids, body.invocation_id, body.new_session_id)
    return JSONResponse(result.model_dump(mode="json"), status_code=201)


async def forget_session(request: Request) -> Response:
    """``POST {session}/forget``: cancel its open run, delete its rows, artifacts and key."""
    ids = session_of(request)
    body = await read_model(request, ForgetBody)
    target = Target(app_name=ids.app_name, user_id=ids.user_id, session_id=ids.session_id)
    return await _forgot(request, target, body)


async def forget_user(request: Request) -> Response:
    """``POST {user}/forget``: forget every session of the user (``all`` must say so)."""
    app = authorized(request)
    body = await read_model(request, ForgetBody)
    if not body.all:
        raise ApiError(
            422, "confirm_all", 'this forgets every session of the user: send "all": true'
        )
    return await _forgot(request, Target(app_name=app, user_id=request.path_params["user"]), body)


async def _forgot(request: Request, target: Target, body: ForgetBody) -> Response:
    entry = await gateway(request).forget(
        target, by=principal(request), reason=body.reason, dry_run=body.dry_run
    )
    return JSONResponse(entry.model_dump(mode="json"))


async def events(request: Request) -> Response:
    """``GET {session}/events``: server-sent events."""
    return await event_stream(gateway(request), session_of(request), request)


async def event_stream(
    served: Gateway, ids: SessionKey, request: Request, follower: str | None = None
) -> Response:
    """The SSE response following the session's current invocation, behind the event the
    client names in ``Last-Event-ID`` (sent by a reconnecting ``EventSource``), counted
    against the stream limits of ``follower`` (by default the bearer token's principal).

    Raises:
        ApiError: 404 when the session has no invocation; 429 when the principal or the
            gateway already serves as many streams as it may.
    """
    handle = served.handle(ids)
    await served.described(handle)

    async def final_status() -> str:
        description, _ = await served.described(handle)
        return run_status(description)

    follower = principal(request) if follower is None else follower
    after = request.headers.get("last-event-id") or None
    return sse_response(
        handle,
        final_status,
        served.keepalive,
        after,
        slots=request.app.state.streams,
        principal=follower,
    )


_ANSWER_ERRORS = (400, 404, 409, 413, 422, 503)

OPERATIONS = [
    Operation(
        "POST",
        "/v1/apps/{app}/runs",
        start_run,
        "Start an invocation",
        body=StartRunBody,
        reply=RunCreated,
        replies=(201,),
        errors=(400, 409, 413, 422),
    ),
    Operation(
        "GET",
        "/v1/apps/{app}/runs",
        list_runs,
        "List invocations (Temporal visibility)",
        reply=RunList,
        errors=(400, 422),
        query=(
            ("status", "AdkStatus, repeatable or comma-separated"),
            ("user_id", "only this user's"),
            ("session_id", "only this session's"),
            ("limit", "at most this many (default 50)"),
            ("page_size", "a page of at most this many, 1 to 1000 (default: limit)"),
            ("page_token", "the next_page_token of the previous page"),
        ),
    ),
    Operation(
        "GET",
        "/v1/apps/{app}/pending",
        list_waiting,
        "List the runs waiting for an answer, a page at a time (Temporal visibility)",
        reply=WaitingList,
        errors=(400, 422),
        query=(
            ("page_size", "a page of at most this many, 1 to 1000 (default 50)"),
            ("page_token", "the next_page_token of the previous page"),
        ),
    ),
    Operation(
        "GET", SESSION, show_run, "Show the session's invocation", reply=RunView, errors=(404,)
    ),
    Operation(
        "GET",
        f"{SESSION}/pending",
        pending,
        "Open requests (from a worker, or the run's memo when none answers)",
        reply=PendingView,
        errors=(404,),
    ),
    Operation(
        "GET",
        f"{SESSION}/state",
        session_state,
        "The session's state as stored",
        reply=StateView,
        errors=(404,),
    ),
    Operation(
        "GET",
        f"{SESSION}/audit",
        audit,
        "The session's answers: decision, who answered, through which channel, when",
        reply=AuditList,
        errors=(404,),
    ),
    Operation(
        "GET",
        f"{SESSION}/artifacts",
        artifacts,
        "The session's artifacts, each with its versions and the URL of its latest",
        reply=ArtifactList,
    ),
    Operation(
        "GET",
        f"{SESSION}/artifacts/{{name}}",
        artifact,
        "One version of an artifact: text (text, JSON) or base64 (other bytes)",
        reply=ArtifactView,
        errors=(404, 422, 503),
        query=(("version", "the version, from 1 (default: the latest)"),),
    ),
    Operation(
        "POST",
        f"{SESSION}/confirm",
        confirm,
        "Approve or reject a confirmation request",
        body=ConfirmBody,
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=_ANSWER_ERRORS,
    ),
    Operation(
        "POST",
        f"{SESSION}/resume",
        resume,
        "Answer an input request",
        body=ResumeBody,
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=_ANSWER_ERRORS,
    ),
    Operation(
        "POST",
        f"{SESSION}/cancel",
        cancel,
        "Cancel the invocation",
        reply=CancelOutcome,
        replies=(202,),
        errors=(404, 409),
    ),
    Operation(
        "POST",
        f"{SESSION}/withdraw",
        withdraw,
        "Take a queued message (double texting) out of the session's queue before it runs",
        body=WithdrawBody,
        reply=QueuedSummary,
        errors=(404, 422),
    ),
    Operation(
        "POST",
        f"{SESSION}/rewind",
        rewind,
        "Rewind the session to before an invocation (state, initial state included, and "
        "artifacts restored by one appended event and new versions; refused while an "
        "invocation runs or waits)",
        body=RewindBody,
        reply=RewindResult,
        replies=(200, 201),
        errors=(400, 404, 409, 413, 422, 503),
    ),
    Operation(
        "POST",
        f"{SESSION}/fork",
        fork,
        "Copy the session as of an invocation into a new session of the same user",
        body=ForkBody,
        reply=ForkResult,
        replies=(201,),
        errors=(400, 404, 409, 413, 422, 503),
    ),
    Operation(
        "POST",
        f"{SESSION}/forget",
        forget_session,
        "Forget the session: its open run cancelled, its rows, artifacts and data key deleted "
        "(its payloads in history no longer decode); logged with the token and reason",
        body=ForgetBody,
        reply=ForgetEntry,
        errors=(400, 409, 422, 503),
    ),
    Operation(
        "POST",
        f"{USER}/forget",
        forget_user,
        "Forget every session of the user, its user-scoped artifacts and state",
        body=ForgetBody,
        reply=ForgetEntry,
        errors=(400, 409, 422, 503),
    ),
    Operation(
        "GET",
        f"{SESSION}/events",
        events,
        "Follow the invocation's events (server-sent events: adk_event, adk_partial, end)",
        replies=(200,),
        errors=(404,),
        media_type="text/event-stream",
    ),
    Operation(
        "GET",
        "/v1/links/{token}",
        show_link,
        "The page of a signed answer link (answers nothing)",
        media_type="text/html",
        errors=(400,),
        bearer=False,
    ),
    Operation(
        "POST",
        "/v1/links/{token}",
        apply_link,
        "Apply a signed answer link once",
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=(400, 404, 409, 503),
        bearer=False,
    ),
]
"""The API's routes, in the order the OpenAPI document lists them."""

OPERATIONS += APPROVAL_OPERATIONS
