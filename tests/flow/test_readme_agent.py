"""The README's agent (`myagents.py`) runs in-process as the README says."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..commands import adk_command, offline_env

README = Path(__file__).resolve().parents[2] / "README.md"


def _myagents() -> str:
    text = README.read_text()
    found = re.search(r"Save this as `myagents.py`.*?```python\n(.*?)```", text, re.S)
    assert found is not None, "the README lost its myagents.py example"
    return found.group(1)


def test_the_readme_agent_runs_from_its_own_directory(tmp_path: Path) -> None:
    """`run --local --local-app myagents:app` finds the module in the current directory,
    asks for the approval on the terminal, and the invoice is sent."""
    (tmp_path / "myagents.py").write_text(_myagents())
    local = ["run", "--local", "--local-app", "myagents:app", "--data-dir", "data"]
    ids = ["--app", "billing", "--user", "u-1", "--session", "s-1", "--agent", "billing"]
    result = subprocess.run(
        [*adk_command(), *local, *ids, "invoice acme"],
        cwd=tmp_path,
        input="y\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Send the invoice to acme?" in result.stderr
    assert '"status": "sent"' in result.stdout
