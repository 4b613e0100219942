"""Notifications out: configuration checks, the document, its links and its signature."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from datetime import timedelta
from http.server import HTTPServer
from typing import Any

import pytest
from pydantic import TypeAdapter

from adk_temporal.background_http import BackgroundServer
from adk_temporal.examples.webhook_receiver import receiver
from adk_temporal.flow.messages import PendingInput, PendingRequest
from adk_temporal.notifications import (
    Endpoint,
    Notice,
    NotificationConfigError,
    Notifications,
    endpoint_id,
    notice_id,
    notification_document,
    secret_from_env,
    signed_request,
)
from adk_temporal.signing import read_link, verify_body

SECRET = b"s3cret"
CREATED = 1_800_000_000.0


def _config(**changes: Any) -> Notifications:
    fields: dict[str, Any] = {
        "endpoints": ["https://hooks.example/adk?token=t0k3n"],
        "secret": SECRET,
        "answer_base_url": "https://gateway.example/",
    }
    return Notifications(**{**fields, **changes})


def _confirmation(**changes: Any) -> PendingRequest:
    fields: dict[str, Any] = {
        "kind": "confirmation",
        "id": "adk-c1",
        "function_call_id": "call-1",
        "tool": "buy_weather_report",
        "args": {"city": "Oslo"},
        "hint": "Buy it for $2.00?",
        "payload": {"price_usd": 2.0},
        "call_digest": "d1g3st",
    }
    return TypeAdapter(PendingRequest).validate_python({**fields, **changes})


def _notice(*requests: PendingRequest, event: Any = "paused") -> Notice:
    return Notice(
        id=notice_id("adk/weather/u 1/s/1", "e-1", event, [r.id for r in requests]),
        event=event,
        app_name="weather",
        user_id="u 1",
        session_id="s/1",
        workflow_id="adk/weather/u 1/s/1",
        run_id="r-1",
        invocation_id="e-1",
        created_at=CREATED,
        requests=list(requests),
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"endpoints": []}, "at least one endpoint"),
        ({"endpoints": ["ftp://hooks.example"]}, "http"),
        ({"endpoints": ["hooks.example/adk"]}, "http"),
        ({"endpoints": ["https://a.example", Endpoint("https://a.example")]}, "twice"),
        ({"secret": b""}, "non-empty bytes"),
        ({"secret": "text"}, "non-empty bytes"),
        ({"answer_base_url": "gateway.example"}, "answer_base_url"),
        ({"on": ["paused", "started"]}, "some of"),
        ({"on": []}, "some of"),
        ({"link_ttl": timedelta(0)}, "link_ttl must be positive"),
        ({"give_up_after": timedelta(seconds=-1)}, "give_up_after must be positive"),
    ],
)
def test_unusable_configuration_is_refused_with_the_reason(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(NotificationConfigError, match=message):
        _config(**changes)


def test_the_secret_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADK_NOTIFY_SECRET", "from-env")
    assert secret_from_env() == b"from-env"
    monkeypatch.setenv("ADK_NOTIFY_SECRET", "")
    with pytest.raises(NotificationConfigError, match="set ADK_NOTIFY_SECRET"):
        secret_from_env()


def test_the_plan_names_endpoints_by_digest_never_by_url() -> None:
    config = _config(on=["paused", "failed"], retry_maximum=timedelta(seconds=5))
    plan = config.plan()
    assert plan.events == ["paused", "failed"]
    assert plan.maximum_interval_seconds == 5
    assert "t0k3n" not in plan.model_dump_json()
    [eid] = plan.endpoints
    endpoint = config.endpoint(eid)
    assert endpoint is not None and endpoint.url.endswith("token=t0k3n")
    assert config.endpoint(endpoint_id("https://removed.example")) is None


def test_a_pause_names_its_request_the_answer_url_and_two_signed_links() -> None:
    doc = notification_document(_config(), _notice(_confirmation()))
    assert doc["type"] == "invocation.paused"
    assert (doc["app"], doc["user_id"], doc["session_id"]) == ("weather", "u 1", "s/1")
    assert (doc["workflow_id"], doc["run_id"], doc["invocation_id"]) == (
        "adk/weather/u 1/s/1",
        "r-1",
        "e-1",
    )
    [request] = doc["requests"]
    assert request["id"] == "adk-c1" and request["kind"] == "confirmation"
    assert request["tool"] == "buy_weather_report" and request["args"] == {"city": "Oslo"}
    assert request["payload"] == {"price_usd": 2.0} and request["call_digest"] == "d1g3st"
    answer = request["answer"]
    # Ids are quoted as path segments: a slash in a session id stays inside its segment.
    assert answer["url"] == (
        "https://gateway.example/v1/apps/weather/users/u%201/sessions/s%2F1/confirm"
    )
    assert answer["body"] == {
        "confirmation_id": "adk-c1",
        "confirmed": True,
        "call_digest": "d1g3st",
    }
    for decision in ("approve", "reject"):
        url = request["links"][decision]
        prefix = "https://gateway.example/v1/links/"
        assert url.startswith(prefix)
        link = read_link(SECRET, url.removeprefix(prefix), now=CREATED)
        assert link.decision == decision
        assert (link.workflow_id, link.invocation_id, link.request_id) == (
            "adk/weather/u 1/s/1",
            "e-1",
            "adk-c1",
        )
        assert link.call_digest == "d1g3st"
        assert link.expires_at == int(CREATED + timedelta(days=7).total_seconds())


def test_a_link_expires_with_its_request_when_that_is_sooner() -> None:
    soon = CREATED + 3600
    doc = notification_document(
        _config(link_ttl=timedelta(days=1)),
        _notice(_confirmation(expires_at=soon), _confirmation(id="adk-c2")),
    )
    first, second = doc["requests"]
    assert first["expires_at"] == soon and first["links_expire_at"] == int(soon)
    assert second["expires_at"] is None and second["links_expire_at"] == int(CREATED + 86400)


def test_an_input_request_is_answered_through_resume_and_has_no_links() -> None:
    request = PendingInput(
        kind="input",
        id="int-1",
        function_call_id="call-2",
        tool="plan_trip",
        message="Which dates?",
        input_schema={"type": "object"},
    )
    [doc] = notification_document(_config(), _notice(request))["requests"]
    assert doc["message"] == "Which dates?" and doc["input_schema"] == {"type": "object"}
    assert doc["answer"]["url"].endswith("/sessions/s%2F1/resume")
    assert doc["answer"]["body"] == {"interrupt_id": "int-1", "input": None}
    assert "links" not in doc


def test_without_a_public_url_the_document_carries_no_url() -> None:
    [request] = notification_document(_config(answer_base_url=None), _notice(_confirmation()))[
        "requests"
    ]
    assert "answer" not in request and "links" not in request


def test_an_ending_carries_no_requests() -> None:
    notice = _notice(event="failed").model_copy(update={"error": "model unavailable"})
    doc = notification_document(_config(), notice)
    assert doc["type"] == "invocation.failed" and doc["error"] == "model unavailable"
    assert "requests" not in doc


def test_every_attempt_posts_the_same_body_and_key_signed_anew() -> None:
    config = _config(endpoints=[Endpoint("https://hooks.example", {"Authorization": "Bearer x"})])
    [endpoint] = config.endpoints
    assert isinstance(endpoint, Endpoint)
    notice = _notice(_confirmation())
    body1, headers1 = signed_request(config, endpoint, notice, now=CREATED + 1)
    body2, headers2 = signed_request(config, endpoint, notice, now=CREATED + 90)
    assert body1 == body2
    assert headers1["Idempotency-Key"] == headers2["Idempotency-Key"] == notice.id
    assert headers1["Authorization"] == "Bearer x"
    assert headers1["Content-Type"] == "application/json"
    for headers in (headers1, headers2):
        verify_body(
            SECRET,
            signature=headers["X-Adk-Signature"],
            timestamp=headers["X-Adk-Timestamp"],
            idempotency_key=headers["Idempotency-Key"],
            body=body1,
            now=CREATED + 100,
        )
    assert json.loads(body1)["id"] == notice.id


def test_notification_ids_are_stable_and_distinct() -> None:
    first = notice_id("adk/a/u/s", "e-1", "paused", ["adk-1"])
    assert first == notice_id("adk/a/u/s", "e-1", "paused", ["adk-1"])
    others = {
        notice_id("adk/a/u/s", "e-1", "paused", ["adk-2"]),
        notice_id("adk/a/u/s", "e-2", "paused", ["adk-1"]),
        notice_id("adk/a/u/s", "e-1", "completed", []),
    }
    assert first not in others and len(others) == 3


def _post(port: int, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/", data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def test_the_example_receiver_handles_genuine_notifications_once() -> None:
    handled: list[dict[str, Any]] = []
    server = BackgroundServer(HTTPServer(("127.0.0.1", 0), receiver(SECRET, handled.append)), "r")
    config = _config(endpoints=["http://127.0.0.1:1/"])
    [endpoint] = config.endpoints
    assert isinstance(endpoint, Endpoint)
    body, headers = signed_request(config, endpoint, _notice(_confirmation()), now=time.time())
    server.start()
    try:
        assert _post(server.port, body, headers) == 204
        assert _post(server.port, body, headers) == 204  # a retry: acknowledged, not redone
        assert _post(server.port, body.replace(b"Oslo", b"Rome"), headers) == 401
        forged = {**headers, "X-Adk-Signature": "v1=" + "0" * 64}
        assert _post(server.port, body, forged) == 401
    finally:
        server.stop()
    assert [doc["requests"][0]["args"] for doc in handled] == [{"city": "Oslo"}]


def test_the_example_receiver_dedupes_on_the_signed_id_not_the_header() -> None:
    """A genuine notice re-sent with another Idempotency-Key (a header the signature does not
    cover) is refused, not handled a second time."""
    handled: list[dict[str, Any]] = []
    server = BackgroundServer(HTTPServer(("127.0.0.1", 0), receiver(SECRET, handled.append)), "r")
    config = _config(endpoints=["http://127.0.0.1:1/"])
    [endpoint] = config.endpoints
    assert isinstance(endpoint, Endpoint)
    body, headers = signed_request(config, endpoint, _notice(_confirmation()), now=time.time())
    server.start()
    try:
        assert _post(server.port, body, headers) == 204
        assert _post(server.port, body, {**headers, "Idempotency-Key": "fresh-key"}) == 401
        assert _post(server.port, body, headers) == 204
    finally:
        server.stop()
    assert [doc["id"] for doc in handled] == [json.loads(body)["id"]]


@pytest.mark.parametrize(
    ("url", "headers", "message"),
    [
        ("https://a.example/x", {"X-Key": "k\r\nX-Forged: 1"}, "'X-Key' has a value"),
        ("https://a.example/x", {"X-Key": "k\n"}, "line break"),
        ("https://a.example/x", {"X-Key": "k\0"}, "NUL"),
        ("https://a.example/x", {"X Key": "k"}, "not an HTTP token"),
        ("https://a.example/x", {"X-Key:": "k"}, "not an HTTP token"),
        ("https://a.example/a b", {}, "ASCII without spaces"),
        ("https://bücher.example/", {}, "xn--"),
    ],
)
def test_an_endpoint_that_would_split_the_request_is_refused(
    url: str, headers: dict[str, str], message: str
) -> None:
    """A header name that is not a token, a value with a line break or NUL, a URL with a
    space or non-ASCII: refused when configured, never written into a request; the
    message names the header, never its value."""
    with pytest.raises(NotificationConfigError, match=message) as failure:
        Endpoint(url, headers)
    assert "X-Forged" not in str(failure.value)
