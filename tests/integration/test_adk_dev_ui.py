"""ADK's dev UI (the built bundle of the google-adk 2.13 wheel) in headless Chromium against
``adk-temporal web --adk-dev`` (SPEC §1.14; issue 43): pick the app, send a message, see
the reply and the state, approve a tool confirmation; the tool runs once on the worker.
Screenshots are kept in the test's temporary directory.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_temporal.devserver import DevServer

from .. import adk_web_app
from ..adk_env import AdkEnv, adk_env
from .browser import UI_TIMEOUT_MS, launch_or_skip, playwright_or_skip
from .gateway import Gateway, gateway_process
from .workers import Deployment, worker_process

APP = "tests.adk_web_app:app"


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory."""
    return Deployment(dev_server.address, f"adk-ui-{uuid.uuid4().hex[:8]}", tmp_path / "data")


@pytest.fixture
def gateway(deployment: Deployment, tmp_path: Path) -> Iterator[Gateway]:
    """The gateway in development mode with ADK's dev UI, and a worker of the test app."""
    env: AdkEnv = adk_env()
    args = ["--adk-dev", "--adk-dev-ui", str(env.dev_ui)]
    runs = {adk_web_app.RUNS_ENV: str(deployment.data_dir / "runs.txt")}
    with (
        worker_process(deployment, app=APP, env=runs),
        gateway_process(deployment, tmp_path, app=APP, args=args) as served,
    ):
        yield served


async def test_the_dev_ui_chats_shows_state_and_approves_a_confirmation(
    gateway: Gateway, deployment: Deployment, tmp_path: Path
) -> None:
    """The dev UI opens on the app, a message gets the tool call and the reply, the State tab
    shows what the tool wrote, and approving ``pay`` in the confirmation card runs it once
    and shows the reply."""
    async with playwright_or_skip()() as playwright:
        browser = await launch_or_skip(playwright)
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(UI_TIMEOUT_MS)
        await page.goto(f"{gateway.base}/dev-ui/?app={adk_web_app.APP_NAME}")
        box = page.get_by_placeholder("Type a message...")
        await box.fill("weather in Rome")
        await box.press("Enter")
        await page.get_by_text("It is sunny in Rome.").first.wait_for()
        await page.get_by_text("State", exact=True).click()
        await page.get_by_text('"Rome"').first.wait_for()
        await page.screenshot(path=tmp_path / "1-reply-and-state.png")
        await box.fill("pay 5")
        await box.press("Enter")
        card = page.locator("app-long-running-response").first
        await card.get_by_text("Please approve or reject the tool call pay().").wait_for()
        await page.screenshot(path=tmp_path / "2-confirmation.png")
        await card.get_by_role("checkbox").check()
        await card.get_by_role("button", name="Submit").click()
        await page.get_by_text("Paid 5.").first.wait_for()
        await page.screenshot(path=tmp_path / "3-approved.png")
        await browser.close()
    runs = (deployment.data_dir / "runs.txt").read_text().splitlines()
    assert len(runs) == 1 and runs[0].endswith(" 5")
    assert all(
        (tmp_path / f).stat().st_size > 0 for f in ("1-reply-and-state.png", "3-approved.png")
    )
