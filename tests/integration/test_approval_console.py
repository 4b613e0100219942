"""Approval policies in the web console (headless Chromium): a card shows the votes and the
claim, the signed-in principal claims and votes as themselves, another approver's answer
is refused naming the claim, and the conversation lists every vote."""

from __future__ import annotations

import re

import pytest

from adk_temporal.devserver import DevServer

from ..approvals_app import EFFECTS_ENV, effects
from .browser import UI_TIMEOUT_MS, launch_or_skip, playwright_or_skip
from .gateway import gateway_process
from .test_approval_gateway import ALICE, BOB, CAROL, TOKENS, WORKER_APP, paused
from .test_web_api import call, until
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration


async def test_claim_and_vote_in_the_console_then_a_second_approver_completes(
    dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """carol starts ``refund 60``; alice, signed in, sees its card say 0 of 2 approvals; she
    claims it
    (bob's API answer is then 409 naming her) and approves it (1 of 2, her claim released);
    bob's approval completes it; the conversation lists both votes; refund ran once."""
    async_playwright = playwright_or_skip()
    root = tmp_path_factory.mktemp("approval-console")
    deployment = Deployment(dev_server.address, "approval-console", root / "data")
    effects_file = root / "effects.jsonl"
    env = {EFFECTS_ENV: str(effects_file)}
    with (
        worker_process(deployment, app=WORKER_APP, env=env),
        gateway_process(
            deployment, root, console=True, app=WORKER_APP, tokens_lines=TOKENS, env=env
        ) as gateway,
    ):
        async with async_playwright() as playwright:
            browser = await launch_or_skip(playwright)
            try:
                page = await browser.new_page(viewport={"width": 1200, "height": 1000})
                page.set_default_timeout(UI_TIMEOUT_MS)
                await page.goto(f"{gateway.base}/console")
                await page.get_by_label("Access token").fill(ALICE)
                await page.get_by_role("button", name="Sign in").click()
                await page.get_by_role("heading", name="App approvals").wait_for()
                path, request_id = await paused(gateway, "refund 60", token=CAROL)
                await page.goto(gateway.base + path.replace("/v1/", "/console/", 1))
                card = page.get_by_role("article", name=re.compile("Approval request"))
                await card.get_by_text("0 of 2 approvals").wait_for()
                await card.get_by_role("button", name="Claim").click()
                await card.get_by_text("claimed by alice").wait_for()
                vote = {"confirmation_id": request_id, "confirmed": True}
                refused = await call(gateway, "POST", f"{path}/confirm", vote, token=BOB)
                assert (refused.status, refused.json["error"]["reason"]) == (409, "claimed")
                assert "claimed by alice" in refused.json["error"]["message"]
                await card.get_by_role("button", name="Approve").click()
                await card.get_by_text("1 of 2 approvals (alice approved)").wait_for()
                assert await card.get_by_role("button", name="Claim").count() == 1
                approved = await call(gateway, "POST", f"{path}/confirm", vote, token=BOB)
                assert approved.status == 200, approved.text

                async def completed() -> bool:
                    shown = (await call(gateway, "GET", path, token=BOB)).json
                    return bool(shown["status"] == "completed")

                await until(completed)
                await page.reload()
                await page.get_by_text("vote: approved by alice via console").wait_for()
                await page.get_by_text("vote: approved by bob via gateway").wait_for()
                await page.screenshot(path=str(root / "votes.png"), full_page=True)
            finally:
                await browser.close()
    refunds = [e for e in effects(effects_file) if e["tool"] == "refund" and e["amount"] == 60]
    assert len(refunds) == 1
