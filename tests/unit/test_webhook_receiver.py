"""The bundled webhook receiver, started as docs/guides/notifications.md shows."""

from __future__ import annotations

import os
import subprocess
import sys


def test_the_receiver_without_its_secret_names_the_variable() -> None:
    """Without ADK_NOTIFY_SECRET it exits 1 with one line naming it, not a traceback."""
    env = {k: v for k, v in os.environ.items() if k != "ADK_NOTIFY_SECRET"}
    result = subprocess.run(
        [sys.executable, "-m", "adk_temporal.examples.webhook_receiver", "8080"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: set ADK_NOTIFY_SECRET")
