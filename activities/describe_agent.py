"""``adk_describe_agent``: the shape of an agent tree, for the workflow to orchestrate.

Agents live on the worker; the workflow only needs each agent's kind and sub-agents. It
asks once per tree, through a local activity, so the answer is recorded in history and a
replay never depends on the worker's current configuration.
"""

from __future__ import annotations

from typing import Literal

from temporalio import activity

from adk_temporal.agents import Agent, AgentRegistry, BaseAgent, ParallelAgent, SequentialAgent

from .messages import AgentSpec, DescribeAgentInput
from .services import WorkerServices, translate_errors

__all__ = ["DescribeAgentActivity", "describe"]


def describe(registry: AgentRegistry, agent: BaseAgent) -> AgentSpec:
    """The spec of ``agent`` and everything below it."""
    kind: Literal["llm", "sequential", "parallel"]
    if isinstance(agent, Agent):
        kind = "llm"
    elif isinstance(agent, ParallelAgent):
        kind = "parallel"
    elif isinstance(agent, SequentialAgent):
        kind = "sequential"
    else:
        raise TypeError(f"agent {agent.name!r} is a {type(agent).__name__}, which cannot run")
    parent = registry.parent(agent.name)
    return AgentSpec(
        name=agent.name,
        kind=kind,
        sub_agents=[describe(registry, sub) for sub in agent.sub_agents],
        parent=parent.name if parent else None,
    )


class DescribeAgentActivity:
    """Describes the tree that contains an agent, from its root."""

    def __init__(self, services: WorkerServices) -> None:
        self._services = services

    @activity.defn(name="adk_describe_agent")
    @translate_errors
    async def run(self, inp: DescribeAgentInput) -> AgentSpec:
        """The spec of the root of the tree ``inp.agent_name`` belongs to."""
        registry = self._services.agents
        root = registry[inp.agent_name]
        while (parent := registry.parent(root.name)) is not None:
            root = parent
        return describe(registry, root)
