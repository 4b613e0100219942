"""Which steps may run as local activities: the app's choice, what its worker measured, and
the steps that never do."""

from __future__ import annotations

from datetime import timedelta

import pytest

from adk_temporal.agents import Agent, SequentialAgent
from adk_temporal.app import App, Stores
from adk_temporal.dispatch import LocalSteps, LocalStepsError, StepTimings
from adk_temporal.model_limits import ModelLimit
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.steps import StepServices
from adk_temporal.steps.agent_spec import describe_tree, with_local_agents
from adk_temporal.tools import tool


def lookup(topic: str) -> dict[str, str]:
    """Look a topic up."""
    return {"topic": topic}


@tool(heartbeat_timeout=timedelta(seconds=5))
def crawl(site: str) -> dict[str, str]:
    """Crawl a site, heartbeating."""
    return {"site": site}


@tool(long_running=True)
def ask_manager(question: str) -> dict[str, str]:
    """Ask a manager; the answer comes later."""
    return {"status": "asked"}


def _services(local: LocalSteps | None) -> StepServices:
    agent = Agent("a", "scripted:x", tools=[lookup, crawl, ask_manager])
    limited = Agent("b", "limited:y")
    app = App(
        [SequentialAgent("root", sub_agents=[agent, limited])],
        local_steps=local,
        model_limits=[ModelLimit("limited:*", requests_per_second=1)],
    )
    return StepServices.build(app, Stores(InMemorySessionService()))


def test_a_step_never_timed_counts_as_short_and_a_slow_median_does_not() -> None:
    """Unmeasured is short; the median of the latest decides, so one slow call does not."""
    timings = StepTimings()
    assert timings.short("model", "a", 1.0)
    for seconds in (0.1, 5.0, 0.2):
        timings.record("model", "a", seconds)
    assert timings.short("model", "a", 1.0)
    for _ in range(3):
        timings.record("model", "a", 3.0)
    assert not timings.short("model", "a", 1.0)
    assert timings.short("tool", "a", 1.0)  # kinds are apart


def test_a_bound_that_is_not_positive_is_refused() -> None:
    """LocalSteps(short=0) is a typed error naming the setting."""
    with pytest.raises(LocalStepsError, match=r"LocalSteps\.short"):
        LocalSteps(short=timedelta(0))


def test_model_steps_are_local_when_asked_unlimited_and_short() -> None:
    """Only an app that asks, for an agent whose model has no limit and was short."""
    assert not _services(None).local_model_steps("a")
    assert not _services(LocalSteps(models=False)).local_model_steps("a")
    services = _services(LocalSteps(short=timedelta(seconds=1)))
    assert services.local_model_steps("a")
    assert not services.local_model_steps("b")  # its limit's queue paces it
    for _ in range(3):
        services.timings.record("model", "a", 2.0)
    assert not services.local_model_steps("a")


def test_only_named_short_tools_without_heartbeat_or_long_run_are_local() -> None:
    """A named tool while short; never one that heartbeats or runs long, nor one unnamed."""
    services = _services(LocalSteps(tools={"lookup", "crawl", "ask_manager"}))
    tools = {t.name: t for t in services.agents.llm_agent("a").tools}
    assert services.local_tool(tools["lookup"])
    assert not services.local_tool(tools["crawl"])
    assert not services.local_tool(tools["ask_manager"])
    assert not _services(LocalSteps()).local_tool(tools["lookup"])
    for _ in range(3):
        services.timings.record("tool", "lookup", 5.0)
    assert not services.local_tool(tools["lookup"])


def test_the_tree_marks_the_local_llm_agents_only() -> None:
    """Workflow agents are never marked; the flow reads the marked names back."""
    services = _services(LocalSteps())
    tree = with_local_agents(describe_tree(services.agents, "a"), services.local_model_steps)
    assert tree.local_agents() == {"a"}
    assert not tree.local
    assert describe_tree(services.agents, "a").local_agents() == set()
