"""The routes of google-adk 2.13's API server (``google/adk/cli/api_server.py``), served
over the gateway: apps, sessions, artifacts, ``/run`` and ``/run_sse``, ``/version``,
``/health``.

Refusals use the gateway's JSON shape (``{"error": {"type", "message"}}``) with ADK's
statuses. ``/run_live`` (bidirectional streaming over a WebSocket), saving and deleting
artifacts through the API, memory and the dev-only routes are not served.
"""

from __future__ import annotations

import platform
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pydantic_core
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ...artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    ListArtifactVersionsRequest,
    ListRequest,
    LoadRequest,
    VersionsRequest,
)
from ...errors import ArtifactNotFoundError, InvalidArtifactRequestError, SessionExistsError
from ...events import Event
from ...ids import SessionKey
from ...sessions import SessionService, create_session
from ..body import parse_json, read_body, read_model, validated
from ..errors import ApiError, api_error
from ..gateway import Gateway
from .access import AdkAccess
from .apps import AdkApps
from .runs import AdkRuns, RunFailedError, apply_state_delta
from .wire import (
    CreateSessionBody,
    RunBody,
    UpdateSessionBody,
    adk_event,
    adk_session,
    adk_version,
    genai_json,
)

__all__ = ["AdkSurface", "adk_routes"]

SESSIONS = "/apps/{app}/users/{user}/sessions"
SESSION = f"{SESSIONS}/{{session}}"
ARTIFACTS = f"{SESSION}/artifacts"


@dataclass(frozen=True)
class AdkSurface:
    """What ADK's routes serve: the gateway, the apps it offers and who may call."""

    gateway: Gateway
    access: AdkAccess

    @property
    def apps(self) -> AdkApps:
        """The ADK apps of the served app."""
        return AdkApps(self.gateway.app)

    @property
    def runs(self) -> AdkRuns:
        """``/run`` over the gateway."""
        return AdkRuns(self.gateway, self.apps)

    def sessions(self) -> SessionService:
        """The workers' session store.

        Raises:
            ApiError: 503 when the gateway was started without it.
        """
        if self.gateway.sessions is None:
            raise ApiError(503, "no_session_store", "this gateway has no session store")
        return self.gateway.sessions

    def artifacts(self) -> ArtifactService:
        """The workers' artifact store.

        Raises:
            ApiError: 503 when the gateway was started without it.
        """
        if self.gateway.artifacts is None:
            raise ApiError(503, "no_artifact_store", "this gateway has no artifact store")
        return self.gateway.artifacts


def _surface(request: Request) -> AdkSurface:
    served: AdkSurface = request.app.state.adk
    return served


def _app(request: Request) -> tuple[AdkSurface, str, str]:
    """The surface, the path's app (served, and usable by the caller) and who calls."""
    surface = _surface(request)
    app = surface.apps.target(request.path_params["app"]).app
    return surface, app, surface.access.authorize(request, app)


def _session_key(request: Request) -> tuple[AdkSurface, SessionKey, str]:
    surface, app, principal = _app(request)
    return (
        surface,
        SessionKey(app, request.path_params["user"], request.path_params["session"]),
        principal,
    )


async def health(request: Request) -> Response:
    """``GET /health``."""
    return JSONResponse({"status": "ok"})


async def adk_version_info(request: Request) -> Response:
    """``GET /version``: this gateway's version, in ADK's shape."""
    try:
        served = version("adk-temporal")
    except PackageNotFoundError:
        served = "0"
    return JSONResponse(
        {"version": served, "language": "python", "language_version": platform.python_version()}
    )


async def list_apps(request: Request) -> Response:
    """``GET /list-apps`` (``?detailed=true``: each app's info)."""
    surface = _surface(request)
    names = surface.access.visible(request, surface.apps.names())
    if request.query_params.get("detailed", "").lower() == "true":
        return JSONResponse({"apps": [surface.apps.info(n) for n in names]})
    return JSONResponse(names)


async def app_info(request: Request) -> Response:
    """``GET /apps/{app}/app-info``."""
    surface, app, _ = _app(request)
    return JSONResponse(surface.apps.info(app))


async def list_sessions(request: Request) -> Response:
    """``GET .../sessions``: the user's sessions, without their events."""
    surface, app, _ = _app(request)
    listed = await surface.sessions().list(app, request.path_params["user"])
    return JSONResponse([adk_session(s, events=False) for s in listed])


async def _create(surface: AdkSurface, ids: SessionKey, state: dict[str, Any] | None) -> Response:
    try:
        created = await create_session(
            surface.sessions(),
            app_name=ids.app_name,
            user_id=ids.user_id,
            state=state,
            session_id=ids.session_id or None,
            budgets=surface.gateway.adk.budgets,
        )
    except SessionExistsError as err:
        raise ApiError(409, "session_exists", f"Session already exists: {ids.session_id}") from err
    return JSONResponse(adk_session(created))


async def create(request: Request) -> Response:
    """``POST .../sessions``: a session with an optional id and initial state."""
    surface, app, _ = _app(request)
    raw = await read_body(request)
    body = validated(CreateSessionBody, parse_json(raw)) if raw.strip() else CreateSessionBody()
    if body.events:
        raise ApiError(
            422, "events_not_supported", "restoring events into a new session is not served"
        )
    ids = SessionKey(app, request.path_params["user"], body.session_id or "")
    return await _create(surface, ids, body.state)


async def create_with_id(request: Request) -> Response:
    """``POST .../sessions/{id}`` (deprecated by ADK): the body is the initial state."""
    surface, ids, _ = _session_key(request)
    raw = await read_body(request)
    state = parse_json(raw) if raw.strip() else None
    if state is not None and not isinstance(state, dict):
        raise ApiError(422, "invalid_body", "the body must be the initial state, a JSON object")
    return await _create(surface, ids, state)


async def _stored(surface: AdkSurface, ids: SessionKey) -> Any:
    try:
        return await surface.sessions().get(ids)
    except LookupError:
        raise ApiError(404, "session_not_found", "Session not found") from None


async def get_session(request: Request) -> Response:
    """``GET .../sessions/{id}``: the session with its events."""
    surface, ids, _ = _session_key(request)
    return JSONResponse(adk_session(await _stored(surface, ids)))


async def delete_session(request: Request) -> Response:
    """``DELETE .../sessions/{id}``; refused while an invocation of it runs or waits."""
    surface, ids, _ = _session_key(request)
    if await surface.gateway.adk.session_busy(ids):
        raise ApiError(
            409,
            "session_busy",
            f"session {ids} has an invocation running or waiting; cancel it first",
        )
    await surface.sessions().delete(ids)
    return JSONResponse(None)


async def update_session(request: Request) -> Response:
    """``PATCH .../sessions/{id}``: apply a state delta without running the agent."""
    surface, ids, _ = _session_key(request)
    body = await read_model(request, UpdateSessionBody)
    await _stored(surface, ids)
    await apply_state_delta(surface.gateway, ids, body.state_delta)
    return JSONResponse(adk_session(await _stored(surface, ids)))


async def _artifact_call(call: Awaitable[Any]) -> Any:
    try:
        return await call
    except (ArtifactNotFoundError, InvalidArtifactRequestError) as err:
        raise ApiError(404, "artifact_not_found", str(err)) from err


def _version(request: Request, value: str | None) -> int:
    """A version from the path or query (``latest`` or absent: 0, the latest)."""
    if value is None or value == "latest":
        return 0
    if not value.isdecimal() or int(value) < 1:
        raise ApiError(422, "invalid_version", f"Invalid version ID: {value!r}")
    return int(value)


async def artifact_names(request: Request) -> Response:
    """``GET .../artifacts``: the names the session sees."""
    surface, ids, _ = _session_key(request)
    listed = await surface.artifacts().list(ListRequest.of(ids))
    return JSONResponse(list(listed.file_names))


def _named(request: Request) -> tuple[ArtifactService, SessionKey, str]:
    surface, ids, _ = _session_key(request)
    return surface.artifacts(), ids, request.path_params["name"]


async def artifact_versions(request: Request) -> Response:
    """``GET .../artifacts/{name}/versions``: the version numbers."""
    store, ids, name = _named(request)
    found = await _artifact_call(store.versions(VersionsRequest.of(ids, file_name=name)))
    return JSONResponse(list(found.versions))


async def _load(request: Request, raw_version: str | None) -> Response:
    store, ids, name = _named(request)
    number = _version(request, raw_version)
    loaded = await _artifact_call(store.load(LoadRequest.of(ids, file_name=name, version=number)))
    return JSONResponse(genai_json(loaded.part))


async def load_artifact(request: Request) -> Response:
    """``GET .../artifacts/{name}?version=``: a version's part (the latest by default)."""
    return await _load(request, request.query_params.get("version"))


async def load_version(request: Request) -> Response:
    """``GET .../artifacts/{name}/versions/{version}`` (a number or ``latest``)."""
    return await _load(request, request.path_params["version"])


async def version_metadata(request: Request) -> Response:
    """``GET .../artifacts/{name}/versions/{version}/metadata``."""
    store, ids, name = _named(request)
    number = _version(request, request.path_params["version"])
    if not number:
        listed = await _artifact_call(store.versions(VersionsRequest.of(ids, file_name=name)))
        number = listed.versions[-1]
    found = await _artifact_call(
        store.get_artifact_version(
            GetArtifactVersionRequest.of(ids, file_name=name, version=number)
        )
    )
    return JSONResponse(adk_version(found.artifact_version))


async def versions_metadata(request: Request) -> Response:
    """``GET .../artifacts/{name}/versions/metadata``: every version described."""
    store, ids, name = _named(request)
    found = await _artifact_call(
        store.list_artifact_versions(ListArtifactVersionsRequest.of(ids, file_name=name))
    )
    return JSONResponse([adk_version(v) for v in found.artifact_versions])


async def _opened(request: Request) -> tuple[RunBody, AsyncIterator[Event]]:
    surface = _surface(request)
    body = await read_model(request, RunBody)
    app = surface.apps.target(body.app_name).app
    principal = surface.access.authorize(request, app)
    return body, await surface.runs.open(body, principal, surface.access.groups(request))


async def run(request: Request) -> Response:
    """``POST /run``: the invocation's events as a list, once it pauses or ends."""
    _, events = await _opened(request)
    try:
        return JSONResponse([adk_event(e) async for e in events])
    except RunFailedError as err:
        raise ApiError(500, "run_failed", str(err)) from err


def _sse(data: Any) -> str:
    return f"data: {pydantic_core.to_json(data).decode()}\n\n"


def _streamed(event: Event, answering: bool) -> list[Event]:
    """ADK's dev UI reads an artifact from an event's content and again from its actions,
    so ADK's ``/run_sse`` sends an event with both as two: the content without the
    artifact delta, then the actions alone (not for an answer to a long-running call)."""
    if answering or not event.actions.artifact_delta or not event.parts():
        return [event]
    content = event.model_copy(deep=True)
    content.actions.artifact_delta = {}
    return [content, event.model_copy(update={"content": None})]


async def run_sse(request: Request) -> Response:
    """``POST /run_sse``: the same events as server-sent ``data:`` lines, as they come; a
    failure after the stream began is a last ``data: {"error": …}`` line, as ADK sends it."""
    body, events = await _opened(request)

    async def lines() -> AsyncIterator[str]:
        try:
            async for event in events:
                for part in _streamed(event, body.function_call_event_id is not None):
                    yield _sse(adk_event(part))
        except Exception as err:
            refused = api_error(err)
            yield _sse({"error": f"{type(err).__name__}: {refused.message if refused else err}"})

    return StreamingResponse(lines(), media_type="text/event-stream")


def adk_routes() -> list[BaseRoute]:
    """ADK's API-server routes, in the order they must be matched (an artifact name may hold
    ``/``, so the catch-all artifact route comes last)."""
    named = f"{ARTIFACTS}/{{name:path}}"
    table: list[tuple[str, Callable[[Request], Awaitable[Response]], str]] = [
        ("/health", health, "GET"),
        ("/version", adk_version_info, "GET"),
        ("/list-apps", list_apps, "GET"),
        ("/apps/{app}/app-info", app_info, "GET"),
        (SESSIONS, list_sessions, "GET"),
        (SESSIONS, create, "POST"),
        (SESSION, get_session, "GET"),
        (SESSION, create_with_id, "POST"),
        (SESSION, delete_session, "DELETE"),
        (SESSION, update_session, "PATCH"),
        (ARTIFACTS, artifact_names, "GET"),
        (f"{named}/versions/metadata", versions_metadata, "GET"),
        (f"{named}/versions/{{version}}/metadata", version_metadata, "GET"),
        (f"{named}/versions/{{version}}", load_version, "GET"),
        (f"{named}/versions", artifact_versions, "GET"),
        (named, load_artifact, "GET"),
        ("/run", run, "POST"),
        ("/run_sse", run_sse, "POST"),
    ]
    return [Route(path, handler, methods=[method]) for path, handler, method in table]
