"""Every behaviour change gated by ``workflow.patched`` is in the one register, with the
condition under which its old arm may go (issue 42, item 3)."""

from __future__ import annotations

import ast
from pathlib import Path

from adk_temporal.flow import gates
from adk_temporal.flow.gates import GATES

REPO = Path(__file__).resolve().parents[2]
SOURCES = [*(REPO / "adk_temporal").rglob("*.py"), *(REPO / "workflows").glob("*.py")]


def _asked() -> list[tuple[str, ast.expr]]:
    """Each gate argument of a ``patched(...)`` / ``_patched(..., gate)`` call, by file."""
    found: list[tuple[str, ast.expr]] = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("patched", "_patched"):
                found.append((path.relative_to(REPO).as_posix(), node.args[-1]))
    return found


def test_every_gate_asked_for_is_registered() -> None:
    """A gate is named through the register (``gates.X``), never spelled as a string, and
    every name resolves to a registered gate."""
    asked = _asked()
    assert len(asked) >= len(GATES)
    unregistered = []
    for where, arg in asked:
        if isinstance(arg, ast.Attribute) and getattr(arg.value, "id", "") == "gates":
            if getattr(gates, arg.attr, None) not in GATES:
                unregistered.append(f"{where}: gates.{arg.attr}")
        elif isinstance(arg, ast.Name) and arg.id == "change":
            continue  # the executors' own pass-through of the flow's argument
        else:
            unregistered.append(f"{where}: {ast.unparse(arg)}")
    assert unregistered == []


def test_every_gate_says_when_its_old_arm_may_go() -> None:
    """Each registered gate has what it changes, when it landed and a one-line condition for
    deleting its old arm."""
    assert len(GATES) == 19
    for gate in GATES.values():
        assert gate.change and "\n" not in gate.change, gate.id
        assert gate.old_arm_may_go_when and "\n" not in gate.old_arm_may_go_when, gate.id
        assert gate.since.year >= 2026, gate.id
