"""A graph for the crash tests, served by ``adk-temporal worker --app``.

Each node appends its name to a ledger file before it returns, so a test counts how often
each ran; ``risky`` kills its own worker (SIGKILL) while it runs when the worker's
environment names it in :data:`KILL_ENV`, as a machine dying mid-node would.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from adk_temporal.workflow import START, JoinNode, RequestInput, Workflow

__all__ = ["KILL_ENV", "LEDGER_ENV", "pausing", "runs", "three_steps"]

KILL_ENV = "GRAPH_TEST_KILL_IN"
"""Names the node whose run kills the worker."""
LEDGER_ENV = "GRAPH_TEST_LEDGER"
"""The file each node run appends its name to."""


def _ran(name: str) -> None:
    with open(os.environ[LEDGER_ENV], "a") as ledger:
        ledger.write(name + "\n")


def runs(ledger: Path) -> list[str]:
    """The node runs the ledger recorded, in order."""
    return ledger.read_text().split() if ledger.exists() else []


def first(node_input: Any) -> str:
    _ran("first")
    return "a"


def risky(node_input: str) -> str:
    if os.environ.get(KILL_ENV) == "risky":
        os.kill(os.getpid(), signal.SIGKILL)
    _ran("risky")
    return node_input + "b"


def last(node_input: str) -> str:
    _ran("last")
    return node_input + "c"


three_steps = Workflow(name="three_steps", edges=[(START, first, risky, last)])
"""first → risky → last: the worker dies inside ``risky``."""


def split(node_input: Any) -> str:
    _ran("split")
    return "s"


def approve(node_input: str) -> Any:
    _ran("approve")
    return RequestInput(interrupt_id="q-approve", message="Approve?")


def compute(node_input: str) -> int:
    _ran("compute")
    return 42


def finish(node_input: dict[str, Any]) -> str:
    _ran("finish")
    return f"approved={node_input['approve']} computed={node_input['compute']}"


pausing = Workflow(
    name="pausing", edges=[(START, split, (approve, compute), JoinNode(name="gate"), finish)]
)
"""A pause in one branch of a join while the other branch finishes."""
