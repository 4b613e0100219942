"""The package as installed type-checks under ``mypy --strict``.

``workflows/``, ``activities/`` and ``examples/`` are installed as subpackages of
``adk_temporal`` (``package-dir`` in ``pyproject.toml``), which an editable install hides from
mypy. The test lays the package out as a wheel would, from that same mapping, and checks it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _installed_layout(root: Path) -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(root, ignore_errors=True)
    for package, folder in sorted(mapping.items()):
        shutil.copytree(
            REPO / folder,
            root / package.replace(".", "/"),
            ignore=shutil.ignore_patterns("__pycache__"),
            dirs_exist_ok=True,
        )


def test_installed_package_is_mypy_strict_clean() -> None:
    """mypy --strict finds no error in adk_temporal, workflows/ and activities/ included."""
    # Under build/ (ignored by git) rather than a temporary directory, so mypy's cache
    # survives between local runs.
    root = REPO / "build" / "typecheck"
    _installed_layout(root)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / "build" / "mypy-cache"),
            "-p",
            "adk_temporal",
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
