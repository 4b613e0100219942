"""The package's layers: the core never imports temporalio, nothing imports upwards, no
import circles."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

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
    "adk_temporal.ports",
    "adk_temporal.asyncutil",
    "adk_temporal.ids",
    "adk_temporal.following",
    "adk_temporal.flow",
    "adk_temporal.flow.messages",
    "adk_temporal.flow.requests",
    "adk_temporal.flow.executor",
    "adk_temporal.flow.invocation",
    "adk_temporal.flow.graph",
    "adk_temporal.flow.graph_state",
    "adk_temporal.flow.node_values",
    "adk_temporal.steps.agent_node",
    "adk_temporal.flow.remote",
    "adk_temporal.workflow",
    "adk_temporal.run_config",
    "adk_temporal.extras",
    "adk_temporal.steps",
    "adk_temporal.runner",
    "adk_temporal.rewind",
    "adk_temporal.compaction",
    "adk_temporal.audit",
    "adk_temporal.keys",
    "adk_temporal.keys.forgetting",
    "adk_temporal.keys.retention",
    "adk_temporal.keys.artifacts",
    "adk_temporal.evaluation",
    "adk_temporal.double_texting",
    "adk_temporal.approvals",
    "adk_temporal.flow.approving",
    "adk_temporal.flow.replies",
    "adk_temporal.dispatch",
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


def test_an_agent_runs_in_process_without_temporalio() -> None:
    """The in-process runner runs an agent with a tool to its answer; temporalio stays
    unloaded."""
    code = """
import asyncio, sys
from google.genai import types
from adk_temporal.agents import Agent
from adk_temporal.models import ModelRegistry, ScriptedModel
from adk_temporal.app import App, Stores
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService

def add(a: int, b: int) -> dict:
    \"\"\"Add two numbers.\"\"\"
    return {"sum": a + b}

script = [types.FunctionCall(name="add", args={"a": 2, "b": 3}), "five"]
models = ModelRegistry()
models.register("scripted:add", lambda n: ScriptedModel(name=n, script=script))
agent = Agent(name="adder", model="scripted:add", tools=[add])

async def main():
    runner = Runner(App([agent], models=models), stores=Stores(InMemorySessionService()))
    result = await runner.run("app", "u", "s", "adder", "2+3?")
    print(result.status, result.final_text)

asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] == "temporalio"))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["completed five", "[]"]


# Lowest first. A module may import from its own layer and the layers below it; a layer's
# name is the module or subpackage right under adk_temporal. The picture is in
# docs/design.md ("Layers").
LAYERS: list[set[str]] = [
    {
        "errors",
        "faults",
        "asyncutil",
        "ids",
        "budgets",
        "signing",
        "converter",
        "background_http",
        "devserver",
        "ports",
        "events",
        "state",
        "usage",
        "merge",
        "run_config",
        "extras",
        "model_limits",
        "queues",
        "dispatch",
    },
    {
        "resume",
        "history",
        "confirmation",
        "tracing",
        "models",
        "tools",
        "mcp",
        "summarizers",
        "approvals",
    },
    {"sessions", "artifacts", "memory"},
    {"double_texting"},
    # Data keys seal what the stores hold and erase it; the codec seals payloads with them.
    {
        "context",
        "flow",
        "notifications",
        "instructions",
        "rewind",
        "audit",
        "compaction",
        "keys",
        "codec",
    },
    {"agents", "output", "app", "following", "continuation", "workflow"},
    {"steps"},
    # The workflow schedules the activities: arrows between the two engine folders run one
    # way, from workflows down to activities (the short-id form lives on the activity side).
    {"runner", "activities"},
    {"workflows"},
    {
        "plugin",
        "client",
        "answers",
        "schedules",
        "start_queues",
        "visibility",
        "render",
        "terminal",
        "codec_server",
        "evaluation",
    },
    {"worker", "demo", "examples", "testing", "web", "a2a"},
    {"cli"},
]


def _modules() -> dict[str, Path]:
    """Every module of the package as a wheel installs it (``package-dir`` mapping)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    modules: dict[str, Path] = {}
    for package, folder in mapping.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = [package, *path.relative_to(REPO / folder).with_suffix("").parts]
            if package == "adk_temporal" and parts[1] in ("workflows", "activities", "examples"):
                continue
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules that ``name`` imports, at the top or inside functions."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        found: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found = [f"{base}.{alias.name}" for alias in node.names] + [base]
        elif isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        for target in found:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("adk_temporal") and target != name:
                yield target
                break


def _layer(name: str) -> int | None:
    parts = name.split(".")
    group = parts[1] if len(parts) > 1 else None
    return next((i for i, layer in enumerate(LAYERS) if group in layer), None)


def test_every_module_has_a_layer_and_imports_only_its_own_or_lower_ones() -> None:
    """No module imports from a higher layer (the cli from nowhere, steps from no engine)."""
    modules = _modules()
    unplaced = sorted(m for m in modules if m != "adk_temporal" and _layer(m) is None)
    assert unplaced == [], "place these modules in a layer of LAYERS"
    upward = [
        f"{name} -> {target}"
        for name, path in modules.items()
        for target in _imports(name, path, modules)
        if name != "adk_temporal" and (_layer(target) or 0) > (_layer(name) or 0)
    ]
    assert upward == []


def test_no_import_circles() -> None:
    """No module reaches itself through the modules it imports."""
    modules = _modules()
    graph = {name: set(_imports(name, path, modules)) for name, path in modules.items()}
    circles: list[list[str]] = []

    def visit(name: str, trail: list[str], done: set[str]) -> None:
        for target in sorted(graph[name]):
            if target in trail:
                circles.append([*trail[trail.index(target) :], target])
            elif target not in done:
                visit(target, [*trail, target], done)
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name], done)
    assert circles == []
