"""``App``: what a worker serves — its agents, and the models and memory they use.

The CLI loads one with ``--app module:attr``; the attribute may be an :class:`App`, one
``Agent``, a list of agents, or a zero-argument function returning any of these.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from .agents import Agent
from .errors import AdkRequestError
from .memory import MemoryService
from .models import ModelRegistry, default_registry

__all__ = ["App", "AppLoadError", "load_app"]


class AppLoadError(AdkRequestError):
    """``--app module:attr`` does not name an importable app."""


@dataclass(frozen=True)
class App:
    """The agents a worker serves and the services they need besides storage.

    Args:
        agents: The agents, looked up by name when an invocation starts.
        models: Resolves the agents' model names; Gemini plus the scripted models by default.
        memory_service: Backs ``ctx.search_memory``; ``None`` makes it raise.
    """

    agents: Sequence[Agent]
    models: ModelRegistry = field(default_factory=default_registry)
    memory_service: MemoryService | None = None


def _as_app(value: object, spec: str) -> App:
    if isinstance(value, App):
        return value
    if isinstance(value, Agent):
        return App(agents=[value])
    if isinstance(value, Sequence) and value and all(isinstance(a, Agent) for a in value):
        return App(agents=list(value))
    if callable(value):
        return _as_app(value(), spec)
    raise AppLoadError(
        f"{spec!r} is a {type(value).__name__}; expected an App, an Agent, a list of agents, "
        "or a function returning one"
    )


def load_app(spec: str) -> App:
    """Import ``module:attr`` and return it as an :class:`App`.

    Raises:
        AppLoadError: The spec is malformed, the module does not import, or the attribute
            is missing or of the wrong kind.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AppLoadError(f"--app must look like 'package.module:attribute', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise AppLoadError(f"cannot import {module_name!r} for --app {spec!r}: {err}") from err
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise AppLoadError(f"module {module_name!r} has no attribute {attr!r}") from None
    return _as_app(value, spec)
