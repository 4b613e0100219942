"""SPEC §1.1, §1.4, §1.5 and the context side of §1.6–1.8: the context family."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from google.genai import types

from adk_temporal.artifacts.memory import InMemoryArtifactService
from adk_temporal.artifacts.requests import SaveRequest, SaveResponse
from adk_temporal.context import (
    UNSET,
    CallbackContext,
    ContextDelta,
    InvocationContext,
    ReadonlyContext,
    RunConfig,
    ToolContext,
)
from adk_temporal.errors import MemoryServiceNotConfiguredError
from adk_temporal.events import Event, EventActions, InputRequest, ToolConfirmation
from adk_temporal.memory import InMemoryMemoryService
from adk_temporal.resume import Resumed
from adk_temporal.sessions.session import Session

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


@dataclass
class Agent:
    """A stand-in agent: contexts only need its name."""

    name: str


def make_ic(**overrides: Any) -> InvocationContext:
    """An invocation context over a fresh session of app ``app``, user ``u1``, id ``s1``."""
    fields: dict[str, Any] = {
        "session": Session(id="s1", app_name="app", user_id="u1", state={"city": "Beijing"}),
        "agent": Agent("weather_agent"),
        "invocation_id": "e-fixed",
        "workflow_id": "adk/app/u1/s1",
    }
    fields.update(overrides)
    return InvocationContext(**fields)


# --- 1.1 the context family -------------------------------------------------------------


def test_ctx_01_readonly_context_exposes_identity() -> None:
    """ReadonlyContext exposes user content, ids, agent name, user, app, session and branch."""
    content = types.Content(role="user", parts=[types.Part(text="weather in Hangzhou?")])
    ctx = ReadonlyContext(make_ic(user_content=content, branch="root.weather"))
    assert ctx.user_content is content
    assert ctx.invocation_id == "e-fixed"
    assert ctx.agent_name == "weather_agent"
    assert (ctx.user_id, ctx.app_name, ctx.session_id) == ("u1", "app", "s1")
    assert ctx.branch == "root.weather"


def test_ctx_02_readonly_state_is_live_and_not_writable() -> None:
    """The read-only state view sees later writes but offers no way to write."""
    ic = make_ic()
    readonly = ReadonlyContext(ic)
    view = readonly.state
    CallbackContext(ic).state["city"] = "Hangzhou"
    assert view["city"] == "Hangzhou"
    with pytest.raises(TypeError):
        view["city"] = "Paris"  # type: ignore[index]
    assert not hasattr(view, "update")


def test_ctx_03_invocation_id_generated_when_absent() -> None:
    """An invocation without an id gets ``e-`` followed by a UUID4, unique per context."""
    first = make_ic(invocation_id=None)
    second = make_ic(invocation_id=None)
    assert first.invocation_id.startswith("e-")
    assert UUID.fullmatch(first.invocation_id[2:])
    assert first.invocation_id != second.invocation_id


def test_ctx_04_explicit_invocation_id_kept_as_is() -> None:
    """An explicit invocation id is kept verbatim, even without the ``e-`` prefix."""
    assert make_ic(invocation_id="inv-42").invocation_id == "inv-42"


def test_ctx_05_invocation_context_carries_its_environment() -> None:
    """InvocationContext exposes session, agent, scope, config, services and resume inputs."""
    memory = InMemoryMemoryService()
    artifacts = InMemoryArtifactService()
    ic = make_ic(
        isolation_scope="scope-a",
        run_config=RunConfig(max_steps=3),
        artifact_service=artifacts,
        memory_service=memory,
        resume_inputs={"i-1": 5},
    )
    assert ic.session.id == "s1"
    assert ic.agent.name == "weather_agent"
    assert ic.isolation_scope == "scope-a"
    assert ic.run_config.max_steps == 3
    assert ic.artifact_service is artifacts
    assert ic.memory_service is memory
    assert dict(ic.resume_inputs) == {"i-1": 5}
    assert ic.workflow_id == "adk/app/u1/s1"


def test_ctx_06_run_config_defaults() -> None:
    """RunConfig defaults to 25 steps and an invocation without one uses the defaults."""
    assert RunConfig().max_steps == 25
    assert make_ic().run_config == RunConfig()
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        RunConfig(max_steps=0)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("function_call_id", lambda c: c.function_call_id),
        ("tool_confirmation", lambda c: c.tool_confirmation),
        ("request_confirmation", lambda c: c.request_confirmation("ok?")),
        ("request_input", lambda c: c.request_input("amount?")),
    ],
)
def test_ctx_07_callback_context_refuses_tool_capabilities(name: str, call: Any) -> None:
    """Tool-only capabilities raise NotImplementedError naming themselves on a callback."""
    ctx = CallbackContext(make_ic())
    with pytest.raises(
        NotImplementedError, match=rf"^{name} is not supported for callback context$"
    ):
        call(ctx)
    assert ctx.actions.is_empty()


async def test_ctx_08_callback_context_refuses_search_memory() -> None:
    """search_memory on a callback context raises NotImplementedError, even with a service."""
    ctx = CallbackContext(make_ic(memory_service=InMemoryMemoryService()))
    with pytest.raises(
        NotImplementedError, match=r"^search_memory is not supported for callback context$"
    ):
        await ctx.search_memory("weather")


@pytest.mark.parametrize("kind", ["callback", "tool"])
def test_ctx_09_tracked_contexts_cannot_end_the_invocation(kind: str) -> None:
    """end_invocation raises on callback and tool contexts and leaves the flag unset."""
    ic = make_ic()
    ctx = CallbackContext(ic) if kind == "callback" else ToolContext(ic, "call-1")
    with pytest.raises(
        NotImplementedError,
        match=rf"^end_invocation is not supported for {kind} context; "
        r"set ctx.actions.end_invocation = True instead$",
    ):
        ctx.end_invocation()
    assert not ic.ended
    assert not ctx.ended


def test_ctx_10_tool_ends_invocation_through_actions() -> None:
    """A tool ends the invocation by setting actions.end_invocation, recorded for the flow."""
    ctx = ToolContext(make_ic(), "call-1")
    ctx.actions.end_invocation = True
    assert ctx.actions.model_dump()["end_invocation"] is True


@pytest.mark.parametrize("given", [None, ""])
def test_ctx_11_function_call_id_never_empty(given: str | None) -> None:
    """A tool context without a call id (None or "") generates a fresh UUID4."""
    ids = {ToolContext(make_ic(), given).function_call_id for _ in range(2)}
    assert len(ids) == 2
    assert all(UUID.fullmatch(i) for i in ids)


def test_ctx_12_function_call_id_and_confirmation_kept() -> None:
    """A given call id and tool confirmation are exposed unchanged."""
    decision = ToolConfirmation(hint="pay?", confirmed=True, payload={"amount": 3})
    ctx = ToolContext(make_ic(), "call-7", tool_confirmation=decision)
    assert ctx.function_call_id == "call-7"
    assert ctx.tool_confirmation == decision
    assert ToolContext(make_ic(), "call-8").tool_confirmation is None


def test_ctx_13_idempotency_key_is_stable_per_call() -> None:
    """idempotency_key is workflow/invocation/call and is the same for a re-created context."""
    first = ToolContext(make_ic(), "call-1")
    again = ToolContext(make_ic(), "call-1")
    assert first.idempotency_key == "adk/app/u1/s1/e-fixed/call-1"
    assert again.idempotency_key == first.idempotency_key
    assert ToolContext(make_ic(), "call-2").idempotency_key != first.idempotency_key


def test_ctx_14_artifacts_none_without_service() -> None:
    """ctx.artifacts is None on callback and tool contexts when no artifact service is set."""
    ic = make_ic()
    assert CallbackContext(ic).artifacts is None
    assert ToolContext(ic, "call-1").artifacts is None


class RecordingArtifacts(InMemoryArtifactService):
    """An in-memory artifact service that records the idempotency key of every save."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Record the key, then save."""
        self.keys.append(request.idempotency_key)
        return await super().save(request)


async def test_ctx_14_artifact_saves_carry_the_context_idempotency_key() -> None:
    """Tool saves are keyed by idempotency_key, callback saves by the callback key."""
    service = RecordingArtifacts()
    ic = make_ic(artifact_service=service)
    tool = ToolContext(ic, "call-1")
    keyed = CallbackContext(ic, idempotency_key="wf/e-fixed/step-2/before_model")
    contexts = [tool, tool.with_delta(ContextDelta(branch="x")), CallbackContext(ic), keyed]
    for ctx, name in zip(contexts, ["r.txt", "r.txt", "c.txt", "c.txt"], strict=True):
        artifacts = ctx.artifacts
        assert artifacts is not None and artifacts is ctx.artifacts
        await artifacts.save(name, types.Part(text="report"))
    tool_keys, callback_key, step_key = service.keys[:2], service.keys[2], service.keys[3]
    assert all(k and k.startswith("adk/app/u1/s1/e-fixed/call-1/") for k in tool_keys)
    assert tool_keys[0] != tool_keys[1]
    assert callback_key and callback_key.startswith("adk/app/u1/s1/e-fixed/callback/")
    assert step_key and step_key.startswith("wf/e-fixed/step-2/before_model/")
    assert tool.actions.artifact_delta == {"r.txt": 2}


def test_ctx_15_tool_context_is_a_callback_context() -> None:
    """ToolContext has the callback context's writable state and actions."""
    actions = EventActions()
    ctx = ToolContext(make_ic(), "call-1", actions=actions)
    assert isinstance(ctx, CallbackContext)
    assert isinstance(ctx, ReadonlyContext)
    ctx.state["last_city"] = "Hangzhou"
    assert ctx.actions is actions
    assert actions.state_delta == {"last_city": "Hangzhou"}


def test_ctx_16_callback_state_records_delta_into_given_actions() -> None:
    """A callback context writes into the actions it was given and the session state."""
    ic = make_ic()
    actions = EventActions()
    ctx = CallbackContext(ic, actions)
    ctx.state["city"] = "Hangzhou"
    assert actions.state_delta == {"city": "Hangzhou"}
    assert ic.session.state["city"] == "Hangzhou"
    assert CallbackContext(ic).actions.is_empty()


# --- 1.4 derived contexts ---------------------------------------------------------------


def test_ctx_d1_unset_fields_leave_context_unchanged() -> None:
    """A delta of only UNSET fields derives a new context equal in every field."""
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    ic = make_ic(branch="a.b", isolation_scope="s", user_content=content, resume_inputs={"i": 1})
    derived = ic.with_delta(ContextDelta())
    assert derived is not ic
    assert (derived.branch, derived.isolation_scope) == ("a.b", "s")
    assert derived.user_content is content
    assert derived.agent is ic.agent
    assert dict(derived.resume_inputs) == {"i": 1}
    assert repr(UNSET) == "UNSET"


def test_ctx_d2_none_and_empty_string_replace() -> None:
    """branch="" clears the branch, user_content=None clears content, resume_inputs=None clears."""
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    ic = make_ic(branch="a.b", isolation_scope="s", user_content=content, resume_inputs={"i": 1})
    derived = ic.with_delta(
        ContextDelta(branch="", isolation_scope="", user_content=None, resume_inputs=None)
    )
    assert derived.branch == ""
    assert derived.isolation_scope == ""
    assert derived.user_content is None
    assert derived.resumed_input("i") is None
    assert ic.branch == "a.b" and ic.user_content is content


def test_ctx_d3_replaces_agent_and_resume_inputs() -> None:
    """A delta can switch the agent and the resume inputs of the derived context."""
    derived = make_ic().with_delta(
        ContextDelta(agent=Agent("report_agent"), resume_inputs={"i-2": None})
    )
    assert ReadonlyContext(derived).agent_name == "report_agent"
    assert derived.resumed_input("i-2") == Resumed(value=None)


def test_ctx_d4_with_delta_none_returns_same_object() -> None:
    """with_delta(None) returns the very same context for every kind."""
    ic = make_ic()
    contexts: list[InvocationContext | ReadonlyContext] = [
        ic,
        ReadonlyContext(ic),
        CallbackContext(ic),
        ToolContext(ic, "c"),
    ]
    for ctx in contexts:
        assert ctx.with_delta(None) is ctx


def test_ctx_d5_derived_shares_actions_and_session() -> None:
    """A derived callback context writes into the parent's actions and session state."""
    ic = make_ic()
    parent = CallbackContext(ic)
    child = parent.with_delta(ContextDelta(branch="a.sub"))
    child.state["city"] = "Hangzhou"
    assert child.actions is parent.actions
    assert parent.actions.state_delta == {"city": "Hangzhou"}
    assert parent.state["city"] == "Hangzhou"
    assert (parent.branch, child.branch) == ("", "a.sub")


def test_ctx_d6_derivation_keeps_the_kind() -> None:
    """Deriving a callback or tool context keeps its kind and its capability guard."""
    ic = make_ic()
    callback = CallbackContext(ic).with_delta(ContextDelta(branch="x"))
    readonly = ReadonlyContext(ic).with_delta(ContextDelta(branch="x"))
    assert type(callback) is CallbackContext
    assert type(readonly) is ReadonlyContext
    with pytest.raises(NotImplementedError, match=r"^request_confirmation is not supported"):
        callback.request_confirmation()


def test_ctx_d7_derived_tool_context_keeps_call_identity() -> None:
    """A derived tool context keeps function_call_id, confirmation and idempotency key."""
    decision = ToolConfirmation(confirmed=True)
    tool = ToolContext(make_ic(), "call-3", tool_confirmation=decision)
    derived = tool.with_delta(ContextDelta(user_content=None))
    assert type(derived) is ToolContext
    assert derived.function_call_id == "call-3"
    assert derived.tool_confirmation is decision
    assert derived.idempotency_key == tool.idempotency_key
    derived.request_confirmation("again?")
    assert list(tool.actions.requested_tool_confirmations) == ["call-3"]


# --- 1.5 ending ---------------------------------------------------------------------------


def test_ctx_e1_end_invocation_sets_ended() -> None:
    """end_invocation() sets the flag read by ended; nothing else changes."""
    ic = make_ic()
    assert not ic.ended
    ic.end_invocation()
    assert ic.ended
    assert ic.session.state == {"city": "Beijing"}


def test_ctx_e2_ended_flag_shared_with_derived_contexts() -> None:
    """Ending a derived invocation context ends the invocation the parent sees, and back."""
    parent = make_ic()
    child = parent.with_delta(ContextDelta(branch="p.child"))
    child.end_invocation()
    assert parent.ended
    assert CallbackContext(parent).ended


# --- 1.6 confirmation (context side) ------------------------------------------------------


def test_ctx_f1_request_confirmation_records_request() -> None:
    """request_confirmation records an unconfirmed request under the call id and skips summary."""
    ctx = ToolContext(make_ic(), "call-9")
    ctx.request_confirmation(hint="Buy report for $3?", payload={"price": 3})
    assert ctx.actions.requested_tool_confirmations == {
        "call-9": ToolConfirmation(hint="Buy report for $3?", confirmed=False, payload={"price": 3})
    }
    assert ctx.actions.skip_summarization is True


# --- 1.7 resume inputs (context side) -----------------------------------------------------


def test_ctx_g1_request_input_records_and_returns_default_id() -> None:
    """request_input returns "<call id>/input-<n>" and records the request, skipping summary."""
    ctx = ToolContext(make_ic(), "call-1")
    schema = {"type": "integer"}
    first = ctx.request_input("How many?", schema=schema)
    explicit = ctx.request_input("Which city?", interrupt_id="city")
    second = ctx.request_input("Why?")
    assert (first, explicit, second) == ("call-1/input-1", "city", "call-1/input-2")
    assert ctx.actions.requested_inputs["call-1/input-1"] == InputRequest(
        interrupt_id="call-1/input-1",
        function_call_id="call-1",
        message="How many?",
        input_schema=schema,
    )
    assert list(ctx.actions.requested_inputs) == ["call-1/input-1", "city", "call-1/input-2"]
    assert ctx.actions.skip_summarization is True


def test_ctx_g1_default_interrupt_id_is_deterministic_across_reentry() -> None:
    """A re-entered handler (fresh context, same call id) computes the same interrupt ids."""
    ids = [ToolContext(make_ic(), "call-1").request_input("q") for _ in range(2)]
    assert ids == ["call-1/input-1", "call-1/input-1"]


def test_ctx_g2_resumed_input_distinguishes_none_from_unanswered() -> None:
    """resumed_input gives Resumed(None) for an answer of None and None when unanswered."""
    ctx = ToolContext(make_ic(resume_inputs={"call-1/input-1": None, "city": "Hangzhou"}), "call-1")
    assert ctx.resumed_input() == Resumed(value=None)
    assert ctx.resumed_input("call-1/input-1") == Resumed(value=None)
    assert ctx.resumed_input("city") == Resumed(value="Hangzhou")
    assert ctx.resumed_input("call-1/input-2") is None
    assert ToolContext(make_ic(), "call-1").resumed_input() is None


def test_ctx_g2_answered_request_is_not_reopened() -> None:
    """request_input for an already answered interrupt records nothing and returns its id."""
    ctx = ToolContext(make_ic(resume_inputs={"call-1/input-1": 4}), "call-1")
    iid = ctx.request_input("How many?")
    assert iid == "call-1/input-1"
    assert ctx.actions.requested_inputs == {}
    assert ctx.actions.skip_summarization is False
    assert ctx.resumed_input(iid) == Resumed(value=4)


def test_ctx_g3_request_input_refuses_invalid_schema() -> None:
    """request_input refuses a schema that is not valid JSON schema and records nothing."""
    ctx = ToolContext(make_ic(), "call-1")
    with pytest.raises(ValueError, match=r"^invalid input schema for request_input: 12 is not"):
        ctx.request_input("How many?", schema={"type": 12})
    assert ctx.actions.requested_inputs == {}


def test_ctx_g5_interrupt_and_call_ids_are_separate_namespaces() -> None:
    """An answer keyed by the function-call id does not answer the call's default interrupt."""
    ctx = ToolContext(make_ic(resume_inputs={"call-1": "yes"}), "call-1")
    assert ctx.resumed_input() is None


# --- 1.8 memory (context side) ------------------------------------------------------------


async def test_ctx_h1_search_memory_without_service() -> None:
    """search_memory raises MemoryServiceNotConfiguredError when no service is configured."""
    with pytest.raises(MemoryServiceNotConfiguredError, match=r"^search_memory needs a memory"):
        await ToolContext(make_ic(), "call-1").search_memory("weather")


async def test_ctx_h2_search_memory_searches_app_and_user() -> None:
    """search_memory searches the sessions of the context's app and user."""
    memory = InMemoryMemoryService()
    past = Session(id="old", app_name="app", user_id="u1")
    past.events.append(
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="Rain")]))
    )
    await memory.add_session(past)
    ctx = ToolContext(make_ic(memory_service=memory), "call-1")
    found = await ctx.search_memory("rain tomorrow?")
    assert [m.content.parts[0].text for m in found.memories if m.content.parts] == ["Rain"]
