"""Which ADK apps the gateway offers, and what each one runs.

ADK's API server serves a directory of apps, each a root agent. Here the served
:class:`~adk_temporal.app.App` is the directory: a named app is one ADK app whose root is its
first agent; an unnamed one offers each of its agents as an app of the agent's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...agents import Agent, BaseAgent
from ...app import App
from ..errors import ApiError
from .wire import genai_json

__all__ = ["AdkApps", "AdkTarget"]


@dataclass(frozen=True)
class AdkTarget:
    """What an ADK app name stands for: the app runs start in and the root agent they run."""

    app: str
    root: BaseAgent


@dataclass(frozen=True)
class AdkApps:
    """The ADK apps of the served app (none when the gateway serves no app)."""

    served: App | None

    def names(self) -> list[str]:
        """The app names ``/list-apps`` returns, sorted."""
        if self.served is None:
            return []
        if self.served.name is not None:
            return [self.served.name]
        return sorted(agent.name for agent in self.served.agents)

    def target(self, name: str | None) -> AdkTarget:
        """The app ``name`` stands for; with no name, the only app there is.

        Raises:
            ApiError: 400 without a name when there are several apps (or none), 404 for a
                name the gateway does not serve.
        """
        names = self.names()
        if name is None:
            if len(names) != 1:
                raise ApiError(
                    400,
                    "app_name_required",
                    f"give app_name: this gateway serves {', '.join(names) or 'no app'}",
                )
            name = names[0]
        if self.served is None or name not in names:
            raise ApiError(
                404,
                "unknown_app",
                f"no app {name!r} here; this gateway serves {', '.join(names) or 'no app'} "
                "(start it with --app)",
            )
        if self.served.name is not None:
            return AdkTarget(name, self.served.agents[0])
        return AdkTarget(name, next(a for a in self.served.agents if a.name == name))

    def info(self, name: str) -> dict[str, Any]:
        """``/apps/{app}/app-info``: ADK's ``AppInfo`` of the app's tree.

        Raises:
            ApiError: 404 for an app not served; 400 when its root is not an LLM agent
                (as ADK answers).
        """
        root = self.target(name).root
        if not isinstance(root, Agent):
            raise ApiError(400, "not_llm_agent", f"the root agent {root.name!r} is not an LlmAgent")
        return {
            "name": name,
            "rootAgentName": root.name,
            "description": root.description,
            "language": "python",
            "isComputerUse": False,
            "agents": _agents_info(root),
        }


def _agents_info(root: Agent) -> dict[str, Any]:
    """ADK's ``AgentInfo`` of ``root`` and every LLM agent below it, by name."""
    found: dict[str, Any] = {}
    pending: list[Agent] = [root]
    while pending:
        agent = pending.pop(0)
        subs = [a for a in agent.sub_agents if isinstance(a, Agent)]
        instruction = agent.instruction
        found[agent.name] = {
            "name": agent.name,
            "description": agent.description,
            "instruction": instruction
            if isinstance(instruction, str)
            else f"<InstructionProvider: {getattr(instruction, '__name__', 'provider')}>",
            "tools": [{"functionDeclarations": [genai_json(t.declaration())]} for t in agent.tools],
            "sub_agents": [a.name for a in subs],
        }
        pending += [a for a in subs if a.name not in found]
    return found
