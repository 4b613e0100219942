"""adk-temporal: Google ADK's runtime semantics, run durably on Temporal.

The names below are the everyday API; each lives in a module named after its concept
(``adk_temporal.agents``, ``adk_temporal.context``, …) and is imported on first use, so
``import adk_temporal.errors`` stays light and the core never pulls in temporalio. ADK's
own names (``LlmAgent``, ``BaseAgent``, ``FunctionTool``, ``LongRunningFunctionTool``,
``InMemorySessionService``…) are among them, so an ADK agent ports by its imports.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AdkClient",
    "AdkPlugin",
    "Agent",
    "AgentTool",
    "App",
    "BaseAgent",
    "BaseToolset",
    "CallbackContext",
    "FunctionTool",
    "InMemoryArtifactService",
    "InMemorySessionService",
    "InvocationContext",
    "LlmAgent",
    "LongRunningFunctionTool",
    "LoopAgent",
    "ParallelAgent",
    "ReadonlyContext",
    "Runner",
    "SequentialAgent",
    "Stores",
    "ToolContext",
    "tool",
]

_HOMES = {
    "AdkClient": "client",
    "AdkPlugin": "plugin",
    "Agent": "agents",
    "AgentTool": "agents",
    "App": "app",
    "BaseAgent": "agents",
    "BaseToolset": "tools",
    "CallbackContext": "context",
    "FunctionTool": "tools",
    "InMemoryArtifactService": "artifacts",
    "InMemorySessionService": "sessions",
    "InvocationContext": "context",
    "LlmAgent": "agents",
    "LongRunningFunctionTool": "tools",
    "LoopAgent": "agents",
    "ParallelAgent": "agents",
    "ReadonlyContext": "context",
    "Runner": "runner",
    "SequentialAgent": "agents",
    "Stores": "app",
    "ToolContext": "context",
    "tool": "tools",
}


def __getattr__(name: str) -> Any:
    """Import an exported name from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'adk_temporal' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)
