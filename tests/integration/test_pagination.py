"""Listings that grow with the number of runs page through visibility: the CLI's ``list``
and ``pending``, the gateway's ``/runs`` and ``/pending``, and the console's app page.

The runs are started without a worker, with the search attributes and memo a paused run
publishes: every listing reads visibility only, so a few hundred cost a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html import unescape

import httpx2 as httpx
import pytest
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.flow.messages import RequestSummary
from adk_temporal.ids import SessionKey, workflow_id_for
from adk_temporal.visibility import InvalidPageTokenError, list_page
from adk_temporal.web.auth import ALL_APPS, TokenBook
from adk_temporal.web.cookies import COOKIE
from adk_temporal.web.gateway import Gateway
from adk_temporal.web.server import create_app
from adk_temporal.workflows.messages import (
    ADK_AGENT,
    ADK_APP,
    ADK_SESSION,
    ADK_STATUS,
    ADK_USER,
    REQUESTS_MEMO,
    InvocationInput,
)

from ..commands import run_cli

RUNS = 230
"""Waiting runs; a few more finished ones sit beside them and must not be listed as waiting."""
TOKEN = "t-paging-0123456789abcdef"


@dataclass(frozen=True)
class Waiting:
    """A task queue and app whose ``RUNS`` runs wait for an approval (and two completed)."""

    app: str
    task_queue: str
    ids: frozenset[str]


async def _start(client: Client, app: str, task_queue: str, session: str, status: str) -> str:
    ids = SessionKey(app, "u", session)
    request = RequestSummary(kind="confirmation", id=f"c-{session}", tool="buy", call="buy()")
    attributes = TypedSearchAttributes(
        [
            SearchAttributePair(ADK_APP, app),
            SearchAttributePair(ADK_USER, "u"),
            SearchAttributePair(ADK_SESSION, session),
            SearchAttributePair(ADK_AGENT, "buyer"),
            SearchAttributePair(ADK_STATUS, status),
        ]
    )
    handle = await client.start_workflow(
        "InvocationWorkflow",
        InvocationInput(app_name=app, user_id="u", session_id=session, agent_name="buyer"),
        id=workflow_id_for(ids),
        task_queue=task_queue,
        search_attributes=attributes,
        memo={REQUESTS_MEMO: [request.model_dump(mode="json")] if status != "completed" else []},
    )
    return handle.id


@pytest.fixture(scope="module")
async def waiting(temporal_client: Client) -> AsyncIterator[Waiting]:
    """``RUNS`` runs awaiting confirmation on a fresh queue, visible to visibility queries."""
    app, task_queue = f"paging{uuid.uuid4().hex[:8]}", f"paging-{uuid.uuid4()}"
    started: list[str] = []
    for chunk in range(0, RUNS, 50):
        started += await asyncio.gather(
            *(
                _start(temporal_client, app, task_queue, f"s{i:04d}", "awaiting_confirmation")
                for i in range(chunk, min(chunk + 50, RUNS))
            )
        )
    for i in range(2):
        await _start(temporal_client, app, task_queue, f"done{i}", "completed")
    query = f"AdkApp = '{app}'"
    # Visibility is eventually consistent: the listings are read once all runs are in it.
    while (await temporal_client.count_workflows(query)).count < RUNS + 2:
        await asyncio.sleep(0.2)
    yield Waiting(app, task_queue, frozenset(started))
    done = [workflow_id_for(SessionKey(app, "u", f"done{i}")) for i in range(2)]
    for wid in [*started, *done]:
        await temporal_client.get_workflow_handle(wid).terminate()


async def test_waiting_page_lists_every_waiting_run_once_a_page_at_a_time(
    temporal_client: Client, waiting: Waiting
) -> None:
    """AdkClient.waiting_page hands out pages of at most page_size runs; following the tokens
    lists each waiting run exactly once and ends with no token."""
    adk = AdkClient(temporal_client, task_queue=waiting.task_queue)
    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        runs, token = await adk.waiting_page(
            task_queue=waiting.task_queue, app_name=waiting.app, page_size=40, page_token=token
        )
        pages += 1
        assert len(runs) <= 40
        seen += [wid for wid, published in runs if published.requests]
        if token is None:
            break
    assert sorted(seen) == sorted(waiting.ids)
    assert pages == -(-RUNS // 40)


async def test_an_edited_or_foreign_page_token_is_a_typed_error(
    temporal_client: Client, waiting: Waiting
) -> None:
    """A token no listing handed out, or one of a listing with other filters, is refused as
    InvalidPageTokenError before Temporal is asked."""
    query = f"AdkApp = '{waiting.app}'"
    page = await list_page(temporal_client, query, page_size=5)
    assert page.next_page_token is not None
    edited = page.next_page_token[:-2] + ("AB" if page.next_page_token[-2:] != "AB" else "CD")
    for token in ("not base64 !", "x" * 5000, "AAAA", edited):
        with pytest.raises(InvalidPageTokenError):
            await list_page(temporal_client, query, page_size=5, page_token=token)
    with pytest.raises(InvalidPageTokenError):
        await list_page(
            temporal_client,
            query + " AND AdkUser = 'u'",
            page_size=5,
            page_token=page.next_page_token,
        )
    again = await list_page(temporal_client, query, page_size=5, page_token=page.next_page_token)
    assert {wf.id for wf in again.executions}.isdisjoint(wf.id for wf in page.executions)


async def _cli_json(server: DevServer, *args: str) -> object:
    done = await run_cli(server.address, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_cli_pending_and_list_page_and_stream(
    dev_server: DevServer, waiting: Waiting
) -> None:
    """`pending` and `list` print one page and its next token with --page-size, continue from
    --next-page-token, and stream every page as one list with --all."""
    where = ("--task-queue", waiting.task_queue)
    first = await _cli_json(dev_server, "pending", *where, "--page-size", "200")
    assert isinstance(first, dict) and len(first["requests"]) == 200
    rest = await _cli_json(
        dev_server, "pending", *where, "--next-page-token", first["next_page_token"]
    )
    assert isinstance(rest, dict) and rest["next_page_token"] is None
    ids = [r["workflow_id"] for r in first["requests"] + rest["requests"]]
    assert sorted(ids) == sorted(waiting.ids)
    every = await _cli_json(dev_server, "pending", *where, "--all")
    assert isinstance(every, list) and sorted(r["workflow_id"] for r in every) == sorted(ids)

    listed = await _cli_json(dev_server, "list", "--app", waiting.app, "--page-size", "150")
    assert isinstance(listed, dict) and len(listed["runs"]) == 150
    more = await _cli_json(
        dev_server,
        "list",
        *("--app", waiting.app, "--page-size", "150"),
        *("--next-page-token", listed["next_page_token"]),
    )
    assert isinstance(more, dict) and more["next_page_token"] is None
    assert len(more["runs"]) == RUNS + 2 - 150
    streamed = await _cli_json(dev_server, "list", "--app", waiting.app, "--all")
    assert isinstance(streamed, list) and len(streamed) == RUNS + 2


def _http(
    temporal_client: Client, waiting: Waiting, link_secret: bytes | None = None
) -> httpx.AsyncClient:
    served = Gateway(
        adk=AdkClient(temporal_client, task_queue=waiting.task_queue), link_secret=link_secret
    )
    app = create_app(served, TokenBook.parse(f"{TOKEN} {waiting.app}", "tokens"), console=True)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")
    http.cookies.set(COOKIE, app.state.console_sessions.sign_in(frozenset({ALL_APPS})))
    http.headers["authorization"] = f"Bearer {TOKEN}"
    return http


async def test_gateway_lists_waiting_runs_and_runs_a_page_at_a_time(
    temporal_client: Client, waiting: Waiting
) -> None:
    """GET /pending and /runs return next_page_token; following it lists every run once; an
    edited token is a 400 naming it."""
    async with _http(temporal_client, waiting) as http:
        for path, key, total in (("pending", "runs", RUNS), ("runs", "runs", RUNS + 2)):
            seen: list[str] = []
            token = ""
            while True:
                reply = await http.get(
                    f"/v1/apps/{waiting.app}/{path}", params={"page_size": 64, "page_token": token}
                )
                assert reply.status_code == 200, reply.text
                body = reply.json()
                assert len(body[key]) <= 64
                seen += [r["workflow_id"] for r in body[key]]
                token = body["next_page_token"]
                if token is None:
                    break
            assert len(seen) == len(set(seen)) == total
        refused = await http.get(f"/v1/apps/{waiting.app}/pending", params={"page_token": "!!"})
        assert (
            refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_page_token"
        )
        too_big = await http.get(f"/v1/apps/{waiting.app}/runs", params={"page_size": 5000})
        assert too_big.status_code == 422


async def test_gateway_page_tokens_are_keyed_so_a_client_cannot_mint_one(
    temporal_client: Client, waiting: Waiting
) -> None:
    """A token made with the public, unkeyed scheme for the very listing /pending serves
    (as any client could make one from a Temporal token) is a 400; a gateway with the same
    link secret takes another's token, one with another secret refuses it."""
    adk = AdkClient(temporal_client, task_queue=waiting.task_queue)
    _, minted = await adk.waiting_page(
        task_queue=waiting.task_queue, app_name=waiting.app, page_size=64
    )
    assert minted is not None
    path = f"/v1/apps/{waiting.app}/pending"
    async with (
        _http(temporal_client, waiting, b"s1") as first,
        _http(temporal_client, waiting, b"s1") as twin,
        _http(temporal_client, waiting, b"s2") as other,
    ):
        forged = await first.get(path, params={"page_token": minted})
        assert forged.status_code == 400, forged.text
        assert forged.json()["error"]["type"] == "invalid_page_token"
        handed = (await first.get(path, params={"page_size": 64})).json()["next_page_token"]
        assert (await twin.get(path, params={"page_token": handed})).status_code == 200
        refused = await other.get(path, params={"page_token": handed})
        assert refused.status_code == 400


_SESSION_LINK = re.compile(r'href="/console/apps/[^/"]+/users/u/sessions/(s\d{4})"')


def _waiting_sessions(html: str) -> list[str]:
    """The sessions the page's waiting section links to (recent runs come after it)."""
    return _SESSION_LINK.findall(html.partition("<h2>Recent runs")[0])


def _link(html: str, label: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" rel="[a-z]+">{label}</a>', html)
    return unescape(found.group(1)) if found else None


async def test_console_app_page_pages_waiting_runs_with_next_and_previous_links(
    temporal_client: Client, waiting: Waiting
) -> None:
    """The app page lists 50 waiting runs a page; its next links reach every waiting run
    once, and each previous link leads back to the page before."""
    async with _http(temporal_client, waiting) as http:
        url: str | None = f"/console/apps/{waiting.app}"
        pages: list[tuple[str, list[str]]] = []
        while url is not None:
            page = await http.get(url)
            assert page.status_code == 200, page.text
            sessions = _waiting_sessions(page.text)
            pages.append((url, sessions))
            previous = _link(page.text, "Previous page")
            if len(pages) == 1:
                assert previous is None
            else:
                back = await http.get(previous or "")
                assert _waiting_sessions(back.text) == pages[-2][1]
            url = _link(page.text, "Next page")
    shown = [s for _, sessions in pages for s in sessions]
    assert len(pages) == -(-RUNS // 50)
    assert len(shown) == len(set(shown)) == RUNS
