"""The web console in headless Chromium: sign in, chat, approve, see the answer and artifact.

Debian's ``chromium`` driven by Python Playwright (no browser download); skips with the
reason when either is missing. Assertions read visible text; the screenshots are kept for
people to look at, never compared.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
        assert (await row.inner_text()).split("\t")[:2] == ["report.txt", "1"]
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
