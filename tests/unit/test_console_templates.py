"""The console's pages come from autoescaping templates: hostile values stay text.

Every page is rendered through the real Starlette app over a gateway that returns fixed
data, so what is checked is what a browser would get.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, cast
from urllib.parse import quote

import pytest
from jinja2 import UndefinedError
from starlette.testclient import TestClient
from temporalio.client import WorkflowExecutionDescription

from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.events import Event
from adk_temporal.flow.messages import RequestSummary
from adk_temporal.ids import SessionKey
from adk_temporal.queues import QueueWait
from adk_temporal.sessions import Session
from adk_temporal.signing import AnswerLink, sign_link
from adk_temporal.web.auth import ALL_APPS, TokenBook
from adk_temporal.web.cookies import COOKIE
from adk_temporal.web.errors import ApiError
from adk_temporal.web.gateway import ArtifactVersions, Gateway, session_path
from adk_temporal.web.models import AnswerOutcome, PendingView, RunLinks, RunSummary, RunView
from adk_temporal.web.pages import render
from adk_temporal.web.server import create_app
from adk_temporal.workflows.messages import Published

HOSTILE = "<script>alert(1)</script>\"'&"
"""Shown wherever the console prints a value that came from a user, a model or a tool."""
HOSTILE_ID = "<img src=x onerror=alert(1)>\"'&"
"""The same for ids that travel in the URL path, where a ``/`` would end the segment."""
SECRET = b"link secret for the tests"
_ATTRIBUTES = {
    "action",
    "aria-describedby",
    "aria-label",
    "autocomplete",
    "charset",
    "class",
    "content",
    "data-event-id",
    "data-events",
    "datetime",
    "defer",
    "for",
    "href",
    "id",
    "lang",
    "method",
    "name",
    "rel",
    "required",
    "role",
    "rows",
    "src",
    "step",
    "title",
    "type",
    "value",
}
"""Every attribute the templates write: a value breaking out of its quotes adds others."""


class _Adk:
    """Just enough of :class:`AdkClient` for the answer-link pages."""

    def handle(self, workflow_id: str) -> InvocationHandle:
        """A stand-in handle; the fake gateway never uses it."""
        return cast(InvocationHandle, workflow_id)


@dataclass
class _Gateway(Gateway):
    """A gateway whose every read returns fixed data made of ``value``."""

    value: str = HOSTILE
    status: str | None = "awaiting_confirmation"
    """The run's status; ``None``: the session has no invocation."""
    request_open: bool = True
    applied: bool = True

    def agents(self, app_name: str) -> list[str] | None:
        """Two agents, one of them named with the value."""
        return [self.value, "helper"]

    async def waiting(
        self, app_name: str, *, page_size: int = 50, page_token: str | None = None
    ) -> tuple[list[tuple[SessionKey, Published]], str | None]:
        """One run of a session named with the value, waiting for both kinds of answer, and
        a next page whose token is the value."""
        run = (SessionKey(app_name, self.value, self.value), Published(requests=self._summaries()))
        return [run], self.value

    def _summaries(self) -> list[RequestSummary]:
        common: dict[str, Any] = {
            "tool": self.value,
            "call": f"buy(city={self.value!r})",
            "hint": self.value,
        }
        return [
            RequestSummary(
                kind="confirmation", id=f"c-{self.value}", payload_digest="ab12", **common
            ),
            RequestSummary(kind="input", id=f"i-{self.value}", message=self.value, **common),
        ]

    def _links(self, ids: SessionKey) -> RunLinks:
        base = session_path(ids)
        return RunLinks(
            self=base,
            pending=f"{base}/pending",
            events=f"{base}/events",
            confirm=f"{base}/confirm",
            resume=f"{base}/resume",
            cancel=f"{base}/cancel",
            temporal_ui=f"http://ui.example/{quote(self.value)}",
        )

    async def list_runs(self, app_name: str, **_: Any) -> list[RunSummary]:
        """One run whose every field is the value."""
        ids = SessionKey(app_name, self.value, self.value)
        return [
            RunSummary(
                workflow_id=self.value,
                run_id="r",
                app=app_name,
                user_id=self.value,
                session_id=self.value,
                status=self.value,
                agent=self.value,
                start_time=self.value,
                links=self._links(ids),
            )
        ]

    async def show(self, ids: SessionKey) -> RunView:
        """The run in ``status``, with a refused answer."""
        if self.status is None:
            raise ApiError(404, "no_invocation", "no invocation")
        return RunView(
            workflow_id=self.value,
            run_id="r",
            app=ids[0],
            user_id=ids[1],
            session_id=ids[2],
            status=self.status,
            agent=self.value,
            refused_answers=[self.value],
            unpolled_waits=[_wait(self.value)],
            links=self._links(ids),
        )

    async def pending(self, ids: SessionKey) -> PendingView:
        """A confirmation with its payload and an input request with a schema."""
        schema = {
            "type": ["object", "null"],
            "properties": {
                self.value: {"type": "string", "description": self.value},
                "level": {"enum": [self.value, "low"]},
            },
        }
        common = {"function_call_id": "f", "tool": self.value, "args": {"city": self.value}}
        return PendingView(
            workflow_id=self.value,
            source="worker",
            requests=[
                {
                    "kind": "confirmation",
                    "id": f"c-{self.value}",
                    "hint": self.value,
                    "payload": {"note": self.value},
                    **common,
                },
                {
                    "kind": "input",
                    "id": f"i-{self.value}",
                    "message": self.value,
                    "input_schema": schema,
                    **common,
                },
                {
                    "kind": "input",
                    "id": "j",
                    "message": "",
                    "input_schema": {"oneOf": [{"const": self.value}]},
                    **common,
                },
            ],
        )

    async def session(self, ids: SessionKey) -> Session | None:
        """A session whose event and state hold the value everywhere they can."""
        event = Event.model_validate(
            {
                "id": self.value,
                "author": self.value,
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": self.value},
                        {"function_call": {"name": "buy", "args": {"city": self.value}}},
                        {"function_response": {"name": "buy", "response": {"r": self.value}}},
                    ],
                },
                "error_code": self.value,
                "error_message": self.value,
                "actions": {"artifact_delta": {self.value: 1}},
            }
        )
        return Session(
            id=ids[2],
            app_name=ids[0],
            user_id=ids[1],
            state={self.value: self.value},
            events=[event],
        )

    async def artifact_versions(self, ids: SessionKey) -> list[ArtifactVersions]:
        """One artifact named and typed with the value."""
        return [ArtifactVersions(self.value, [1, 2], [self.value])]

    async def described(
        self, handle: InvocationHandle
    ) -> tuple[WorkflowExecutionDescription, Published]:
        """The link's request open or not, as ``request_open`` says."""
        requests = self._summaries()[:1] if self.request_open else []
        return cast(WorkflowExecutionDescription, None), Published(requests=requests)

    async def apply_link(self, link: AnswerLink) -> AnswerOutcome:
        """Applied or accepted, as ``applied`` says."""
        return AnswerOutcome(
            workflow_id=self.value,
            request_id=link.request_id,
            outcome="applied" if self.applied else "accepted",
        )


def _client(served: _Gateway, scope: frozenset[str] = frozenset({ALL_APPS})) -> TestClient:
    app = create_app(served, TokenBook.parse(f"{'t' * 20} *", "tokens"), console=True)
    client = TestClient(app, raise_server_exceptions=False)
    client.cookies.set(COOKIE, app.state.console_sessions.sign_in(scope))
    return client


def _link(value: str) -> str:
    link = AnswerLink(
        workflow_id=value,
        invocation_id="e-1",
        request_id=f"c-{value}",
        decision="approve",
        call_digest="",
        expires_at=int(time.time()) + 3600,
    )
    return f"/v1/links/{sign_link(SECRET, link)}"


def _pages(value: str, path_value: str) -> Iterator[tuple[str, int, str]]:
    """``(what, status, html)`` of every page the console and the answer links render."""
    ids = SessionKey(path_value, path_value, path_value)
    for status in ("awaiting_confirmation", "running", "completed", None):
        client = _client(_Gateway(adk=cast(AdkClient, _Adk()), value=value, status=status))
        page = client.get(session_path(ids, "/console"))
        yield f"session {status}", page.status_code, page.text
    served = _Gateway(adk=cast(AdkClient, _Adk()), value=value, link_secret=SECRET)
    client = _client(served, frozenset({value, path_value, "weather"}))
    page = client.get("/console")
    yield "home", page.status_code, page.text
    page = client.get(f"/console/apps/{quote(path_value)}")
    yield "app", page.status_code, page.text
    page = client.get(f"/console/apps/{quote(path_value + 'x')}")
    yield "refused", page.status_code, page.text
    client.cookies.clear()
    page = client.get("/console/sign-in")
    yield "sign in", page.status_code, page.text
    link, html = _link(value), {"Accept": "text/html"}
    page = client.get(link)
    yield "link", page.status_code, page.text
    page = client.post(link, headers=html)
    yield "link applied", page.status_code, page.text
    served.applied = False
    page = client.post(link, headers=html)
    yield "link accepted", page.status_code, page.text
    served.request_open = False
    page = client.get(link)
    yield "link closed", page.status_code, page.text
    page = client.post(link[:-2], headers=html)
    yield "link refused", page.status_code, page.text


class _Parsed(HTMLParser):
    """A page's tags, attribute names, and text and attribute values with entities decoded."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: set[str] = set()
        self.values: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Record the tag, its attribute names and values."""
        self.tags.append(tag)
        self.attributes.update(name for name, _ in attrs)
        self.values.extend(v for _, v in attrs if v is not None)

    def handle_data(self, data: str) -> None:
        """Record the text."""
        self.values.append(data)


PAGES = {
    "session awaiting_confirmation": (200, HOSTILE),
    "session running": (200, HOSTILE),
    "session completed": (200, HOSTILE),
    "session None": (200, HOSTILE),
    "home": (200, HOSTILE),
    "app": (200, HOSTILE),
    "refused": (403, repr(HOSTILE_ID + "x")),
    "sign in": (200, None),
    "link": (200, HOSTILE),
    "link applied": (200, f"c-{HOSTILE}"),
    "link accepted": (202, f"c-{HOSTILE}"),
    "link closed": (200, f"c-{HOSTILE}"),
    "link refused": (400, None),
}
"""Every page: its status, and the hostile text it shows (the sign-in page shows none)."""


@pytest.fixture(scope="module")
def hostile_pages() -> dict[str, tuple[int, str]]:
    """Every page, rendered with the hostile values wherever they can go."""
    return {what: (status, html) for what, status, html in _pages(HOSTILE, HOSTILE_ID)}


def test_every_page_is_checked(hostile_pages: dict[str, tuple[int, str]]) -> None:
    """The list below names every page the fixture renders."""
    assert set(hostile_pages) == set(PAGES)


@pytest.mark.parametrize("what", PAGES)
def test_hostile_values_are_text_on_every_page(
    hostile_pages: dict[str, tuple[int, str]], what: str
) -> None:
    """A value with markup and both quotes reaches the page as text: no new element, no
    attribute broken out of its quotes, and the value itself shown whole."""
    status, shown = PAGES[what]
    got, html = hostile_pages[what]
    assert got == status, html
    parsed = _Parsed(html)
    assert parsed.tags.count("script") == 1  # the console's own
    assert "img" not in parsed.tags
    assert parsed.attributes <= _ATTRIBUTES
    if shown is not None:
        assert any(shown in value for value in parsed.values), html


def _wait(value: str) -> QueueWait:
    """A model step waiting on a queue named ``value`` that no worker polls."""
    return QueueWait(task_queue=value, step="model step", start=value)


def test_the_session_page_shows_each_hostile_value_where_it_belongs(
    hostile_pages: dict[str, tuple[int, str]],
) -> None:
    """The session id, event text, tool arguments, hint, payload and schema are each shown,
    decoded back to exactly what was given."""
    _, html = hostile_pages["session awaiting_confirmation"]
    shown = _Parsed(html).values
    payload = json.dumps({"note": HOSTILE}, indent=2)
    for expected in (
        f"Session {HOSTILE_ID}/{HOSTILE_ID}",
        HOSTILE,
        "Tool call: buy",
        json.dumps({"city": HOSTILE}, indent=2, ensure_ascii=False),
        f"Approval: {HOSTILE}",
        f"c-{HOSTILE}",
        payload,
        f"answer.{HOSTILE}",
        json.dumps(HOSTILE),
        _wait(HOSTILE).line(),
    ):
        assert expected in shown, expected


def test_the_link_page_posts_to_itself_and_escapes_the_hint(
    hostile_pages: dict[str, tuple[int, str]],
) -> None:
    """The answer link's page shows the hint as text and its form posts to the link."""
    _, html = hostile_pages["link"]
    parsed = _Parsed(html)
    assert HOSTILE in parsed.values
    assert f"Approval request c-{HOSTILE}" not in parsed.values  # a link page, not a card
    assert any(v.startswith("/v1/links/") for v in parsed.values)


TEMPLATES = [
    "answer_fields.html",
    "app.html",
    "error.html",
    "home.html",
    "link.html",
    "link_applied.html",
    "link_closed.html",
    "session.html",
    "sign_in.html",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_missing_variable_fails_the_render(template: str) -> None:
    """A template given none of its variables raises instead of printing nothing."""
    with pytest.raises(UndefinedError):
        render(template)


def test_a_missing_field_of_a_given_value_fails_the_render() -> None:
    """A value lacking a field the template reads raises too, wherever it is read."""
    with pytest.raises(UndefinedError, match="kind"):
        render("error.html", message="no")
    with pytest.raises(UndefinedError):
        render("home.html", csrf="c", signed_in=True, apps=[{"url": "/console/apps/a"}])
