"""The Temporal UI shows encrypted runs decrypted through the codec server, and only then.

A dev server of its own with the UI, a worker and client sharing a key file, a run paused
for approval, and a :class:`~adk_temporal.codec_server.CodecServer` allowing the UI's
origin. Headless Chromium (Debian's ``chromium`` through Python Playwright, as in
``test_ui.py``) points the UI at the codec server the way a person does: the UI's own
"Codec Server" dialog, browser setting, with "Include cross-origin credentials" on — the
dev server's UI has no sign-in, so the browser proves the token with the cookie of the
codec server's sign-in page. Checked by visible text. Skips with the reason when Chromium
or Playwright is not available.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient, InvocationHandle
from adk_temporal.codec import EncryptionCodec, rotate_key_file
from adk_temporal.codec_server import CodecServer
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME, build_weather_agent
from adk_temporal.worker import artifact_store, build_worker, session_store

from .browser import UI_TIMEOUT_MS, launch_or_skip, playwright_or_skip
from .conftest import FAST_POLL

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.integration

TOKEN = "ui-codec-token-8d2e61c4a9"


@dataclass
class EncryptedRun:
    """A paused, encrypted run; the codec server; a browser."""

    server: DevServer
    codec_server: CodecServer
    handle: InvocationHandle
    city: str
    browser: Browser

    def history_url(self) -> str:
        """The run's history page."""
        wid = quote(self.handle.workflow_id, safe="")
        return (
            f"{self.server.ui_url}/namespaces/default/workflows/{wid}/{self.handle.run_id}/history"
        )


@pytest.fixture(scope="module")
async def encrypted_run(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EncryptedRun]:
    """A UI-enabled dev server, an encrypted paused purchase, a codec server, a browser."""
    async_playwright = playwright_or_skip()
    root = tmp_path_factory.mktemp("ui-codec")
    rotate_key_file(root / "keys.json")
    codec = EncryptionCodec.from_file(root / "keys.json")
    city = f"Uq{uuid.uuid4().hex[:8]}town"
    server = DevServer(
        db_filename=root / "temporal.db", dynamic_config=FAST_POLL, log_path=root / "server.log"
    )
    with server, CodecServer(codec, TOKEN, ui_origins=[server.ui_url]) as codec_server:
        sessions = session_store(root / "data")
        task_queue = f"ui-codec-{uuid.uuid4().hex[:8]}"
        adk = await AdkClient.connect(server.address, task_queue=task_queue, payload_codec=codec)
        worker = build_worker(
            adk.client,
            App(agents=[build_weather_agent("scripted:weather")]),
            task_queue=task_queue,
            stores=Stores(sessions, artifact_store(root / "data")),
        )
        async with worker, async_playwright() as playwright:
            handle = await adk.start(
                APP_NAME, "ui-user", "ui-codec", "weather_agent", f"Buy a weather report for {city}"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            browser = await launch_or_skip(playwright)
            try:
                yield EncryptedRun(server, codec_server, handle, city, browser)
            finally:
                await browser.close()
                [request] = await handle.pending()
                await handle.confirm(request.id, False)
        await sessions.close()


async def _point_ui_at_codec_server(page: Page, run: EncryptedRun) -> None:
    """Open the run and set the UI's codec server as a person would, in its dialog."""
    await page.goto(run.history_url())
    await page.get_by_test_id("data-encoder-status").click()
    await page.get_by_text("Use my browser setting and ignore Cluster-level setting.").click()
    await page.get_by_placeholder("Paste your endpoint here").fill(run.codec_server.url)
    await page.get_by_text("Include cross-origin credentials").click()
    await page.get_by_role("button", name="Apply").click()


async def test_without_sign_in_the_ui_shows_only_ciphertext(
    encrypted_run: EncryptedRun, tmp_path: Path
) -> None:
    """The codec server refuses the unsigned browser (401); the UI says so, no marker shows."""
    context = await encrypted_run.browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        await _point_ui_at_codec_server(page, encrypted_run)
        async with page.expect_response(
            lambda r: r.url.startswith(encrypted_run.codec_server.url) and "/decode" in r.url,
            timeout=UI_TIMEOUT_MS,
        ) as refused:
            await page.reload()
        assert (await refused.value).status == 401
        banner = page.locator("#content").get_by_text("Codec Server could not connect")
        await banner.wait_for(timeout=UI_TIMEOUT_MS)
        await page.screenshot(path=tmp_path / "encrypted.png")
        body = await page.inner_text("body")
    finally:
        await context.close()
    assert encrypted_run.city not in body


async def test_signed_in_the_ui_shows_the_decrypted_run(
    encrypted_run: EncryptedRun, tmp_path: Path
) -> None:
    """After signing in on the codec server's page, the UI shows input and summaries."""
    context = await encrypted_run.browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        await page.goto(encrypted_run.codec_server.url + "/")
        await page.get_by_label("Token").fill(TOKEN)
        await page.get_by_role("button", name="Sign in").click()
        await page.get_by_text("Signed in.").wait_for(timeout=UI_TIMEOUT_MS)

        await _point_ui_at_codec_server(page, encrypted_run)
        await page.reload()
        summary = f"buy_weather_report(city='{encrypted_run.city}')"
        await page.get_by_text(summary).first.wait_for(timeout=UI_TIMEOUT_MS)
        await page.get_by_text(f"Buy a weather report for {encrypted_run.city}").first.wait_for(
            timeout=UI_TIMEOUT_MS
        )
        await page.screenshot(path=tmp_path / "decrypted.png")
    finally:
        await context.close()
