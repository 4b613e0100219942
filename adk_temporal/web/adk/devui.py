"""ADK's dev UI (the built ``google/adk/cli/browser`` bundle of the google-adk wheel) served
from a directory, with the few settings routes it reads as it loads.

The bundle is ADK's, not ours: the gateway serves it from where google-adk is installed
(``--adk-dev-ui``). It is an Angular page that sets inline styles, so its pages get a
content policy of their own (:data:`DEV_UI_POLICY`); the rest of the gateway keeps its own.
The dev UI's evaluation and trace panels get empty lists; its builder and graph panels call
dev-only routes this gateway does not serve (404), and show nothing.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["DEV_UI_PATH", "DEV_UI_POLICY", "DevUiError", "dev_ui_routes"]

DEV_UI_PATH = "/dev-ui"
"""Where the dev UI is served, as ``adk web`` serves it."""

DEV_UI_POLICY = (
    b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    b"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    b"media-src 'self' blob:; frame-ancestors 'none'; base-uri 'self'"
)
"""The dev UI's content policy: the gateway's, plus the inline styles Angular sets and the
data and blob URLs the page shows images and audio from."""


class DevUiError(ValueError):
    """The directory given as the dev UI holds no built bundle."""


async def _runtime_config(request: Request) -> Response:
    # ADK writes the backend's URL prefix and the telemetry consent here; this gateway
    # sends no telemetry.
    return JSONResponse(
        {"backendUrl": "", "telemetry": False}, headers={"Cache-Control": "no-store"}
    )


async def _ui_config(request: Request) -> Response:
    return JSONResponse({"logo_text": None, "logo_image_url": None})


async def _telemetry(request: Request) -> Response:
    return JSONResponse({"telemetry": False})


async def _none(request: Request) -> Response:
    # The evaluation and trace panels list what they find; here they find nothing.
    return JSONResponse([])


async def _to_ui(request: Request) -> Response:
    return RedirectResponse(f"{DEV_UI_PATH}/")


def dev_ui_routes(bundle: Path) -> list[BaseRoute]:
    """The dev UI from ``bundle`` (the directory holding its ``index.html``), its settings
    routes, and ``/`` and ``/dev-ui`` sent to it.

    Raises:
        DevUiError: ``bundle`` has no ``index.html``.
    """
    if not (bundle / "index.html").is_file():
        raise DevUiError(
            f"{bundle} holds no dev UI (no index.html); give the browser directory of an "
            "installed google-adk: .../site-packages/google/adk/cli/browser"
        )
    return [
        Route(f"{DEV_UI_PATH}/assets/config/runtime-config.json", _runtime_config),
        Route(f"{DEV_UI_PATH}/config", _ui_config),
        Route("/config/telemetry", _telemetry),
        Route("/dev/apps/{app}/eval_sets", _none),
        Route("/dev/apps/{app}/eval_results", _none),
        Route("/dev/apps/{app}/debug/trace/session/{session}", _none),
        Route("/", _to_ui),
        Route(DEV_UI_PATH, _to_ui),
        Mount(f"{DEV_UI_PATH}/", StaticFiles(directory=bundle, html=True), name="adk-dev-ui"),
    ]
