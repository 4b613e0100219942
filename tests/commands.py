"""Running the ``adk-temporal`` command from tests, offline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["adk_command", "offline_env"]


def adk_command() -> list[str]:
    """The installed console script beside this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "adk-temporal"
    return [str(script)] if script.exists() else [sys.executable, "-m", "adk_temporal.cli"]


def offline_env() -> dict[str, str]:
    """The environment minus anything that would pick Gemini or another server or store."""
    dropped = {
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "TEMPORAL_ADDRESS",
        "TEMPORAL_NAMESPACE",
        "ADK_TASK_QUEUE",
        "ADK_DATA_DIR",
        "ADK_GCS_BUCKET",
    }
    return {k: v for k, v in os.environ.items() if k not in dropped}
