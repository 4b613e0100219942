"""The Temporal UI shows what an operator needs: waiting runs, what they wait for, the steps.

Headless Chromium (Debian's ``chromium``, driven by Python Playwright without a browser
download) against a dev server of its own with the UI enabled, so the session's server can
stay headless. Skips with the reason when Chromium or Playwright is not available
(``.ci/chromium.sh`` installs Chromium).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.flow.messages import PendingRequest
from adk_temporal.render import workflows_url
from adk_temporal.visibility import WAITING_VIEW
from adk_temporal.worker import artifact_store, build_worker, session_store

from .browser import UI_TIMEOUT_MS, launch_or_skip, playwright_or_skip
from .conftest import FAST_POLL

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.integration


@dataclass
class PausedRun:
    """A paid-report invocation waiting for approval, served by a live worker."""

    server: DevServer
    handle: InvocationHandle
    request: PendingRequest
    browser: Browser

    def detail_url(self, tab: str) -> str:
        """The run's detail page on ``tab`` (``history``, ``timeline``, ``user-metadata``)."""
        wid = quote(self.handle.workflow_id, safe="")
        return f"{self.server.ui_url}/namespaces/default/workflows/{wid}/{self.handle.run_id}/{tab}"


async def _visible(adk: AdkClient, workflow_id: str) -> None:
    """Wait until visibility lists the run as waiting (it lags the upsert a little)."""
    async with asyncio.timeout(15):
        while workflow_id not in await adk.waiting(("awaiting_confirmation",)):
            await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
async def paused_run(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[PausedRun]:
    """A UI-enabled dev server, a worker, a paused purchase and a headless browser."""
    async_playwright = playwright_or_skip()
    root = tmp_path_factory.mktemp("ui")
    server = DevServer(
        db_filename=root / "temporal.db", dynamic_config=FAST_POLL, log_path=root / "server.log"
    )
    with server:
        sessions = session_store(root / "data")
        task_queue = f"ui-{uuid.uuid4().hex[:8]}"
        adk = await AdkClient.connect(server.address, task_queue=task_queue)
        worker = build_worker(
            adk.client,
            App(agents=[build_weather_agent("scripted:weather")]),
            task_queue=task_queue,
            stores=Stores(sessions, artifact_store(root / "data")),
        )
        async with worker, async_playwright() as playwright:
            handle = await adk.start(
                APP_NAME,
                "ui-user",
                "ui-session",
                "weather_agent",
                "Buy a weather report for Hangzhou",
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [request] = await handle.pending()
            # A malformed answer the details must list as refused.
            raw = adk.client.get_workflow_handle(handle.workflow_id)
            await raw.signal("adk_confirm", {"confirmation_id": request.id})
            async with asyncio.timeout(15):
                while not (await handle.status()).ignored_signals:
                    await asyncio.sleep(0.1)
            await _visible(adk, handle.workflow_id)
            browser = await launch_or_skip(playwright)
            try:
                yield PausedRun(server, handle, request, browser)
            finally:
                await browser.close()
                await handle.confirm(request.id, False)
        await sessions.close()


async def _new_page(run: PausedRun) -> Page:
    return await run.browser.new_page(viewport={"width": 1400, "height": 1000})


async def _frames_text(page: Page) -> str:
    """The text of the page and every iframe (current details render in iframes)."""
    texts = []
    for frame in page.frames:
        try:
            texts.append(await frame.inner_text("body", timeout=2_000))
        except Exception:  # a frame that navigated away or has no body yet
            continue
    return "\n".join(texts)


async def test_waiting_runs_query_lists_the_paused_invocation(
    paused_run: PausedRun, tmp_path: Path
) -> None:
    """The saved view docs/guides/console.md gives (invocations waiting for an answer, no
    auxiliary runs) shows the run in the UI's list."""
    page = await _new_page(paused_run)
    try:
        await page.goto(workflows_url(paused_run.server.ui_url, WAITING_VIEW))
        await page.get_by_text(paused_run.handle.workflow_id, exact=True).first.wait_for(
            timeout=UI_TIMEOUT_MS
        )
        await page.screenshot(path=tmp_path / "waiting-runs.png")
        body = await page.inner_text("body")
    finally:
        await page.close()
    assert "AdkStatus" in body
    assert "InvocationWorkflow" in body


async def test_detail_page_shows_current_details_and_activity_summaries(
    paused_run: PausedRun, tmp_path: Path
) -> None:
    """Current details say what the run waits for and the command; steps carry summaries."""
    page = await _new_page(paused_run)
    request_id = paused_run.request.id
    try:
        await page.goto(paused_run.detail_url("user-metadata"))
        await page.get_by_text("Current Details").first.wait_for(timeout=UI_TIMEOUT_MS)
        # The markdown renders inside an iframe that loads after the tab: poll its text.
        async with asyncio.timeout(UI_TIMEOUT_MS / 1000):
            while request_id not in (details := await _frames_text(page)):
                await asyncio.sleep(0.2)
        await page.screenshot(path=tmp_path / "current-details.png")

        await page.goto(paused_run.detail_url("history"))
        summary = "buy_weather_report(city='Hangzhou')"
        await page.get_by_text(summary).first.wait_for(timeout=UI_TIMEOUT_MS)
        await page.screenshot(path=tmp_path / "history.png")
        history = await page.inner_text("body")
    finally:
        await page.close()
    assert "waiting for approval: buy_weather_report" in details
    assert "Waiting for approval of buy_weather_report(city='Hangzhou')" in details
    assert "Buy the weather report for Hangzhou for $2.00?" in details
    address = paused_run.server.address
    assert not address.endswith(":7233")
    assert (
        f"adk-temporal confirm {paused_run.handle.workflow_id} {request_id} --approve "
        f"--address {address}" in details
    )
    assert "--name adk_confirm" in details and f"--address {address}" in details
    assert "Refused answers" in details
    assert f"{request_id} (confirmation" in details and "confirmed: Field required" in details
    assert "weather_agent · model step 1" in history
    assert "buy_weather_report(city='Hangzhou')" in history
