"""The doc-block collector reads markers as docs/contributing.md describes them."""

from __future__ import annotations

import pytest

from .blocks import MarkerError, parse_blocks

PAGE = """Intro.

<!-- doc: needs-server worker="myagents:app" exit=3 -->

```bash
adk-temporal run "invoice acme"
```

```json
{"not": "a program"}
```

<!-- doc: skip reason="serves forever" -->
```python
serve_forever()
```
"""


def test_markers_apply_to_the_next_block_and_other_languages_are_left_out() -> None:
    """A marker (blank lines allowed before the fence) sets flags and options; JSON is skipped."""
    run, skipped = parse_blocks(PAGE, "page.md")
    assert (run.where, run.lang, run.code) == (
        "page.md:5",
        "bash",
        'adk-temporal run "invoice acme"\n',
    )
    assert run.flags == {"needs-server"} and run.options["worker"] == "myagents:app"
    assert (run.expected_exit, run.skip_reason) == (3, None)
    assert (skipped.lang, skipped.skip_reason) == ("python", "serves forever")


@pytest.mark.parametrize(
    "text",
    [
        "<!-- doc: skp -->\n```bash\ntrue\n```\n",
        "<!-- doc: skip -->\nsome prose\n```bash\ntrue\n```\n",
        "<!-- doc: skip reason=x -->\n```json\n{}\n```\n",
    ],
    ids=["unknown word", "prose between", "not runnable"],
)
def test_a_marker_that_cannot_apply_is_refused(text: str) -> None:
    """A misspelt marker, or one not right before a runnable block, raises MarkerError."""
    with pytest.raises(MarkerError, match=r"page\.md:1"):
        parse_blocks(text, "page.md")


def test_a_skip_without_a_reason_has_an_empty_reason() -> None:
    """So the suite can tell it from a block that runs (``None``) and fail it."""
    [block] = parse_blocks("<!-- doc: skip -->\n```sh\ntrue\n```\n", "page.md")
    assert block.skip_reason == ""
