"""The fenced shell and Python blocks of the README and of docs/, with their markers.

A marker is an HTML comment on the line before a block's opening fence (blank lines may
separate them); it is invisible on the rendered page:

- ``<!-- doc: skip reason="..." -->``: the block is not run, for the reason given;
- ``<!-- doc: needs-server -->``: the block runs against the suite's Temporal dev server
  with a worker for the bundled examples (``worker="module:attr"``: for that app instead;
  ``key-file="NAME"``: sealing payloads with the page's key file ``NAME``);
- ``<!-- doc: file="NAME" -->``: the block is saved as ``NAME`` in the page's directory
  before it runs, for the blocks after it;
- ``exit=N`` (with any of the above): the status the shell block is expected to end with.

Blocks of other languages (JSON, text, diagrams) are not programs and are not collected.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RUNNABLE", "Block", "MarkerError", "doc_pages", "page_blocks", "parse_blocks", "tally"]

ROOT = Path(__file__).resolve().parents[2]
SHELL = frozenset({"bash", "sh", "shell"})
RUNNABLE = SHELL | {"python"}
"""The fence languages whose blocks the suite runs."""

_MARKER = re.compile(r"^<!--\s*doc:\s*(?P<body>.*?)\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>`{3,})\s*(?P<lang>[\w+-]*)[^`]*$")
_FLAGS = frozenset({"skip", "needs-server"})
_OPTIONS = frozenset({"reason", "worker", "key-file", "file", "exit"})


class MarkerError(ValueError):
    """A ``<!-- doc: ... -->`` marker names an unknown word or misses a value."""


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and code, and its marker."""

    page: str
    line: int
    lang: str
    code: str
    flags: frozenset[str] = frozenset()
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``page:line`` of the opening fence."""
        return f"{self.page}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        """Why the block is not run (``""`` when the marker gives no reason), or ``None``."""
        return self.options.get("reason", "") if "skip" in self.flags else None

    @property
    def expected_exit(self) -> int:
        """The status a shell block must end with."""
        return int(self.options.get("exit", "0"))


def _marker(body: str, where: str) -> tuple[frozenset[str], dict[str, str]]:
    flags: set[str] = set()
    options: dict[str, str] = {}
    for word in shlex.split(body):
        name, sep, value = word.partition("=")
        if sep and name in _OPTIONS:
            options[name] = value
        elif not sep and name in _FLAGS:
            flags.add(name)
        else:
            raise MarkerError(f"{where}: unknown doc marker word {word!r}")
    return frozenset(flags), options


def parse_blocks(text: str, page: str) -> list[Block]:
    """The runnable blocks of a Markdown text, in order.

    Raises:
        MarkerError: A marker is malformed or is not followed by a block.
    """
    blocks: list[Block] = []
    lines = text.splitlines()
    pending: tuple[frozenset[str], dict[str, str], int] | None = None
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        marker, fence = _MARKER.match(line), _FENCE.match(line)
        if marker is not None:
            pending = (*_marker(marker["body"], f"{page}:{index + 1}"), index + 1)
        elif fence is not None:
            end = index + 1
            while end < len(lines) and lines[end].strip() != fence["fence"]:
                end += 1
            lang = fence["lang"].lower()
            flags, options, _ = pending or (frozenset(), {}, 0)
            if lang in RUNNABLE:
                code = "\n".join(lines[index + 1 : end]) + "\n"
                blocks.append(Block(page, index + 1, lang, code, flags, options))
            elif pending is not None:
                raise MarkerError(f"{page}:{pending[2]}: marker before a {lang or 'plain'} block")
            pending, index = None, end
        elif line and pending is not None:
            raise MarkerError(f"{page}:{pending[2]}: marker not followed by a block")
        index += 1
    return blocks


def doc_pages() -> list[Path]:
    """The README and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def page_blocks(page: Path) -> list[Block]:
    """The runnable blocks of one page, named by its path in the repository."""
    return parse_blocks(page.read_text(), str(page.relative_to(ROOT)))


def tally() -> list[str]:
    """How many blocks the doc tests run and skip, then each skipped block with its reason."""
    blocks = [block for page in doc_pages() for block in page_blocks(page)]
    skipped = [block for block in blocks if block.skip_reason is not None]
    lines = [f"doc blocks: {len(blocks) - len(skipped)} run, {len(skipped)} skipped"]
    lines += [f"  skipped {b.where}: {b.skip_reason or '(no reason given)'}" for b in skipped]
    return lines
