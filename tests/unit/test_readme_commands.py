"""The README's Quick start is exactly two commands, and CI runs the test one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", quick_start, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_quick_start_is_exactly_the_demo_and_the_tests() -> None:
    """Two commands: install and run the demo; install the test extra and run pytest."""
    demo, tests = _quick_start_commands()
    assert demo.endswith("adk-temporal demo")
    assert "pip install" in demo
    assert "pip install" in tests and "[test]" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run executes exactly the test command shown in the README's Quick start."""
    _, tests = _quick_start_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci_lines
