"""The tree is ruff-clean: lint rules and formatting, as configured in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_passes() -> None:
    """No lint findings anywhere in the repository."""
    result = _ruff("check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    """Every file is formatted as `ruff format` would write it."""
    result = _ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr
