"""Agent kinds and the registry: names, trees, transfer targets, tools."""

from __future__ import annotations

import pytest

from adk_temporal.agents import (
    TRANSFER_TOOL_NAME,
    Agent,
    AgentRegistry,
    AgentTool,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
)
from adk_temporal.errors import InvalidToolArgumentsError, UnknownAgentError
from adk_temporal.steps.agent_spec import describe_tree


def _agent(name: str, **kwargs: object) -> Agent:
    return Agent(name, "scripted:x", **kwargs)  # type: ignore[arg-type]


def lookup(city: str) -> dict[str, str]:
    """Look a city up.

    Args:
        city: The city.
    """
    return {"city": city}


def test_agent_names_must_be_identifiers_and_not_user() -> None:
    """Names become event authors: 'user' and non-identifiers are refused."""
    with pytest.raises(ValueError, match="reserved for the user's events"):
        _agent("user")
    with pytest.raises(ValueError, match="must be a Python identifier"):
        _agent("weather agent")


def test_duplicate_tools_and_the_reserved_transfer_name_are_refused() -> None:
    """Two tools with one name, or a tool named transfer_to_agent, fail at definition."""
    with pytest.raises(ValueError, match="duplicate tool names: lookup"):
        _agent("a", tools=[lookup, lookup])

    def transfer_to_agent(agent_name: str) -> dict[str, str]:
        """Not allowed."""
        return {}

    with pytest.raises(ValueError, match="reserved for agent transfer"):
        _agent("a", tools=[transfer_to_agent])


def test_registry_holds_the_whole_tree_with_parents() -> None:
    """Sub-agents and agent-tool agents are registered and resolvable by name."""
    helper = _agent("helper")
    child = _agent("child")
    root = _agent("root", sub_agents=[child], tools=[AgentTool(helper)])
    registry = AgentRegistry([root])
    assert set(registry) == {"root", "child", "helper"}
    assert registry.parent("child") is root
    assert registry.parent("helper") is None
    with pytest.raises(UnknownAgentError, match="unknown agent 'nope'; this worker serves"):
        registry["nope"]


def test_two_agents_with_one_name_or_two_parents_are_refused() -> None:
    """Names identify agents across the tree."""
    with pytest.raises(ValueError, match="two agents are named 'a'"):
        AgentRegistry([_agent("a"), _agent("a")])
    shared = _agent("shared")
    with pytest.raises(ValueError, match="sub-agent of both"):
        AgentRegistry([_agent("p1", sub_agents=[shared]), _agent("p2", sub_agents=[shared])])


def test_transfer_targets_are_sub_agents_parent_and_peers() -> None:
    """As ADK allows: down to sub-agents, up to the parent, across to peers."""
    a, b = _agent("a"), _agent("b")
    root = _agent("root", sub_agents=[a, b])
    registry = AgentRegistry([root])
    assert [t.name for t in registry.transfer_targets("root")] == ["a", "b"]
    assert [t.name for t in registry.transfer_targets("a")] == ["root", "b"]
    names = [t.name for t in registry.tools("a")]
    assert names == [TRANSFER_TOOL_NAME]
    assert registry.tools("a")[0].declaration().description is not None


def test_an_agent_alone_has_no_transfer_tool() -> None:
    """Without sub-agents, parent or peers there is nowhere to transfer."""
    registry = AgentRegistry([_agent("solo", tools=[lookup])])
    assert [t.name for t in registry.tools("solo")] == ["lookup"]


async def test_transfer_tool_answers_as_adk_and_refuses_agents_outside_the_enum() -> None:
    """The tool sets the transfer and answers ``{}``; a name outside the enum, an empty
    name or a missing one is an invalid argument the model sees (ADK-Go
    ``internal/llminternal/agent_transfer_test.go`` ``TestTransferToAgentToolRun``)."""
    from adk_temporal.context import InvocationContext, ToolContext
    from adk_temporal.events import EventActions
    from adk_temporal.sessions.session import Session

    a = _agent("a")
    registry = AgentRegistry([_agent("root", sub_agents=[a])])
    [transfer] = registry.tools("root")
    session = Session(id="s", app_name="app", user_id="u")
    actions = EventActions()
    ctx = ToolContext(InvocationContext(session=session, agent=a), actions=actions)
    assert await transfer.run({"agent_name": "a"}, ctx) == {}
    assert actions.transfer_to_agent == "a"
    for args in ({"agent_name": "zed"}, {"agent_name": ""}, {"agent_name": 123}, {}):
        with pytest.raises(InvalidToolArgumentsError, match="agent_name"):
            await transfer.run(args, ctx)
    schema = transfer.declaration().parameters_json_schema
    assert schema["properties"]["agent_name"]["enum"] == ["a"]  # type: ignore[index]


def _offered(registry: AgentRegistry, name: str) -> tuple[list[str], str]:
    """The transfer targets of ``name`` and its transfer instruction."""
    return [a.name for a in registry.transfer_targets(name)], registry.transfer_instruction(name)


@pytest.mark.parametrize(
    ("case", "disallow", "want"),
    [
        # ADK-Go agent_transfer_test.go TestAgentTransferRequestProcessor subtests.
        ("LLMAgentParentAndPeer", {}, ["Parent", "Peer"]),
        ("AgentWithParentAndPeersAndSubagents", {}, ["Sub1", "Sub2", "Parent", "Peer"]),
        ("AgentWithDisallowTransferToParent", {"parent": True}, ["Sub1", "Sub2", "Peer"]),
        ("AgentWithDisallowTransferToPeers", {"peers": True}, ["Sub1", "Sub2", "Parent"]),
        (
            "AgentWithDisallowTransferToParentAndPeers",
            {"parent": True, "peers": True},
            ["Sub1", "Sub2"],
        ),
    ],
)
def test_transfer_targets_follow_adk_go(
    case: str, disallow: dict[str, bool], want: list[str]
) -> None:
    """The agents offered (tool enum and instruction) under an LLM parent, by ADK-Go's rule."""
    subs = [] if case == "LLMAgentParentAndPeer" else [_agent("Sub1"), _agent("Sub2")]
    current = Agent(
        "Current",
        "scripted:x",
        sub_agents=subs,
        disallow_transfer_to_parent=disallow.get("parent", False),
        disallow_transfer_to_peers=disallow.get("peers", False),
    )
    registry = AgentRegistry([_agent("Parent", sub_agents=[current, _agent("Peer")])])
    targets, instruction = _offered(registry, "Current")
    assert targets == want
    [transfer] = [t for t in registry.tools("Current") if t.name == TRANSFER_TOOL_NAME]
    enum = transfer.declaration().parameters_json_schema["properties"]["agent_name"]["enum"]  # type: ignore[index]
    assert sorted(enum) == sorted(want)
    for name in ("Parent", "Peer", "Sub1", "Sub2"):
        assert (f"Agent name: {name}\n" in instruction) == (name in want), name
    assert "Agent name: Current\n" not in instruction


def test_a_solo_agent_and_a_parentless_one_offer_only_their_sub_agents() -> None:
    """SoloAgent: nothing offered, no tool, no instruction. LLMAgentSubagents: the
    sub-agents, workflow agents included (ADK-Go subtests of the same names)."""
    solo = AgentRegistry([_agent("Current")])
    assert _offered(solo, "Current") == ([], "")
    assert [t.name for t in solo.tools("Current")] == []
    subs = [SequentialAgent("Sub1"), _agent("Sub2")]
    registry = AgentRegistry([_agent("Current", sub_agents=subs)])
    assert _offered(registry, "Current")[0] == ["Sub1", "Sub2"]


def test_under_a_workflow_agent_only_sub_agents_are_offered() -> None:
    """A parent that is a sequential, parallel or loop agent is no transfer target, nor are
    its other sub-agents (ADK-Go ``transferTargets``: parent and peers only under an LLM
    agent)."""
    for kind in (SequentialAgent, ParallelAgent, LoopAgent):
        current = _agent("Current", sub_agents=[_agent("Sub1")])
        registry = AgentRegistry([kind("Flow", sub_agents=[current, _agent("Peer")])])
        assert _offered(registry, "Current")[0] == ["Sub1"], kind.__name__
        assert "Peer" not in _offered(registry, "Current")[1]


def test_llm_agent_lookup_rejects_workflow_agents() -> None:
    """Only LLM agents have model steps."""
    registry = AgentRegistry(
        [SequentialAgent("seq", sub_agents=[_agent("x")]), ParallelAgent("par")]
    )
    assert registry.llm_agent("x").name == "x"
    with pytest.raises(UnknownAgentError, match="'seq' is a SequentialAgent, not an LLM agent"):
        registry.llm_agent("seq")


@pytest.mark.parametrize("limit", [0, -1])
def test_loop_agent_refuses_a_limit_below_one(limit: int) -> None:
    """max_iterations below 1 is refused, naming the loop; None means until escalation."""
    with pytest.raises(ValueError, match=r"loop agent 'loop': max_iterations must be at least 1"):
        LoopAgent("loop", sub_agents=[Agent("a", "m")], max_iterations=limit)
    assert LoopAgent("loop", sub_agents=[Agent("a", "m")]).max_iterations is None


def test_loop_agent_spec_carries_kind_and_limit() -> None:
    """The workflow learns a loop's kind and limit from the recorded tree."""
    loop = LoopAgent("loop", sub_agents=[Agent("a", "m"), Agent("b", "m")], max_iterations=4)
    spec = describe_tree(AgentRegistry([SequentialAgent("root", sub_agents=[loop])]), "a")
    found = spec.find("loop")
    assert found is not None
    assert (found.kind, found.max_iterations) == ("loop", 4)
    assert [s.name for s in found.sub_agents] == ["a", "b"]
    assert found.parent == "root"


def test_a_sub_agent_without_a_model_uses_its_nearest_llm_ancestors() -> None:
    """ADK's canonical_model: a model-less agent takes the nearest LLM agent's model above
    it, through workflow agents; its own model wins; LlmAgent is ADK's name for Agent."""
    from adk_temporal import LlmAgent

    leaf = LlmAgent(name="leaf")
    own = LlmAgent(name="own", model="scripted:own")
    middle = LlmAgent(name="middle", sub_agents=[SequentialAgent("steps", sub_agents=[leaf])])
    root = LlmAgent(name="root", model="scripted:root", sub_agents=[middle, own])
    registry = AgentRegistry([root])
    assert LlmAgent is Agent
    assert [registry.model_of(n) for n in ("root", "middle", "leaf", "own")] == [
        "scripted:root",
        "scripted:root",
        "scripted:root",
        "scripted:own",
    ]
    with pytest.raises(UnknownAgentError):
        registry.model_of("steps")


def test_an_llm_agent_with_no_model_anywhere_above_is_refused() -> None:
    """A tree whose LLM agent has no model to inherit fails when it is served, naming it."""
    with pytest.raises(ValueError, match="agent 'helper' has no model"):
        AgentRegistry([SequentialAgent("steps", sub_agents=[Agent("helper")])])
