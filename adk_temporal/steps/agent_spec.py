"""The shape of an agent tree, for the workflow to orchestrate.

Agents live on the worker; the workflow only needs each agent's kind, sub-agents and
parent. The first model step of an agent the workflow does not know yet returns its tree,
so the answer is recorded in history and a replay never depends on the worker's current
configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from ..agents import (
    Agent,
    AgentRegistry,
    BaseAgent,
    LoopAgent,
    ParallelAgent,
    RemoteAgent,
    SequentialAgent,
)
from ..flow.messages import AgentSpec, NotifyPlan
from ..workflow import Workflow

__all__ = ["describe", "describe_tree", "with_local_agents"]


def describe(registry: AgentRegistry, agent: BaseAgent) -> AgentSpec:
    """The spec of ``agent`` and everything below it."""
    kind: Literal["llm", "sequential", "parallel", "loop", "graph", "remote"]
    if isinstance(agent, Workflow):
        kind = "graph"
    elif isinstance(agent, RemoteAgent):
        kind = "remote"
    elif isinstance(agent, Agent):
        kind = "llm"
    elif isinstance(agent, LoopAgent):
        kind = "loop"
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
        max_iterations=agent.max_iterations if isinstance(agent, LoopAgent) else None,
        graph=agent.spec() if isinstance(agent, Workflow) else None,
    )


def describe_tree(
    registry: AgentRegistry, name: str, notify: NotifyPlan | None = None
) -> AgentSpec:
    """The spec of the root of the agent tree ``name`` belongs to, carrying ``notify``.

    The serving app's notifications travel on the root so that the workflow learns them
    from history: runs of apps without notifications record exactly what they did before.

    Raises:
        UnknownAgentError: No agent has that name.
    """
    root = registry[name]
    while (parent := registry.parent(root.name)) is not None:
        root = parent
    return describe(registry, root).model_copy(update={"notify": notify})


def with_local_agents(spec: AgentSpec, local: Callable[[str], bool]) -> AgentSpec:
    """``spec`` with each LLM agent for which ``local(name)`` holds marked ``local``: its
    model steps may run as local activities (``App.local_steps``)."""
    update: dict[str, object] = {
        "sub_agents": [with_local_agents(sub, local) for sub in spec.sub_agents]
    }
    if spec.kind == "llm" and local(spec.name):
        update["local"] = True
    return spec.model_copy(update=update)
