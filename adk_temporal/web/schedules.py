"""The schedules API under ``/v1/apps/{app}/schedules`` (:mod:`adk_temporal.schedules`):
create, list, describe, pause, unpause, trigger, backfill and delete an app's schedules, and
list the invocations one started. A token scoped to the path's app sees that app's only."""

from __future__ import annotations

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..schedules import AgentSchedule, Schedules, ScheduleView
from ..schedules.spec import ScheduleNotFoundError
from ..visibility import run_status
from ..workflows.messages import ADK_SESSION
from .auth import TokenBook, bearer_token
from .body import parse_json, read_body, read_model, validated
from .caller import gateway
from .errors import ApiError
from .models import (
    BackfillBody,
    NoteBody,
    ScheduleDone,
    ScheduledRun,
    ScheduledRuns,
    ScheduleList,
    TriggerBody,
)
from .openapi import Operation

__all__ = ["SCHEDULE_OPERATIONS", "schedules_of"]

_BASE = "/v1/apps/{app}/schedules"
_ONE = f"{_BASE}/{{schedule_id}}"


def schedules_of(request: Request) -> Schedules:
    """The schedules of the gateway's connection and task queue."""
    return Schedules(gateway(request).adk)


def _app(request: Request) -> str:
    """The path's app, once the bearer token may use it."""
    app: str = request.path_params["app"]
    tokens: TokenBook = request.app.state.tokens
    tokens.authorize(bearer_token(request), app)
    return app


async def _mine(request: Request) -> tuple[Schedules, ScheduleView]:
    """The path's schedule, which must be of the path's app (another's reads as unknown)."""
    app, schedule_id = _app(request), request.path_params["schedule_id"]
    schedules = schedules_of(request)
    view = await schedules.describe(schedule_id)
    if view.schedule.app_name != app:
        raise ScheduleNotFoundError(f"app {app!r} has no schedule {schedule_id!r}")
    return schedules, view


def _json(model: BaseModel, status: int = 200) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json"), status_code=status)


async def list_schedules(request: Request) -> Response:
    """``GET /v1/apps/{app}/schedules``."""
    app = _app(request)
    return _json(ScheduleList(schedules=await schedules_of(request).list(app_name=app)))


async def create_schedule(request: Request) -> Response:
    """``POST /v1/apps/{app}/schedules``: the body's ``app_name`` may be left out."""
    app = _app(request)
    data = parse_json(await read_body(request))
    if not isinstance(data, dict) or data.get("app_name", app) != app:
        raise ApiError(422, "invalid_body", f"the body must be a schedule of app {app!r}")
    wanted = validated(AgentSchedule, {**data, "app_name": app})
    return _json(await schedules_of(request).create(wanted), 201)


async def describe_schedule(request: Request) -> Response:
    """``GET /v1/apps/{app}/schedules/{schedule_id}``."""
    _, view = await _mine(request)
    return _json(view)


async def delete_schedule(request: Request) -> Response:
    """``DELETE /v1/apps/{app}/schedules/{schedule_id}``."""
    schedules, view = await _mine(request)
    await schedules.delete(view.schedule.schedule_id)
    return _json(ScheduleDone(schedule_id=view.schedule.schedule_id, done="deleted"))


async def pause_schedule(request: Request) -> Response:
    """``POST .../pause``."""
    return await _noted(request, pause=True)


async def unpause_schedule(request: Request) -> Response:
    """``POST .../unpause``."""
    return await _noted(request, pause=False)


async def _noted(request: Request, *, pause: bool) -> Response:
    """Pause or unpause the path's schedule with the body's note; the schedule after."""
    schedules, view = await _mine(request)
    body = await read_model(request, NoteBody)
    sid = view.schedule.schedule_id
    await (schedules.pause if pause else schedules.unpause)(sid, body.note)
    return _json(await schedules.describe(sid))


async def trigger_schedule(request: Request) -> Response:
    """``POST .../trigger``."""
    schedules, view = await _mine(request)
    body = await read_model(request, TriggerBody)
    await schedules.trigger(view.schedule.schedule_id, overlap=body.overlap)
    return _json(ScheduleDone(schedule_id=view.schedule.schedule_id, done="triggered"), 202)


async def backfill_schedule(request: Request) -> Response:
    """``POST .../backfill``."""
    schedules, view = await _mine(request)
    body = await read_model(request, BackfillBody)
    if body.start_at.tzinfo is None or body.end_at.tzinfo is None:
        raise ApiError(422, "invalid_body", "start_at and end_at need a time zone (Z or +hh:mm)")
    if body.end_at <= body.start_at:
        raise ApiError(422, "invalid_body", "end_at must come after start_at")
    sid = view.schedule.schedule_id
    await schedules.backfill(sid, body.start_at, body.end_at, overlap=body.overlap)
    return _json(ScheduleDone(schedule_id=sid, done="backfilled"), 202)


async def schedule_runs(request: Request) -> Response:
    """``GET .../invocations``."""
    schedules, view = await _mine(request)
    page = await schedules.invocations(
        view.schedule.schedule_id, page_token=request.query_params.get("page_token") or None
    )
    runs = [
        ScheduledRun(
            workflow_id=wf.id,
            run_id=wf.run_id,
            session_id=wf.typed_search_attributes.get(ADK_SESSION) or "",
            status=run_status(wf),
            start_time=wf.start_time.isoformat() if wf.start_time else None,
        )
        for wf in page.executions
    ]
    return _json(ScheduledRuns(runs=runs, next_page_token=page.next_page_token))


_ERRORS = (401, 403, 404)

SCHEDULE_OPERATIONS = [
    Operation("GET", _BASE, list_schedules, "The app's schedules", reply=ScheduleList),
    Operation(
        "POST",
        _BASE,
        create_schedule,
        "Create a schedule: a message run against an agent on a cron or an interval",
        body=AgentSchedule,
        reply=ScheduleView,
        replies=(201,),
        errors=(400, 409, 413, 422),
    ),
    Operation("GET", _ONE, describe_schedule, "One schedule", reply=ScheduleView, errors=_ERRORS),
    Operation(
        "DELETE", _ONE, delete_schedule, "Delete a schedule", reply=ScheduleDone, errors=_ERRORS
    ),
    Operation(
        "POST",
        f"{_ONE}/pause",
        pause_schedule,
        "Pause a schedule (with a note)",
        body=NoteBody,
        reply=ScheduleView,
        errors=(*_ERRORS, 422),
    ),
    Operation(
        "POST",
        f"{_ONE}/unpause",
        unpause_schedule,
        "Unpause a schedule (with a note)",
        body=NoteBody,
        reply=ScheduleView,
        errors=(*_ERRORS, 422),
    ),
    Operation(
        "POST",
        f"{_ONE}/trigger",
        trigger_schedule,
        "Fire a schedule once now",
        body=TriggerBody,
        reply=ScheduleDone,
        replies=(202,),
        errors=(*_ERRORS, 422),
    ),
    Operation(
        "POST",
        f"{_ONE}/backfill",
        backfill_schedule,
        "Fire a schedule for each time it was due in a past window",
        body=BackfillBody,
        reply=ScheduleDone,
        replies=(202,),
        errors=(*_ERRORS, 422),
    ),
    Operation(
        "GET",
        f"{_ONE}/invocations",
        schedule_runs,
        "The invocations a schedule started, newest first",
        reply=ScheduledRuns,
        errors=_ERRORS,
        query=(("page_token", "the next_page_token of the previous page"),),
    ),
]
"""The schedules API's routes, in the order the OpenAPI document lists them."""
