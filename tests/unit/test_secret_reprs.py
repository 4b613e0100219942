"""No object holding a credential prints it: an app, a gateway or a store shown in a log
line or a traceback keeps its secrets (notification secret, webhook keys, link secret,
console cookie key, database password)."""

from __future__ import annotations

from typing import cast

from adk_temporal.app import App
from adk_temporal.client import AdkClient
from adk_temporal.examples import weather
from adk_temporal.notifications import Endpoint, Notifications
from adk_temporal.sessions import PostgresSessionService
from adk_temporal.web.cookies import ConsoleSessions
from adk_temporal.web.gateway import Gateway

SECRET = b"notification-secret-0123456789"
HEADER_KEY = "header-api-key-0123456789"
URL_KEY = "url-path-key-0123456789"


def _app() -> App:
    endpoint = Endpoint(
        f"https://hooks.example.com/services/{URL_KEY}?token={URL_KEY}",
        headers={"X-Api-Key": HEADER_KEY},
    )
    notifications = Notifications(endpoints=[endpoint], secret=SECRET)
    return App(agents=weather.app.agents, name="weather", notifications=notifications)


def test_an_apps_repr_shows_neither_its_notification_secret_nor_its_endpoint_keys() -> None:
    """repr(App) names the endpoint's origin, never the secret, the URL's path or headers."""
    shown = repr(_app())
    assert SECRET.decode() not in shown
    assert URL_KEY not in shown
    assert HEADER_KEY not in shown
    assert "https://hooks.example.com/…" in shown


def test_a_webhook_urls_user_and_password_are_not_shown() -> None:
    """user:password@ in an endpoint URL is a credential too."""
    shown = repr(Endpoint("https://bot:hunter2-password@hooks.example.com/x"))
    assert "hunter2" not in shown
    assert "bot" not in shown
    assert "hooks.example.com" in shown


def test_a_gateways_repr_shows_no_link_secret_cookie_key_or_database_password() -> None:
    """The gateway, its console sessions and its PostgreSQL store print without secrets."""
    store = PostgresSessionService("postgresql://adk:db-password-0123@db.example:5432/adk")
    # repr needs no client: a stand-in is enough.
    client = cast(AdkClient, object())
    gateway = Gateway(client, sessions=store, app=_app(), link_secret=b"link-secret-0123456")
    shown = repr(gateway)
    for secret in ("link-secret-0123456", "db-password-0123", SECRET.decode(), HEADER_KEY):
        assert secret not in shown
    assert "db.example" in shown
    sessions = ConsoleSessions()
    assert repr(sessions.key) not in repr(sessions)
