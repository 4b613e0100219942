"""The package as installed, and the test tree beside it, type-check under ``mypy --strict``.

``workflows/``, ``activities/`` and ``examples/`` are installed as subpackages of
``adk_temporal`` (``package-dir`` in ``pyproject.toml``), which an editable install hides from
mypy. The tests lay the package out as a wheel would, from that same mapping, and check it;
the second also copies ``tests/`` beside it, so the tests are checked against the installed
package's types.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Under build/ (ignored by git) rather than a temporary directory, so mypy's cache survives
# between local runs.
ROOT = REPO / "build" / "typecheck"
CACHE = REPO / "build" / "mypy-cache"


def _installed_layout(root: Path, *, with_tests: bool = False) -> None:
    """Lay ``adk_temporal`` out under ``root`` as a wheel installs it (and ``tests/`` beside it)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    mapping: dict[str, str] = dict(config["tool"]["setuptools"]["package-dir"])
    if with_tests:
        mapping["tests"] = "tests"
    shutil.rmtree(root, ignore_errors=True)
    for package, folder in sorted(mapping.items()):
        shutil.copytree(
            REPO / folder,
            root / package.replace(".", "/"),
            ignore=shutil.ignore_patterns("__pycache__"),
            dirs_exist_ok=True,
        )


def _mypy_strict(root: Path, package: str) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` (the project's configuration) over ``package``, run from ``root``."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(CACHE),
            "-p",
            package,
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )


def test_installed_package_is_mypy_strict_clean() -> None:
    """mypy --strict finds no error in adk_temporal, workflows/ and activities/ included."""
    _installed_layout(ROOT)
    result = _mypy_strict(ROOT, "adk_temporal")
    assert result.returncode == 0, result.stdout + result.stderr


def test_test_tree_is_mypy_strict_clean() -> None:
    """mypy --strict finds no error in tests/, checked against the installed package."""
    _installed_layout(ROOT, with_tests=True)
    result = _mypy_strict(ROOT, "tests")
    assert result.returncode == 0, result.stdout + result.stderr
