"""The library's functions stay short enough to read at once."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

MAX_CODE_LINES = 60
"""The most lines of code a function of the library may have (docstring, blank lines and
comments not counted; a nested function counts in its own and in the enclosing one)."""


def _code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    docstring: set[int] = set()
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        docstring = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    end = node.end_lineno or node.lineno
    return sum(
        1
        for number in range(node.lineno, end + 1)
        if number not in docstring
        and (text := lines[number - 1].strip())
        and not text.startswith("#")
    )


def test_no_function_of_the_library_is_longer_than_the_limit() -> None:
    """Every function in adk_temporal/, workflows/, activities/ and examples/ has at most
    MAX_CODE_LINES lines of code."""
    long: list[str] = []
    for folder in ("adk_temporal", "workflows", "activities", "examples"):
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text()
            lines = text.splitlines()
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    count = _code_lines(lines, node)
                    if count > MAX_CODE_LINES:
                        long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} {count}")
    assert long == []
