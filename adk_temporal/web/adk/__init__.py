"""ADK's own surfaces on durable runs: the routes of google-adk 2.13's API server, so ADK's
client (``AdkWebServerClient``) and its dev UI work against ``adk-temporal web``.

Each ``/run`` is an invocation on Temporal; a pause answers ADK's way — the next ``/run``
whose message is a function response to the pause's call — and that becomes the durable
answer. Modules: ``wire`` (ADK's JSON), ``apps`` (which apps are offered), ``access`` (tokens,
or development mode on this machine only), ``runs`` (``/run`` over the gateway), ``routes``
(the routes), ``devui`` (ADK's dev UI bundle).
"""

from __future__ import annotations

from .access import LOCAL_PRINCIPAL, AdkAccess
from .apps import AdkApps, AdkTarget
from .devui import DEV_UI_PATH, DEV_UI_POLICY, DevUiError, dev_ui_routes
from .routes import AdkSurface, adk_routes
from .runs import ADK_CHANNEL, AdkRuns, RunFailedError, parse_confirmation

__all__ = [
    "ADK_CHANNEL",
    "DEV_UI_PATH",
    "DEV_UI_POLICY",
    "LOCAL_PRINCIPAL",
    "AdkAccess",
    "AdkApps",
    "AdkRuns",
    "AdkSurface",
    "AdkTarget",
    "DevUiError",
    "RunFailedError",
    "adk_routes",
    "dev_ui_routes",
    "parse_confirmation",
]
