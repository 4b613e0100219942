"""SPEC §1.11 instruction templates and providers, ported from upstream ADK.

Template cases follow ADK-Go ``internal/llminternal/instruction_processor_test.go``
(``TestInjectSessionState``, each sub-test named below) and ADK-Python
``tests/unittests/utils/test_instructions_utils.py`` (the ``test_inject_session_state_*``
names the Go cases cite). Assembly cases follow ADK-Python
``tests/unittests/flows/llm_flows/test_instructions.py`` and ADK-Go
``agent/llmagent/llmagent_test.go`` ``TestInstructionProvider``.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.artifacts.memory import InMemoryArtifactService
from adk_temporal.artifacts.requests import SaveRequest
from adk_temporal.context import InvocationContext, ReadonlyContext
from adk_temporal.errors import AdkRequestError, InstructionKeyError
from adk_temporal.instructions import (
    inject_session_state,
    instruction_text,
    join_instructions,
)
from adk_temporal.sessions.session import Session

NO_SERVICE = object()
"""Marks a context built without an artifact service."""


async def _ctx(
    state: dict[str, Any] | None = None,
    artifacts: dict[str, str] | None = None,
    *,
    service: Any = None,
    agent: str = "agent",
) -> ReadonlyContext:
    """A read-only context over session ``testApp/testUser/testSession`` (as the Go test)."""
    session = Session(
        id="testSession", app_name="testApp", user_id="testUser", state=dict(state or {})
    )
    store = None if service is NO_SERVICE else (service or InMemoryArtifactService())
    for name, text in (artifacts or {}).items():
        assert store is not None
        await store.save(SaveRequest.of(session.key, file_name=name, part=types.Part(text=text)))
    ic = InvocationContext(
        session=session,
        agent=Agent(agent, "scripted:x"),
        invocation_id="test_id",
        artifact_service=store,
    )
    return ReadonlyContext(ic)


# --- ADK-Go TestInjectSessionState / ADK-Python test_instructions_utils.py -----------------


@pytest.mark.parametrize(
    ("template", "state", "artifacts", "want"),
    [
        pytest.param(
            "Hello {user_name}, you are in {app_state} state.",
            {"user_name": "Foo", "app_state": "active"},
            {},
            "Hello Foo, you are in active state.",
            id="successful state injection (test_inject_session_state)",
        ),
        pytest.param(
            "The artifact content is: {artifact.my_file}",
            {},
            {"my_file": "This is my artifact content."},
            "The artifact content is: This is my artifact content.",
            id="successful artifact injection (test_inject_session_state_with_artifact)",
        ),
        pytest.param(
            "Optional value: {optional_value?}",
            {},
            {},
            "Optional value: ",
            id="optional missing state variable (test_inject_session_state_with_optional_state)",
        ),
        pytest.param(
            "Hello {invalid-key}!",
            {"user_name": "Foo"},
            {},
            "Hello {invalid-key}!",
            id="invalid state name is not replaced "
            "(test_inject_session_state_with_invalid_state_name_returns_original)",
        ),
        pytest.param(
            "Hello {invalid:key}!",
            {"user_name": "Foo"},
            {},
            "Hello {invalid:key}!",
            id="invalid prefix state name is not replaced "
            "(test_inject_session_state_with_invalid_prefix_state_name_returns_original)",
        ),
        pytest.param(
            "Hello {app:user_name}!",
            {"app:user_name": "Foo"},
            {},
            "Hello Foo!",
            id="valid prefixed state variable (test_inject_session_state_with_valid_prefix_state)",
        ),
        pytest.param(
            "Value: {test_key}",
            {"test_key": None},
            {},
            "Value: ",
            id="state value is nil (test_inject_session_state_with_none_state_value_returns_empty)",
        ),
        pytest.param(
            "Optional artifact: {artifact.missing_file?}",
            {},
            {"my_file": "This is my artifact content."},
            "Optional artifact: ",
            id="optional missing artifact "
            "(test_inject_session_state_with_optional_missing_artifact_returns_empty)",
        ),
        pytest.param(
            "\nHello {user_name},\nYou are {user_age} years old.\n"
            "Your favorite color is {favorite_color}.\n"
            "The artifact says: {artifact.my_file}\n"
            "And another optional artifact: {artifact.other_file?}\n",
            {"user_name": "Foo", "user_age": 30, "favorite_color": "blue"},
            {"my_file": "This is my artifact content."},
            "\nHello Foo,\nYou are 30 years old.\nYour favorite color is blue.\n"
            "The artifact says: This is my artifact content.\n"
            "And another optional artifact: \n",
            id="complex template with mixed variables and artifacts "
            "(test_inject_session_state_with_multiple_variables_and_artifacts)",
        ),
    ],
)
async def test_inject_session_state_fills_placeholders_as_upstream(
    template: str, state: dict[str, Any], artifacts: dict[str, str], want: str
) -> None:
    """Each upstream TestInjectSessionState success case renders to the same text."""
    ctx = await _ctx(state, artifacts)
    assert await inject_session_state(template, ctx) == want


@pytest.mark.parametrize(
    ("template", "artifacts", "service", "key", "words"),
    [
        pytest.param(
            "Hello {missing_key}!",
            {},
            None,
            "missing_key",
            "state key 'missing_key'",
            id="missing required state variable "
            "(test_inject_session_state_with_missing_state_raises_key_error)",
        ),
        pytest.param(
            "The artifact content is: {artifact.missing_file}",
            {"my_file": "This is my artifact content."},
            None,
            "artifact.missing_file",
            "artifact 'missing_file'",
            id="missing required artifact "
            "(test_inject_session_state_with_missing_artifact_raises_key_error)",
        ),
        pytest.param(
            "The artifact content is: {artifact.}",
            {},
            None,
            "artifact.",
            "artifact ''",
            id="empty artifact name "
            "(test_inject_session_state_with_empty_artifact_name_raises_key_error)",
        ),
        pytest.param(
            "The artifact content is: {artifact.my_file}",
            {},
            NO_SERVICE,
            "artifact.my_file",
            "no artifact service",
            id="artifact service not initialized "
            "(test_inject_session_state_artifact_service_not_initialized_raises_value_error)",
        ),
    ],
)
async def test_missing_names_raise_a_typed_error_naming_the_key_and_agent(
    template: str, artifacts: dict[str, str], service: Any, key: str, words: str
) -> None:
    """Each upstream error case raises InstructionKeyError (a request error and a KeyError)
    whose message names the key and the agent."""
    ctx = await _ctx({"user_name": "Foo"}, artifacts, service=service, agent="helper")
    with pytest.raises(InstructionKeyError) as caught:
        await inject_session_state(template, ctx)
    err = caught.value
    assert isinstance(err, AdkRequestError)
    assert isinstance(err, KeyError)
    assert (err.key, err.agent) == (key, "helper")
    assert words in str(err)
    assert "agent 'helper'" in str(err)


async def test_optional_artifact_still_needs_an_artifact_service() -> None:
    """``{artifact.x?}`` without an artifact service is an error, as in ADK-Go (the service
    check comes before the optional check)."""
    ctx = await _ctx(service=NO_SERVICE)
    with pytest.raises(InstructionKeyError, match="no artifact service"):
        await inject_session_state("{artifact.notes?}", ctx)


async def test_missing_key_error_says_how_to_make_it_optional() -> None:
    """The message offers the optional form of the placeholder as the fix."""
    ctx = await _ctx()
    with pytest.raises(InstructionKeyError, match=r"write \{user_name\?\} to make it optional"):
        await inject_session_state("Help {user_name}.", ctx)


async def test_braces_spaces_and_non_names_follow_the_upstream_template() -> None:
    """ADK-Python test_instructions.py test_build_system_instruction: surrounding spaces and
    repeated braces are stripped; groups that are not names stay as written."""
    ctx = await _ctx({"customerId": "1234567890", "customer_int": 30})
    template = (
        "Use the echo_info tool to echo { customerId }, "
        "{{customer_int  }, {  non-identifier-float}}, "
        "{'key1': 'value1'} and {{'key2': 'value2'}}."
    )
    assert await inject_session_state(template, ctx) == (
        "Use the echo_info tool to echo 1234567890, 30, "
        "{  non-identifier-float}}, {'key1': 'value1'} and {{'key2': 'value2'}}."
    )


async def test_nested_state_paths_resolve_as_the_upstream_test_expects() -> None:
    """ADK-Python test_instructions.py test_build_system_instruction: ``{customer.profile.
    name}`` reads the nested value and ``{customer?.preferences.alias}`` (optional, missing)
    is empty, beside the flat and non-name groups."""
    ctx = await _ctx(
        {
            "customerId": "1234567890",
            "customer_int": 30,
            "customer": {"profile": {"name": "Test User", "email": "test@example.com"}},
        }
    )
    template = (
        "Use the echo_info tool to echo { customerId }, {{customer_int  }, "
        "{customer.profile.name}, {customer?.preferences.alias}, "
        "{  non-identifier-float}}, {'key1': 'value1'} and {{'key2': 'value2'}}."
    )
    assert await inject_session_state(template, ctx) == (
        "Use the echo_info tool to echo 1234567890, 30, Test User, , "
        "{  non-identifier-float}}, {'key1': 'value1'} and {{'key2': 'value2'}}."
    )


async def test_nested_paths_that_do_not_resolve() -> None:
    """ADK-Python test_nested_templating: a ``?`` after any segment (or at the end) makes a
    missing path empty; an unmarked one, a path through a non-dict value and a segment that
    is no name stay as written; a scoped first segment and ``None`` read as flat keys do."""
    ctx = await _ctx({"user": {"profile": {"name": "Ada"}, "n": 3}, "app:cfg": {"tier": None}})
    template = (
        "{user.profile.name}|{user.settings?.preferences.theme}|{user.preferences.value}|"
        "{user.n.x}|{user.profile.name?}|{gone.x}|{gone?.x}|{user.bad-name}|{app:cfg.tier}"
    )
    assert await inject_session_state(template, ctx) == (
        "Ada||{user.preferences.value}|{user.n.x}|Ada|{gone.x}||{user.bad-name}|"
    )


async def test_scope_prefixes_are_names_and_other_prefixes_are_not() -> None:
    """ADK-Python test_instructions.py test_build_system_instruction_with_namespace:
    ``app:``, ``user:`` and ``temp:`` keys are read, ``a:key`` stays as written."""
    state = {"customerId": "1234567890", "app:key": "app_value", "user:key": "user_value"}
    ctx = await _ctx({**state, "temp:key": "temp_value"})
    template = "Echo { customerId }, {app:key}, {user:key}, {temp:key}, {a:key}, {app:a:b}."
    assert await inject_session_state(template, ctx) == (
        "Echo 1234567890, app_value, user_value, temp_value, {a:key}, {app:a:b}."
    )


async def test_optional_marker_after_stripped_spaces_and_on_non_names() -> None:
    """``{ name? }`` is optional (spaces go first); ``{bad-name?}`` is left as written."""
    ctx = await _ctx({"name": "Ada"})
    rendered = await inject_session_state("{ name? }|{ gone? }|{bad-name?}|{name ?}", ctx)
    assert rendered == "Ada||{bad-name?}|{name ?}"


async def test_values_are_their_str_and_artifacts_their_text() -> None:
    """A non-string value is inserted as ``str(value)``; a text artifact as its text."""
    ctx = await _ctx({"n": 3, "items": ["a", "b"]}, {"notes.txt": "line"})
    rendered = await inject_session_state("{n} {items} {artifact.notes.txt}", ctx)
    assert rendered == "3 ['a', 'b'] line"


async def test_state_written_during_the_invocation_is_seen() -> None:
    """The context's state view is live: a value set after the context was built is read."""
    ctx = await _ctx()
    ctx._invocation_context.session.state["late"] = "here"
    assert await inject_session_state("{late}", ctx) == "here"


# --- providers (ADK-Python test_instructions.py, ADK-Go TestInstructionProvider) -------------


async def test_sync_provider_text_is_not_templated() -> None:
    """test_function_system_instruction: a provider's braces reach the model untouched."""
    ctx = await _ctx({"customerId": "1234567890", "customer_int": 30})

    def build(readonly_context: ReadonlyContext) -> str:
        return f"intact {{ customerId }} {{customer_int}} {readonly_context.invocation_id}."

    assert await instruction_text(build, ctx) == "intact { customerId } {customer_int} test_id."


async def test_async_provider_text_is_not_templated() -> None:
    """test_async_function_system_instruction: an async provider is awaited, not templated."""
    ctx = await _ctx({"var": "custom_value"})

    async def build(readonly_context: ReadonlyContext) -> str:
        return "instruction provider template {var} not evaluated"

    assert await instruction_text(build, ctx) == (
        "instruction provider template {var} not evaluated"
    )


async def test_provider_may_template_explicitly_with_the_helper() -> None:
    """ADK-Go instructionutil.InjectSessionState: a provider opts in to the template rules."""
    ctx = await _ctx({"user_name": "Foo"})

    async def build(readonly_context: ReadonlyContext) -> str:
        return await inject_session_state("Help {user_name}.", readonly_context)

    assert await instruction_text(build, ctx) == "Help Foo."


async def test_provider_returning_a_non_string_is_a_type_error() -> None:
    """A provider that returns something other than text is refused with its name."""
    ctx = await _ctx()

    def broken(readonly_context: ReadonlyContext) -> Any:
        return 42

    with pytest.raises(TypeError, match="'broken' of agent 'agent' returned int"):
        await instruction_text(broken, ctx)


# --- assembly: global instruction first ------------------------------------------------------


def test_join_instructions_skips_empty_ones() -> None:
    """ADK-Go utils.AppendInstructions: parts a blank line apart; an empty one adds nothing."""
    assert join_instructions("global", "", "own") == "global\n\nown"
    assert join_instructions("", "") == ""


async def test_global_instruction_precedes_the_sub_agent_instruction() -> None:
    """test_global_system_instruction: the root's global instruction, then the agent's."""
    sub = Agent("sub_agent", "scripted:x", "This is the sub agent instruction.")
    root = Agent(
        "root_agent",
        "scripted:x",
        global_instruction="This is the global instruction.",
        sub_agents=[sub],
    )
    ctx = await _ctx(agent="sub_agent")
    assert await sub.system_instruction(ctx, root=root) == (
        "This is the global instruction.\n\nThis is the sub agent instruction."
    )


async def test_global_and_agent_providers_are_joined_untemplated() -> None:
    """TestInstructionProvider "global instruction provider merged with instruction provider"
    and test_async_function_global_system_instruction."""

    async def own(readonly_context: ReadonlyContext) -> str:
        return "instruction provider {var}"

    def shared(readonly_context: ReadonlyContext) -> str:
        return "global instruction provider {var}"

    agent = Agent("test_agent", "scripted:x", own, global_instruction=shared)
    ctx = await _ctx({"var": "custom_value"}, agent="test_agent")
    assert await agent.system_instruction(ctx) == (
        "global instruction provider {var}\n\ninstruction provider {var}"
    )


async def test_global_template_is_filled_and_errors_name_it() -> None:
    """A global template reads state like any; a missing key names the global instruction."""
    sub = Agent("sub_agent", "scripted:x", "Own {var}.")
    root = Agent("root_agent", "scripted:x", global_instruction="Be {tone}.", sub_agents=[sub])
    ctx = await _ctx({"var": "v", "tone": "kind"}, agent="sub_agent")
    assert await sub.system_instruction(ctx, root=root) == "Be kind.\n\nOwn v."
    bare = await _ctx({"var": "v"}, agent="sub_agent")
    with pytest.raises(InstructionKeyError, match="global instruction of agent 'root_agent'"):
        await sub.system_instruction(bare, root=root)


async def test_without_an_llm_root_the_agent_s_own_global_instruction_applies() -> None:
    """ADK-Go instructionsRequestProcessor: when the tree's root is not an LLM agent
    (``root=None``), the agent's own global instruction is used."""
    agent = Agent("a", "scripted:x", "Own.", global_instruction="Mine.")
    assert await agent.system_instruction(await _ctx(agent="a")) == "Mine.\n\nOwn."
