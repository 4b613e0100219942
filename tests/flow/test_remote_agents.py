"""Remote agents in the flow, on the in-process runner (issue 45): a turn is sent by remote
steps, a reply is the agent's event, a failure the caller's error, a task still working is
followed by another step, and a remote question is a request of ours — an input request
addressed by the agent tool's call id, or a confirmation of the far call itself — whose
answer the next step sends back with the question it answers."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent, AgentTool, RemoteAgent
from adk_temporal.budgets import Budgets
from adk_temporal.confirmation import call_digest
from adk_temporal.errors import InvocationErrorCode
from adk_temporal.flow.messages import PendingConfirmation, PendingInput
from adk_temporal.flow.remote import (
    CREDENTIAL_KEY,
    RemoteAnswer,
    RemoteAsked,
    RemoteDone,
    RemoteFailed,
    RemoteQuestion,
    RemoteReply,
    RemoteTurn,
    RemoteWorking,
)
from adk_temporal.ids import SessionKey
from adk_temporal.models import ModelRegistry, ScriptedCall, ScriptedModel, ScriptedRule

from .conftest import LocalFactory

APP = "remote"
USER = "u-1"

Reply = Callable[[RemoteTurn], RemoteReply]


class ScriptedRemote(RemoteAgent):
    """A remote agent answering each turn with the next scripted reply; it keeps the turns."""

    def __init__(self, name: str, replies: list[Reply]) -> None:
        super().__init__(name, description="A desk elsewhere.")
        self.replies = list(replies)
        self.turns: list[RemoteTurn] = []

    async def exchange(self, turn: RemoteTurn) -> RemoteReply:
        self.turns.append(turn)
        return self.replies.pop(0)(turn)


def done(text: str) -> Reply:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return lambda turn: RemoteReply(RemoteDone(kind="done", text=text, task_id="t-1"), content)


def asked(**question: Any) -> Reply:
    return lambda turn: RemoteReply(
        RemoteAsked(kind="asked", question=RemoteQuestion(task_id="t-1", **question))
    )


def _summary(response: dict[str, Any]) -> str:
    return f"Desk: {response.get('result', response.get('error'))}"


def _assistant(remote: RemoteAgent, *, as_tool: bool = True) -> tuple[Agent, ModelRegistry]:
    """An LLM agent that asks ``remote`` (as an agent tool, or by transfer)."""
    rules = [
        ScriptedRule(r"ask (?P<q>.+)", [ScriptedCall(remote.name, {"request": "{q}"})]),
        ScriptedRule(r"hand over", [ScriptedCall("transfer_to_agent", {"agent_name": "desk"})]),
    ]
    models = ModelRegistry()
    model = ScriptedModel(rules, name="scripted:remote", summaries={remote.name: _summary})
    models.register("scripted:remote", lambda name: model)
    agent = Agent(
        name="assistant",
        model="scripted:remote",
        tools=[AgentTool(remote)] if as_tool else [],
        sub_agents=[] if as_tool else [remote],
    )
    return agent, models


def _key() -> SessionKey:
    return SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")


async def test_a_reply_is_the_remote_agents_event_and_the_tools_result(
    run_local: LocalFactory,
) -> None:
    """The turn sends the agent tool's request in a context that stays the same for the
    session's next turns; the reply is stored as the remote agent's event and is the tool's
    result."""
    remote = ScriptedRemote("desk", [done("Booked."), done("Cancelled.")])
    agent, models = _assistant(remote)
    key = _key()
    async with run_local([agent], models=models) as rt:
        first = await (await rt.adk.start(*key, "assistant", "ask book a table")).result()
        second = await (await rt.adk.start(*key, "assistant", "ask cancel it")).result()
        session = await rt.sessions.get(key)
    assert (first.final_text, second.final_text) == ("Desk: Booked.", "Desk: Cancelled.")
    sent = [t.message.parts[0].text for t in remote.turns if t.message and t.message.parts]
    assert sent == ["book a table", "cancel it"]
    assert remote.turns[0].context_id != remote.turns[1].context_id  # a call is a scope
    replies = [e for e in session.events if e.author == "desk"]
    assert [e.text() for e in replies] == ["Booked.", "Cancelled."]


async def test_a_failed_remote_task_is_the_callers_error(run_local: LocalFactory) -> None:
    """A failure is stored as the remote agent's error event and reaches the model as the
    agent tool's error."""
    failing: Reply = lambda turn: RemoteReply(RemoteFailed(kind="failed", error="no tables"))  # noqa: E731
    remote = ScriptedRemote("desk", [failing])
    agent, models = _assistant(remote)
    key = _key()
    async with run_local([agent], models=models) as rt:
        result = await (await rt.adk.start(*key, "assistant", "ask book")).result()
        session = await rt.sessions.get(key)
    assert result.final_text == "desk failed: no tables"
    [error] = [e for e in session.events if e.author == "desk"]
    assert error.error_code == InvocationErrorCode.REMOTE_AGENT_FAILED.value
    assert error.error_message == "no tables"


async def test_a_task_still_working_is_followed_by_another_step(run_local: LocalFactory) -> None:
    """A step that hands back while the task works is followed by one that names the task
    and sends nothing new."""
    working: Reply = lambda turn: RemoteReply(RemoteWorking(kind="working", task_id="t-9"))  # noqa: E731
    remote = ScriptedRemote("desk", [working, working, done("Done at last.")])
    agent, models = _assistant(remote)
    async with run_local([agent], models=models) as rt:
        result = await (await rt.adk.start(*_key(), "assistant", "ask wait")).result()
    assert result.final_text == "Desk: Done at last."
    assert [t.task_id for t in remote.turns] == [None, "t-9", "t-9"]
    assert [t.message is None for t in remote.turns] == [False, True, True]


async def test_a_remote_question_is_an_input_request_of_the_agent_tools_call(
    run_local: LocalFactory,
) -> None:
    """A question naming no call opens an input request addressed by the agent tool's call
    id; its answer goes back with the question, and the task's reply completes the call."""
    remote = ScriptedRemote(
        "desk", [asked(text="For how many?", status_message_id="m-1"), done("Booked for 4.")]
    )
    agent, models = _assistant(remote)
    key = _key()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(*key, "assistant", "ask book")
        await handle.wait_for_status("awaiting_input")
        [request] = await handle.pending()
        session = await rt.sessions.get(key)
        await handle.resume(request.id, 4)
        result = await handle.result()
    [desk_call] = [c for e in session.events for c in e.function_calls() if c.name == "desk"]
    assert isinstance(request, PendingInput)
    assert (request.message, request.function_call_id) == ("For how many?", desk_call.id)
    answering = remote.turns[1]
    assert answering.question is not None and answering.question.status_message_id == "m-1"
    assert answering.answer == RemoteAnswer(kind="input", value=4)
    assert result.final_text == "Desk: Booked for 4."


@pytest.mark.parametrize("approve", [True, False])
async def test_a_far_confirmation_is_a_confirmation_of_the_far_call(
    run_local: LocalFactory, approve: bool
) -> None:
    """A question asking to approve a far call opens a confirmation of that call (its name,
    arguments, original call id; its digest); the decision goes back as is."""
    question = {
        "kind": "confirmation",
        "request_id": "r-1",
        "function_call_id": "far-7",
        "tool": "pay",
        "args": {"amount": 5},
        "text": "Approve paying 5?",
        "call_digest": call_digest("pay", {"amount": 5}),
    }
    remote = ScriptedRemote("desk", [asked(**question), done("Settled.")])
    agent, models = _assistant(remote)
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(*_key(), "assistant", "ask pay 5")
        await handle.wait_for_status("awaiting_confirmation")
        [request] = await handle.pending()
        assert isinstance(request, PendingConfirmation)
        await handle.confirm(request.id, approve, call_digest=request.call_digest)
        await handle.result()
    assert (request.tool, request.args, request.function_call_id) == ("pay", {"amount": 5}, "far-7")
    assert request.hint == "Approve paying 5?"
    assert request.call_digest == question["call_digest"]
    assert remote.turns[1].answer == RemoteAnswer(kind="confirmation", confirmed=approve)


async def test_credentials_asked_remotely_are_marked_as_such(run_local: LocalFactory) -> None:
    """An auth-required question opens an input request whose schema marks credentials."""
    remote = ScriptedRemote("desk", [asked(text="Your key?", credential=True), done("Logged in.")])
    agent, models = _assistant(remote)
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start(*_key(), "assistant", "ask log in")
        await handle.wait_for_status("awaiting_input")
        [request] = await handle.pending()
        await handle.resume(request.id, {"key": "k"})
        result = await handle.result()
    assert isinstance(request, PendingInput) and request.input_schema is not None
    assert request.input_schema[CREDENTIAL_KEY] is True
    assert result.final_text == "Desk: Logged in."


async def test_a_remote_sub_agent_takes_over_the_conversation(run_local: LocalFactory) -> None:
    """Transferred to, the remote agent is sent what was said since its last reply, in the
    same remote context turn after turn, and its reply ends the invocation, as ADK's remote
    agent does as a sub-agent."""
    remote = ScriptedRemote("desk", [done("Hello from the desk."), done("Again, hello.")])
    agent, models = _assistant(remote, as_tool=False)
    key = _key()
    async with run_local([agent], models=models) as rt:
        first = await (await rt.adk.start(*key, "assistant", "hand over please")).result()
        second = await (await rt.adk.start(*key, "desk", "and again")).result()
    assert (first.final_text, second.final_text) == ("Hello from the desk.", "Again, hello.")
    sent = [[p.text for p in t.message.parts or []] for t in remote.turns if t.message]
    assert sent == [["hand over please"], ["and again"]]
    assert remote.turns[0].context_id == remote.turns[1].context_id


async def test_a_remote_reply_over_its_budget_fails_the_step_and_stores_nothing(
    run_local: LocalFactory,
) -> None:
    """A reply larger than ``model_reply_bytes`` cannot cross history: the step fails at
    once, naming the budget, and no reply event is stored."""
    remote = ScriptedRemote("desk", [done("x" * 4096)])
    agent, models = _assistant(remote)
    key = _key()
    async with run_local([agent], models=models, budgets=Budgets(model_reply_bytes=1024)) as rt:
        handle = await rt.adk.start(*key, "assistant", "ask a lot")
        result = await handle.result()
        session = await rt.sessions.get(key)
    assert result.status == "failed" and "model_reply_bytes" in (result.error or "")
    assert [e.text() for e in session.events if e.author == "desk"] == []
    assert len(remote.turns) == 1
