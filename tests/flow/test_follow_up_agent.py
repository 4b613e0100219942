"""A conversation stays with the agent it was transferred to (issue 32), on the in-process
runner: ADK's runner rule for the agent that takes the next message.

Ported from ADK-Python ``tests/unittests/flows/llm_flows/test_agent_transfer.py``
(``test_auto_to_auto``, ``test_auto_to_single``, ``test_auto_to_auto_to_single``,
``test_auto_to_sequential``) and ADK-Go ``runner/runner.go`` ``findAgentToRun`` /
``isTransferableAcrossAgentTree``; the transfer tool's ``{}`` response and its targets follow
ADK-Go ``internal/llminternal/agent_transfer.go``.
"""

from __future__ import annotations

import uuid

from google.genai import types

from adk_temporal.agents import Agent, BaseAgent, SequentialAgent
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey

from ..adk_models import call, queue_registry
from .conftest import LocalFactory, LocalRuntime

APP = "follow"
USER = "u-1"
MODEL = "scripted:queue"
Reply = str | types.FunctionCall


def _transfer(agent: str) -> Reply:
    return call("transfer_to_agent", agent_name=agent)


def _story(events: list[Event]) -> list[tuple[str, object]]:
    """ADK's ``simplify_events``: (author, text, call or response) per event."""
    told: list[tuple[str, object]] = []
    for event in events:
        if event.author == "user":
            continue
        for part in (event.content.parts if event.content else None) or []:
            if part.text:
                told.append((event.author, part.text))
            elif part.function_call is not None:
                told.append((event.author, (part.function_call.name, part.function_call.args)))
            elif part.function_response is not None:
                told.append(
                    (event.author, (part.function_response.name, part.function_response.response))
                )
    return told


async def _two_runs(
    run_local: LocalFactory,
    agents: list[BaseAgent],
    replies: list[str | types.FunctionCall],
    **second: object,
) -> tuple[list[tuple[str, object]], list[tuple[str, object]], str]:
    """Run ``test1`` then ``test2`` at the root; the second run's story and its agent."""
    models, _ = queue_registry(MODEL, replies)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    root = agents[0].name
    async with run_local(agents, models=models) as rt:
        await (await rt.adk.start(APP, USER, session_id, root, "test1")).result()
        first = _story(await _events(rt, session_id))
        run = await rt.adk.start(APP, USER, session_id, root, "test2", **second)  # type: ignore[arg-type]
        result = await run.result()
        assert result.status == "completed", result.error
        agent = (await run.status()).agent
        second_story = _story(await _events(rt, session_id))[len(first) :]
    return first, second_story, agent


async def _events(rt: LocalRuntime, session_id: str) -> list[Event]:
    return (await rt.sessions.get(SessionKey(APP, USER, session_id))).events


async def test_auto_to_auto_the_next_message_stays_with_the_sub_agent(
    run_local: LocalFactory,
) -> None:
    """root transfers to sub_agent_1 (which may transfer back): the next message goes to
    sub_agent_1 at once, no second transfer (``test_auto_to_auto``)."""
    sub = Agent("sub_agent_1", MODEL)
    root = Agent("root_agent", MODEL, sub_agents=[sub])
    replies = [_transfer("sub_agent_1"), "response1", "response2"]
    first, second, agent = await _two_runs(run_local, [root], replies)
    assert first == [
        ("root_agent", ("transfer_to_agent", {"agent_name": "sub_agent_1"})),
        ("root_agent", ("transfer_to_agent", {})),
        ("sub_agent_1", "response1"),
    ]
    assert second == [("sub_agent_1", "response2")]
    assert agent == "sub_agent_1"


async def test_auto_to_single_the_next_message_goes_back_to_the_root(
    run_local: LocalFactory,
) -> None:
    """A sub-agent that disallows transfer to parent and peers does not keep the
    conversation: the root answers the next message (``test_auto_to_single``)."""
    sub = Agent(
        "sub_agent_1", MODEL, disallow_transfer_to_parent=True, disallow_transfer_to_peers=True
    )
    root = Agent("root_agent", MODEL, sub_agents=[sub])
    replies = [_transfer("sub_agent_1"), "response1", "response2"]
    _, second, agent = await _two_runs(run_local, [root], replies)
    assert second == [("root_agent", "response2")]
    assert agent == "root_agent"


async def test_auto_to_auto_to_single_the_conversation_stays_with_the_middle_agent(
    run_local: LocalFactory,
) -> None:
    """root → sub_agent_1 → sub_agent_1_1 (single): the next message goes to sub_agent_1,
    not the single agent (``test_auto_to_auto_to_single``)."""
    leaf = Agent(
        "sub_agent_1_1", MODEL, disallow_transfer_to_parent=True, disallow_transfer_to_peers=True
    )
    middle = Agent("sub_agent_1", MODEL, sub_agents=[leaf])
    root = Agent("root_agent", MODEL, sub_agents=[middle])
    replies = [_transfer("sub_agent_1"), _transfer("sub_agent_1_1"), "response1", "response2"]
    first, second, agent = await _two_runs(run_local, [root], replies)
    assert [author for author, _ in first] == [
        "root_agent",
        "root_agent",
        "sub_agent_1",
        "sub_agent_1",
        "sub_agent_1_1",
    ]
    assert second == [("sub_agent_1", "response2")]
    assert agent == "sub_agent_1"


async def test_auto_to_sequential_the_next_message_goes_back_to_the_root(
    run_local: LocalFactory,
) -> None:
    """Agents under a sequential agent never keep the conversation: the root answers the
    next message (``test_auto_to_sequential``)."""
    seq = SequentialAgent(
        "sub_agent_1",
        sub_agents=[
            Agent(name, MODEL, disallow_transfer_to_parent=True, disallow_transfer_to_peers=True)
            for name in ("sub_agent_1_1", "sub_agent_1_2")
        ],
    )
    root = Agent("root_agent", MODEL, sub_agents=[seq])
    replies = [_transfer("sub_agent_1"), "response1", "response2", "response3"]
    first, second, agent = await _two_runs(run_local, [root], replies)
    assert [(a, t) for a, t in first if isinstance(t, str)] == [
        ("sub_agent_1_1", "response1"),
        ("sub_agent_1_2", "response2"),
    ]
    assert second == [("root_agent", "response3")]
    assert agent == "root_agent"


async def test_pinning_the_root_runs_the_root(run_local: LocalFactory) -> None:
    """``pin_agent=True``: the named root answers even though the conversation is with a
    sub-agent."""
    sub = Agent("sub_agent_1", MODEL)
    root = Agent("root_agent", MODEL, sub_agents=[sub])
    replies = [_transfer("sub_agent_1"), "response1", "response2"]
    _, second, agent = await _two_runs(run_local, [root], replies, pin_agent=True)
    assert second == [("root_agent", "response2")]
    assert agent == "root_agent"


async def test_naming_a_sub_agent_starts_there_whatever_the_conversation(
    run_local: LocalFactory,
) -> None:
    """A non-root agent named at start runs as named (the rule applies at the root only)."""
    first_sub = Agent("sub_agent_1", MODEL)
    second_sub = Agent("sub_agent_2", MODEL)
    root = Agent("root_agent", MODEL, sub_agents=[first_sub, second_sub])
    models, _ = queue_registry(MODEL, [_transfer("sub_agent_1"), "response1", "response2"])
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([root], models=models) as rt:
        await (await rt.adk.start(APP, USER, session_id, "root_agent", "test1")).result()
        run = await rt.adk.start(APP, USER, session_id, "sub_agent_2", "test2")
        await run.result()
        events = await _events(rt, session_id)
    assert _story(events)[-1] == ("sub_agent_2", "response2")


async def test_a_transfer_offers_only_allowed_targets_and_answers_with_an_empty_object(
    run_local: LocalFactory,
) -> None:
    """The model sees transfer_to_agent with an enum of the targets and a system
    instruction naming them; a peer-disallowing agent is offered only its parent."""
    first_sub = Agent("sub_agent_1", MODEL, disallow_transfer_to_peers=True)
    second_sub = Agent("sub_agent_2", MODEL, description="books trips")
    root = Agent("root_agent", MODEL, sub_agents=[first_sub, second_sub])
    models, model = queue_registry(MODEL, [_transfer("sub_agent_1"), "done"])
    async with run_local([root], models=models) as rt:
        await (await rt.adk.start(APP, USER, "s-1", "root_agent", "hi")).result()
    root_request, sub_request = model.requests
    [declaration] = [d for d in root_request.tools if d.name == "transfer_to_agent"]
    schema = declaration.parameters_json_schema
    assert isinstance(schema, dict)
    assert schema["properties"]["agent_name"]["enum"] == ["sub_agent_1", "sub_agent_2"]
    assert "sub_agent_2" in (root_request.system_instruction or "")
    assert "books trips" in (root_request.system_instruction or "")
    [sub_declaration] = [d for d in sub_request.tools if d.name == "transfer_to_agent"]
    sub_schema = sub_declaration.parameters_json_schema
    assert isinstance(sub_schema, dict)
    assert sub_schema["properties"]["agent_name"]["enum"] == ["root_agent"]


async def test_after_a_rewind_the_next_message_goes_where_the_rewind_left_it(
    run_local: LocalFactory,
) -> None:
    """The transfer happened in an invocation a rewind took back: the root answers the
    next message (ADK-Python issue #4169, the runner reading rewound events)."""
    sub = Agent("sub_agent_1", MODEL)
    root = Agent("root_agent", MODEL, sub_agents=[sub])
    replies: list[Reply] = ["response1", _transfer("sub_agent_1"), "response2", "response3"]
    models, _ = queue_registry(MODEL, replies)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local([root], models=models) as rt:
        await rt.adk.run(*key, "root_agent", "test1")
        transferred = await rt.adk.run(*key, "root_agent", "test2")
        await rt.adk.rewind(key, transferred.invocation_id)
        third = await rt.adk.start(*key, "root_agent", "test3")
        await third.result()
        agent = (await third.status()).agent
        events = await _events(rt, key.session_id)
    assert agent == "root_agent"
    assert _story(events)[-1] == ("root_agent", "response3")
