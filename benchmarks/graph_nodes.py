"""Graph workflows on Temporal: history bytes per node, and the time per node against a
bare workflow running the same activity schedule.

A chain of N function nodes (each returns its input plus one) runs as one invocation of an
ADK 2 graph (``adk_temporal.workflow``); the bare baseline (``_bare_graph.BareChain``) runs N
activities one after another on the same worker and server. History per node is measured
at N = 50 and N = 200 and for nodes whose outputs are 10 KB (which cross history by
reference): flat means the bytes a node adds do not depend on how many came before it or on
how large its output is.

Run: ``python benchmarks/graph_nodes.py [--nodes 200]`` (writes results/graph_nodes.json).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from _bare_graph import CHAIN_ACTIVITIES, BareChain
from _common import (
    SERVER_NOTE,
    connect,
    dev_server,
    finish,
    history_bytes,
    print_table,
    scratch_dir,
    write_results,
)
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker

from adk_temporal.app import App, Stores
from adk_temporal.client import AdkClient
from adk_temporal.plugin import AdkPlugin
from adk_temporal.sessions import SqliteSessionService
from adk_temporal.workflow import START, FunctionNode, Workflow

_SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED


def chain(name: str, nodes: int, payload: int = 0) -> Workflow:
    """A chain of ``nodes`` function nodes; each output carries ``payload`` bytes of text."""

    def make(i: int) -> FunctionNode:
        def step(node_input: Any) -> dict[str, Any]:
            count = node_input["n"] if isinstance(node_input, dict) else 0
            return {"n": count + 1, "pad": "x" * payload}

        return FunctionNode(func=step, name=f"n{i}")

    return Workflow(name=name, edges=[(START, *[make(i) for i in range(nodes)])])


def per_node(events: list[HistoryEvent]) -> list[int]:
    """Bytes of history between one node step's scheduling and the next's."""
    starts = [i for i, e in enumerate(events) if e.event_type == _SCHEDULED]
    return [
        history_bytes(events[a:b]) for a, b in zip(starts, [*starts[1:], len(events)], strict=True)
    ]


async def _ours(client: Client, queue: str, agent: str) -> tuple[list[HistoryEvent], float]:
    adk = AdkClient(client, task_queue=queue)
    began = time.perf_counter()
    handle = await adk.start("bench", "u", f"s-{agent}", agent, "go")
    result = await handle.result()
    took = time.perf_counter() - began
    if result.status != "completed":
        raise RuntimeError(f"{agent} ended {result.status}: {result.error}")
    history = await client.get_workflow_handle(handle.workflow_id).fetch_history()
    return list(history.events), took


async def _bare(client: Client, queue: str, nodes: int) -> tuple[list[HistoryEvent], float]:
    began = time.perf_counter()
    handle = await client.start_workflow(BareChain.run, nodes, id=f"bare-{nodes}", task_queue=queue)
    await handle.result()
    took = time.perf_counter() - began
    return list((await handle.fetch_history()).events), took


async def main(nodes: int) -> None:
    graphs = [chain("small50", 50), chain(f"small{nodes}", nodes), chain("large50", 50, 10_000)]
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        sessions = SqliteSessionService(Path(tmp) / "s.db")
        plugin = AdkPlugin(App(graphs), stores=Stores(sessions))
        async with Worker(
            client,
            task_queue="bench-graph",
            plugins=[plugin],
            workflows=[BareChain],
            activities=CHAIN_ACTIVITIES,
        ):
            ours = {g.name: await _ours(client, "bench-graph", g.name) for g in graphs}
            bare = await _bare(client, "bench-graph", nodes)
    report(nodes, ours, bare)


def report(
    nodes: int,
    ours: dict[str, tuple[list[HistoryEvent], float]],
    bare: tuple[list[HistoryEvent], float],
) -> None:
    """Print the tables and write the results."""
    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    for name, (events, took) in ours.items():
        steps = per_node(events)[1:]  # the first is the run's start and the tree's description
        count = len(steps)
        figures[name] = {
            "nodes": count,
            "history_bytes": history_bytes(events),
            "first_node_bytes": steps[0],
            "last_node_bytes": steps[-1],
            "median_node_bytes": sorted(steps)[count // 2],
            "seconds_per_node": took / count,
        }
        rows.append([name, count, steps[0], steps[-1], sorted(steps)[count // 2], took / count])
    events, took = bare
    steps = per_node(events)
    figures["bare"] = {
        "nodes": nodes,
        "history_bytes": history_bytes(events),
        "median_node_bytes": sorted(steps)[len(steps) // 2],
        "seconds_per_node": took / nodes,
    }
    rows.append(["bare", nodes, steps[0], steps[-1], sorted(steps)[len(steps) // 2], took / nodes])
    print(f"server: {SERVER_NOTE}")
    print_table(
        "History and time per node (chain of function nodes; large = 10 KB outputs)",
        ["graph", "nodes", "first B", "last B", "median B", "s/node"],
        rows,
    )
    big = figures[f"small{nodes}"]
    overhead = big["seconds_per_node"] - figures["bare"]["seconds_per_node"]
    print(f"\noverhead per node against bare: {overhead * 1000:.1f} ms")
    write_results("graph_nodes", {"graphs": figures, "overhead_ms_per_node": overhead * 1000})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    asyncio.run(main(parser.parse_args().nodes))
    finish()
