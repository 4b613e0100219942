"""The bare baseline of ``graph_nodes.py``: a plain workflow running N activities one after
another, each taking the previous one's small output, as a chain of N graph nodes does.

Kept apart on purpose: the workflow sandbox re-imports this module for each run, so it
imports nothing but temporalio.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

__all__ = ["CHAIN_ACTIVITIES", "BareChain", "bare_node"]

_TIMEOUT = timedelta(seconds=120)


@activity.defn(name="bare_graph_node")
async def bare_node(value: int) -> int:
    """The bare node: the same work as the graph's, one more than its input."""
    return value + 1


CHAIN_ACTIVITIES = [bare_node]
"""The activities ``BareChain`` needs on the worker."""


@workflow.defn(name="BareChain")
class BareChain:
    """N activities in a chain."""

    @workflow.run
    async def run(self, nodes: int) -> int:
        """Run the chain; returns the last output."""
        value = 0
        for _ in range(nodes):
            value = await workflow.execute_activity(
                bare_node, value, start_to_close_timeout=_TIMEOUT
            )
        return value
