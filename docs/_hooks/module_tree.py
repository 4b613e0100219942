"""Docs build hook: the design page's module tree, generated from each module's first
docstring line, so it cannot drift from the code (a hand-kept one missed 9 modules)."""

from __future__ import annotations

import ast
import textwrap
import tomllib
from pathlib import Path
from typing import Any

MARKER = "<!-- module-tree -->"
"""Where a page wants the tree."""

REPO = Path(__file__).resolve().parents[2]
_COLUMN = 25
_WIDTH = 96


def _first_line(path: Path) -> str:
    """The first line of the module's docstring; empty when it has none."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.strip().split("\n", 1)[0].strip()


def _line(depth: int, name: str, text: str) -> list[str]:
    head = "  " * depth + name
    pad = max(_COLUMN - len(head), 1)
    wrapped = textwrap.wrap(text, _WIDTH - _COLUMN) or [""]
    first = f"{head}{' ' * pad}{wrapped[0]}".rstrip()
    return [first, *(" " * _COLUMN + rest for rest in wrapped[1:])]


def _folder(folder: Path, depth: int) -> list[str]:
    lines: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            lines += _line(depth, f"{path.name}/", _first_line(path / "__init__.py"))
            lines += _folder(path, depth + 1)
        elif path.suffix == ".py" and path.name != "__init__.py":
            lines += _line(depth, path.name, _first_line(path))
    return lines


def module_tree(repo: Path = REPO) -> str:
    """Every module of the installed package, folder by folder, with its first docstring
    line; the mapped top-level folders (``workflows/``…) after the package."""
    config = tomllib.loads((repo / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    lines: list[str] = []
    for package, folder in mapping.items():
        root = repo / folder
        where = f"installed as {package}: " if folder != package else ""
        lines += _line(0, f"{folder}/", where + _first_line(root / "__init__.py"))
        lines += _folder(root, 1)
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Put the tree where a page has :data:`MARKER`."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, f"```text\n{module_tree()}\n```")
