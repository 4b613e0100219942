"""The web console in headless Chromium: sign in, chat, approve, see the answer and artifact.

Debian's ``chromium`` driven by Python Playwright (no browser download); skips with the
reason when either is missing. Assertions read visible text; the screenshots are kept for
people to look at, never compared.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import pytest

from adk_temporal.devserver import DevServer

from .browser import UI_TIMEOUT_MS, launch_or_skip, playwright_or_skip
from .gateway import TOKEN, gateway_process
from .workers import Deployment, worker_process

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

pytestmark = pytest.mark.integration


@dataclass
class Console:
    """A signed-in console page, with the deployment behind it and a folder for screenshots."""

    page: Page
    deployment: Deployment
    root: Path


@asynccontextmanager
async def signed_in_console(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory, name: str
) -> AsyncIterator[Console]:
    """A worker, a gateway with the console, and a Chromium page signed in with the weather
    app's token, on task queue ``name``."""
    async_playwright = playwright_or_skip()
    root = tmp_path_factory.mktemp(name)
    deployment = Deployment(dev_server.address, name, root / "data")
    with (
        worker_process(deployment),
        gateway_process(deployment, root, console=True) as gateway,
    ):
        async with async_playwright() as playwright:
            browser = await launch_or_skip(playwright)
            try:
                page = await browser.new_page(viewport={"width": 1200, "height": 1000})
                page.set_default_timeout(UI_TIMEOUT_MS)
                await page.goto(f"{gateway.base}/console")
                await page.get_by_role("heading", name="Sign in").wait_for()
                await page.get_by_label("Access token").fill(TOKEN)
                await page.get_by_role("button", name="Sign in").click()
                await page.get_by_role("heading", name="App weather").wait_for()
                yield Console(page, deployment, root)
            finally:
                await browser.close()


async def _send(page: Page, message: str) -> None:
    await page.get_by_label("Message").fill(message)
    await page.get_by_role("button", name="Send").click()


async def test_chat_approve_and_see_the_answer_and_artifact(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A purchase started in the console pauses for approval; approving it there shows the
    final answer and the report's new artifact version."""
    async with signed_in_console(dev_server, tmp_path_factory, "web-console") as console:
        page = console.page
        await _send(page, "Buy a weather report for Hangzhou")

        request = page.get_by_role("article", name=re.compile("Approval request"))
        await request.get_by_text("Approval: Buy the weather report for Hangzhou").wait_for()
        await request.get_by_text('"price_usd": 2.0').wait_for()
        await page.screenshot(path=str(console.root / "approval.png"), full_page=True)

        # A form post without the CSRF token is refused, even with the cookie.
        forged = await page.request.post(
            page.url + "/confirm",
            form={"confirmation_id": "adk-x", "decision": "approve"},
            fail_on_status_code=False,
        )
        assert forged.status == 403

        await request.get_by_role("button", name="Approve").click()
        answer = "Your weather report for Hangzhou is saved as report.txt (version 1)."
        await page.get_by_text(answer).wait_for()
        await page.get_by_text("completed", exact=True).wait_for()
        artifacts = page.get_by_role("table").filter(has_text="report.txt")
        row = artifacts.get_by_role("row").filter(has_text="report.txt")
        assert (await row.inner_text()).split("\t")[:2] == ["report.txt", "v1"]
        await page.get_by_role("link", name="open in the Temporal UI").wait_for()
        await page.screenshot(path=str(console.root / "completed.png"), full_page=True)
    assert len(console.deployment.payments.charges()) == 1


async def test_a_dropped_stream_reconnects_by_itself_and_the_reply_appears(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The page's first event stream ends after one event, as a dropped connection does: the
    page does not give up, the browser reconnects (sending that event's id as
    ``Last-Event-ID``, which the API tests follow on the server) and the reply appears."""
    streams: list[str] = []

    async def drop_the_first(route: Route) -> None:
        streams.append(route.request.url)
        if len(streams) == 1:
            await route.fulfill(
                status=200,
                headers={"Content-Type": "text/event-stream"},
                body=": following\nretry: 100\n\nid: seen-before\nevent: ping\ndata: {}\n\n",
            )
        else:
            await route.continue_()

    name = "web-console-reconnect"
    async with signed_in_console(dev_server, tmp_path_factory, name) as console:
        page = console.page
        await page.route("**/events", drop_the_first)
        await _send(page, "What is the weather in Oslo?")
        await page.get_by_text(re.compile(r"The weather in Oslo is .+\.")).wait_for()
        await page.get_by_text("completed", exact=True).wait_for()
    assert len(streams) >= 2


async def _shot(console: Console, name: str) -> None:
    path = console.root / f"{name}.png"
    await console.page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


async def test_approvers_read_cards_open_artifacts_and_cancel_only_when_sure(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The app page lists the waiting run first, with how long it waited and the tool,
    arguments and payload; the chat is cards (the runtime's own calls only with raw events
    on); artifacts open as text and JSON and download; cancelling needs the box ticked.
    A screenshot of each page is kept in the test's folder (printed)."""
    async with signed_in_console(dev_server, tmp_path_factory, "web-console-cards") as console:
        page = console.page
        await _send(page, "Buy a weather report for Lima")
        session_url = page.url
        await page.get_by_text("Approval: Buy the weather report for Lima").wait_for()
        await _shot(console, "session-waiting")

        await page.get_by_role("link", name="Apps").click()
        await page.get_by_role("heading", name="App weather").wait_for()
        headings = await page.get_by_role("heading", level=2).all_inner_texts()
        assert headings.index("Waiting for a human") < headings.index("New chat")
        card = page.get_by_role("article", name=re.compile("Approval request")).first
        await card.get_by_text(re.compile(r"^waiting \d+ (s|min)$")).wait_for()
        assert "buy_weather_report" in await card.locator("dd").first.inner_text()
        assert json.loads(await card.locator("pre.args").inner_text()) == {"city": "Lima"}
        payload = json.loads(await card.locator("pre.payload").inner_text())
        assert payload == {"city": "Lima", "price_usd": 2.0}
        started = page.locator("td time").first
        assert re.fullmatch(r"\d+ (s|min) ago", await started.inner_text())
        await _shot(console, "app-waiting")

        await page.goto(session_url)
        # Unticked, the cancel form does not submit: the run still waits.
        danger = page.locator("section.danger")
        await danger.get_by_role("button", name="Cancel the run").click()
        await page.reload()
        await page.get_by_text("awaiting_confirmation", exact=True).wait_for()
        assert await page.locator(".decide").locator("text=Cancel the run").count() == 0

        await page.get_by_role("button", name="Approve").click()
        await page.get_by_text("completed", exact=True).wait_for()
        chat = page.locator("#events")
        await chat.get_by_text("Approval asked: Buy the weather report for Lima").wait_for()
        await chat.get_by_text("Approved", exact=True).wait_for()
        await chat.get_by_text("Tool call: buy_weather_report").first.wait_for()
        assert "adk_request_confirmation" not in await chat.inner_text()
        await _shot(console, "chat")
        await page.get_by_role("link", name="Show raw events").click()
        await chat.get_by_text("adk_request_confirmation(…)").wait_for()
        await _shot(console, "chat-raw")

        await page.get_by_role("link", name="Open report.txt v1").click()
        await page.get_by_role("heading", name="Artifact report.txt v1").wait_for()
        await page.get_by_text(re.compile("^Weather report for Lima")).wait_for()
        await _shot(console, "artifact-text")
        href = await page.get_by_role("link", name="Download").get_attribute("href")
        download = await page.request.get(urljoin(page.url, href or ""))
        assert download.headers["content-disposition"].startswith("attachment")
        assert (await download.text()).startswith("Weather report for Lima")
        await page.goto(session_url)
        await page.get_by_role("link", name="Open user:purchases.json v1").click()
        ledger = json.loads(await page.locator("pre.artifact.json").inner_text())
        assert ledger[-1]["city"] == "Lima"
        await _shot(console, "artifact-json")

        await page.goto(session_url)
        await _send(page, "Buy a weather report for Cusco")
        await page.get_by_text("Approval: Buy the weather report for Cusco").wait_for()
        await page.get_by_label("Yes, cancel this run").check()
        await page.get_by_role("button", name="Cancel the run").click()
        status = page.locator("#status")
        async with asyncio.timeout(30):  # the cancellation takes a workflow task
            while await status.inner_text() != "cancelled":
                await page.reload()
        await _shot(console, "cancelled")
    assert len(console.deployment.payments.charges()) == 1


async def test_rewind_from_the_console_restores_state_and_artifacts_and_is_refused_while_waiting(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """After a purchase, the session page offers a rewind to before it (behind a ticked
    box): state returns to what it was and report.txt gets a restoring version, nothing
    deleted. While a run waits there is no rewind form, and a posted rewind is refused."""
    async with signed_in_console(dev_server, tmp_path_factory, "web-console-rewind") as console:
        page = console.page
        await _send(page, "Buy a weather report for Quito")
        await page.get_by_role("button", name="Approve").click()
        await page.get_by_text("completed", exact=True).wait_for()
        state = page.locator("section").filter(has=page.get_by_role("heading", name="State"))
        before = json.loads(await state.locator("pre").inner_text())
        report = page.get_by_role("row").filter(has_text="report.txt")
        assert (await report.inner_text()).split("\t")[1] == "v1"

        rewind = page.locator("form.rewind")
        await rewind.get_by_label("To before").select_option(label="Buy a weather report for Quito")
        await rewind.get_by_role("button", name="Rewind").click()
        await page.reload()  # unticked: nothing happened
        assert (await report.inner_text()).split("\t")[1] == "v1"
        await rewind.get_by_label("Yes, rewind").check()
        await rewind.get_by_role("button", name="Rewind").click()
        await page.get_by_role("row").filter(has_text="report.txt").get_by_text("v2").wait_for()
        after = json.loads(await state.locator("pre").inner_text())
        await _shot(console, "rewound")

        csrf = await page.locator("form.rewind input[type=hidden]").get_attribute("value")
        await _send(page, "Buy a weather report for Cusco")
        await page.get_by_text("Approval: Buy the weather report for Cusco").wait_for()
        assert await page.locator("form.rewind").count() == 0
        refused = await page.request.post(
            page.url + "/rewind",
            form={"csrf": csrf or "", "before_invocation_id": "x", "sure": "yes"},
            fail_on_status_code=False,
        )
    assert refused.status == 409
    assert before != after
    assert {k: v for k, v in after.items() if not k.startswith(("user:", "app:"))} == {}
    assert len(console.deployment.payments.charges()) == 1
