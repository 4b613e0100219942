"""Project defaults: the app, agent, user and session a command uses when no flag names them.

Each value comes from the first of: the command-line flag, an environment variable
(``ADK_APP``, ``ADK_AGENT``, ``ADK_USER``, ``ADK_SESSION``, ``ADK_LOCAL_APP``), the
project file, and a built-in default (only ``chat`` has one: a new session). The project
file is the nearest ``adk-temporal.toml`` — or ``pyproject.toml`` with a
``[tool.adk-temporal]`` table — in the current directory or one above it; in one directory
``adk-temporal.toml`` wins. Its keys are the names of :data:`FIELDS`::

    app = "weather"
    agent = "weather_agent"
    user = "alice"
    local_app = "examples.weather:app"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import AdkRequestError

__all__ = [
    "CONFIG_FILE",
    "FIELDS",
    "Field",
    "ProjectConfigError",
    "ProjectDefaults",
    "find_project",
    "where_to_set",
]

CONFIG_FILE = "adk-temporal.toml"
"""The project file's own name; ``pyproject.toml``'s ``[tool.adk-temporal]`` also counts."""

Field = Literal["app", "agent", "user", "session", "local_app"]
"""A value the project may give a default for."""

FIELDS: dict[Field, str] = {
    "app": "ADK_APP",
    "agent": "ADK_AGENT",
    "user": "ADK_USER",
    "session": "ADK_SESSION",
    "local_app": "ADK_LOCAL_APP",
}
"""Each defaultable value and the environment variable that sets it."""

_PYPROJECT = "pyproject.toml"
_TABLE = "adk-temporal"


class ProjectConfigError(AdkRequestError, ValueError):
    """A project file cannot be used: not TOML, an unknown key, a value that is no text."""


@dataclass(frozen=True)
class ProjectDefaults:
    """The defaults one project file gives, and where that file is.

    Args:
        path: The file the values came from; ``None`` when no project file was found.
        values: The file's values by field.
    """

    path: Path | None = None
    values: dict[Field, str] = field(default_factory=dict)

    def get(self, name: Field) -> str | None:
        """The file's value for ``name``, or ``None`` when it gives none."""
        return self.values.get(name)


def _table(path: Path) -> dict[str, object] | None:
    """The defaults table of ``path``; ``None`` for a pyproject.toml without one.

    Raises:
        ProjectConfigError: The file is not valid TOML, or its table is not a table.
    """
    try:
        loaded = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ProjectConfigError(f"{path} is not valid TOML: {err}") from None
    if path.name == CONFIG_FILE:
        return loaded
    tool = loaded.get("tool")
    table = tool.get(_TABLE) if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ProjectConfigError(f"{path}: [tool.{_TABLE}] must be a table")
    return table


def _values(path: Path, table: dict[str, object]) -> dict[Field, str]:
    """The table's defaults, each checked.

    Raises:
        ProjectConfigError: A key is not one of :data:`FIELDS`, or a value is not a
            non-empty string.
    """
    values: dict[Field, str] = {}
    for key, value in table.items():
        name = next((f for f in FIELDS if f == key.replace("-", "_")), None)
        if name is None:
            raise ProjectConfigError(
                f"{path}: unknown key {key!r}; the keys are {', '.join(FIELDS)}"
            )
        if not isinstance(value, str) or not value.strip():
            raise ProjectConfigError(f"{path}: {key} must be a non-empty string, got {value!r}")
        values[name] = value.strip()
    return values


def find_project(start: Path) -> ProjectDefaults:
    """The defaults of the nearest project file at or above ``start``.

    Raises:
        ProjectConfigError: That file is malformed (a malformed file is never skipped for
            one further up: its values would silently be someone else's).
    """
    for directory in (start, *start.parents):
        for name in (CONFIG_FILE, _PYPROJECT):
            path = directory / name
            if not path.is_file():
                continue
            table = _table(path)
            if table is not None:
                return ProjectDefaults(path, _values(path, table))
    return ProjectDefaults()


def where_to_set(name: Field, flag: str, project: ProjectDefaults) -> str:
    """Where a missing ``name`` may be given, for the error that says it is missing."""
    where = project.path or f"{CONFIG_FILE} (or [tool.{_TABLE}] in {_PYPROJECT})"
    return f'Pass {flag}, set {FIELDS[name]}, or add {name} = "..." to {where}'
