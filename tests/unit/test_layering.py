"""The core never imports temporalio: it is usable and testable without Temporal."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "adk_temporal.errors",
    "adk_temporal.events",
    "adk_temporal.state",
    "adk_temporal.context",
    "adk_temporal.confirmation",
    "adk_temporal.resume",
    "adk_temporal.history",
    "adk_temporal.merge",
    "adk_temporal.memory",
    "adk_temporal.tools",
    "adk_temporal.agents",
    "adk_temporal.app",
    "adk_temporal.faults",
    "adk_temporal.models",
    "adk_temporal.artifacts",
    "adk_temporal.sessions",
    "adk_temporal.devserver",
    "adk_temporal.asyncutil",
    "adk_temporal.ids",
    "adk_temporal.following",
    "adk_temporal.flow",
    "adk_temporal.flow.messages",
    "adk_temporal.flow.requests",
    "adk_temporal.flow.executor",
    "adk_temporal.flow.invocation",
]


def test_core_modules_import_without_temporalio() -> None:
    """Importing every core module leaves temporalio unloaded."""
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'temporalio')\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_package_exports_resolve_lazily() -> None:
    """Every name in adk_temporal.__all__ resolves; only the Temporal ones load temporalio."""
    code = (
        "import sys, adk_temporal\n"
        "core = [n for n in adk_temporal.__all__ if n not in ('AdkClient', 'AdkPlugin')]\n"
        "[getattr(adk_temporal, n) for n in core]\n"
        "before = 'temporalio' in sys.modules\n"
        "adk_temporal.AdkClient, adk_temporal.AdkPlugin\n"
        "print(before, 'temporalio' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "True"]
