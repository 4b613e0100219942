"""Headless Chromium for the UI tests: Debian's ``chromium`` driven by Python Playwright
(no browser download), or a skip that says what is missing (``.ci/chromium.sh``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["CHROMIUM", "UI_TIMEOUT_MS", "launch_or_skip", "playwright_or_skip"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
UI_TIMEOUT_MS = 30_000


def playwright_or_skip() -> Any:
    """Playwright's ``async_playwright``; skips when Chromium or Playwright is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing; install Debian's chromium (.ci/chromium.sh)")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("Python playwright is not installed (pip install playwright)")
    return async_playwright


async def launch_or_skip(playwright: Playwright) -> Browser:
    """Headless Chromium; any launch failure means "no usable browser here": a skip."""
    try:
        return await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    except Exception as err:
        pytest.skip(f"cannot launch {CHROMIUM}: {err}")
