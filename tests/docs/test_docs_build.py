"""The docs site builds with `mkdocs build --strict`, its CLI reference generated."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click

from adk_temporal.cli import main

from .blocks import ROOT


def test_the_docs_build_strictly_with_every_command_in_the_cli_reference(
    tmp_path: Path,
) -> None:
    """A broken link, a page missing from the nav's files or an unrenderable docstring fails
    the build; the CLI page lists every command the click group has."""
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(Path(sys.executable).parent), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    cli_page = (site / "reference" / "cli" / "index.html").read_text()
    commands = main.list_commands(click.Context(main, info_name="adk-temporal"))
    assert commands
    assert [c for c in commands if f"adk-temporal {c}" not in cli_page] == []


def test_every_relative_link_of_the_readme_names_a_file() -> None:
    """The README is outside the docs site, so its links are checked here."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)[^)]*\)", readme)
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []
