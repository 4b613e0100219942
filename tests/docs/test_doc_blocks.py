"""Every shell and Python block of the README and docs/ runs as printed, or says why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from .blocks import ROOT, doc_pages, page_blocks, tally
from .runner import PageRun

PAGES = doc_pages()


def test_every_skipped_block_says_why() -> None:
    """A skip marker without a reason fails; the tally printed after the run names each."""
    blocks = [block for page in PAGES for block in page_blocks(page)]
    unexplained = [b.where for b in blocks if b.skip_reason == ""]
    assert unexplained == [], "\n".join(tally())
    assert len([b for b in blocks if b.skip_reason is None]) > len(blocks) // 2


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
async def test_the_page_blocks_run(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each block of the page ends with its expected status, in order, in the page's home."""
    run = PageRun(tmp_path, lambda: request.getfixturevalue("dev_server"))
    blocks = page_blocks(page)
    try:
        for block in blocks:
            if block.skip_reason is None:
                await run.run(block)
    finally:
        await run.close()
    print(f"{page.name}: {len(run.ran)} of {len(blocks)} blocks ran")
    assert len(run.ran) == len([b for b in blocks if b.skip_reason is None])
