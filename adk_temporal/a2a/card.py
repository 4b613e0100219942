"""The agent card of each served agent: its name and description, a skill per tool (its
sub-agents' too), streaming, and the bearer tokens of the gateway as its security scheme."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

from ..agents import Agent, AgentTool, BaseAgent

__all__ = ["SECURITY_SCHEME", "agent_card"]

SECURITY_SCHEME = "bearer"
"""The name of the card's one security scheme: a gateway token in ``Authorization``."""

_MODES = ["text/plain", "application/json"]


def _version() -> str:
    try:
        return version("adk-temporal")
    except PackageNotFoundError:
        return "0"


def _below(agent: BaseAgent) -> list[BaseAgent]:
    """The agents ``agent`` hands over to or calls as tools."""
    tools = agent.tools if isinstance(agent, Agent) else []
    return [*agent.sub_agents, *(t.agent for t in tools if isinstance(t, AgentTool))]


def _skills(agent: BaseAgent) -> list[AgentSkill]:
    """The agent itself as a skill, then one per tool of it and of the agents below it."""
    skills = [
        AgentSkill(
            id=agent.name,
            name=agent.name,
            description=agent.description or f"Talk to {agent.name}.",
            tags=["agent"],
        )
    ]
    pending, agents, tools = [agent], {agent.name}, {agent.name}
    while pending:
        current = pending.pop(0)
        for tool in current.tools if isinstance(current, Agent) else []:
            if tool.name not in tools:
                tools.add(tool.name)
                description = tool.description or tool.name
                tags = ["tool", current.name]
                skills.append(
                    AgentSkill(id=tool.name, name=tool.name, description=description, tags=tags)
                )
        below = [sub for sub in _below(current) if sub.name not in agents]
        pending += below
        agents.update(sub.name for sub in below)
    return skills


def agent_card(agent: BaseAgent, url: str) -> AgentCard:
    """The card of ``agent`` served at ``url`` (its JSON-RPC endpoint).

    Args:
        agent: One of the served app's agents.
        url: Where its endpoint is reached, as the caller reached the gateway.
    """
    bearer = HTTPAuthSecurityScheme(
        scheme="bearer",
        description="A token of the gateway's tokens file whose apps include this agent's.",
    )
    return AgentCard(
        name=agent.name,
        description=agent.description or f"The {agent.name} agent.",
        version=_version(),
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes={SECURITY_SCHEME: SecurityScheme(http_auth_security_scheme=bearer)},
        security_requirements=[SecurityRequirement(schemes={SECURITY_SCHEME: StringList()})],
        default_input_modes=_MODES,
        default_output_modes=_MODES,
        skills=_skills(agent),
    )
