"""McpToolset logic without Temporal: filter, confirmation, result conversion, listing
cache, errors naming the server, and how a step failure carries them."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from temporalio.exceptions import ApplicationError

from adk_temporal.activities.adapter import translate_errors
from adk_temporal.agents import Agent, AgentRegistry
from adk_temporal.errors import AdkRunError
from adk_temporal.mcp import (
    McpServerError,
    McpTool,
    McpToolset,
    close_connections,
    convert_result,
)

from ..mcp_servers import HttpToolServer, calls, raw_stdio_toolset, stdio_toolset


def _tool(name: str, **schema: Any) -> mcp_types.Tool:
    return mcp_types.Tool(
        name=name,
        description=f"The {name} tool.",
        input_schema={"type": "object", **schema},
    )


def _toolset(**kwargs: Any) -> McpToolset:
    return McpToolset(command="unused", **kwargs)


def test_toolset_needs_exactly_one_server() -> None:
    """Neither or both of command and url is refused, naming both options."""
    with pytest.raises(ValueError, match=r"command=.*url="):
        McpToolset()
    with pytest.raises(ValueError, match="exactly one"):
        McpToolset(command="x", url="http://127.0.0.1:1/mcp")


def test_filter_by_names_and_by_predicate() -> None:
    """A name list keeps those names; a predicate sees the listed tool."""
    add, shout = _tool("add"), _tool("shout")
    by_name = _toolset(tool_filter=["add"])
    assert [by_name.offers(t) for t in (add, shout)] == [True, False]
    by_predicate = _toolset(tool_filter=lambda t: t.name.startswith("s"))
    assert [by_predicate.offers(t) for t in (add, shout)] == [False, True]
    assert _toolset().offers(add)


def test_confirmation_as_bool_predicate_and_mapping() -> None:
    """require_confirmation applies to every tool, per call, or per tool name."""
    assert McpTool(_toolset(require_confirmation=True), _tool("add")).requires_confirmation({})
    big = McpTool(_toolset(require_confirmation=lambda a: a.get("n", 0) > 10), _tool("add"))
    assert (big.requires_confirmation({"n": 11}), big.requires_confirmation({"n": 1})) == (
        True,
        False,
    )
    mapping = _toolset(require_confirmation={"pay": True, "send": lambda a: a["to"] != "me"})
    assert McpTool(mapping, _tool("pay")).requires_confirmation({})
    assert not McpTool(mapping, _tool("look")).requires_confirmation({})
    send = McpTool(mapping, _tool("send"))
    assert send.requires_confirmation({"to": "you"}) and not send.requires_confirmation(
        {"to": "me"}
    )


def test_declaration_carries_name_prefix_description_and_schema() -> None:
    """The model sees the prefixed, API-safe name, the description and the listed schema;
    the call goes to the server under its own name."""
    schema = {"properties": {"a": {"type": "integer"}}, "required": ["a"]}
    tool = McpTool(_toolset(tool_name_prefix="calc_"), _tool("add/one", **schema))
    declaration = tool.declaration()
    assert (declaration.name, tool.mcp_name) == ("calc_add_one", "add/one")
    assert declaration.description == "The add/one tool."
    assert declaration.parameters_json_schema == {"type": "object", **schema}
    assert McpTool(_toolset(), _tool("none")).declaration().parameters_json_schema is None


def test_options_of_the_toolset_reach_each_tool() -> None:
    """Timeouts, retry policy and on_failure of the toolset are each tool's."""
    toolset = _toolset(start_to_close_timeout=timedelta(seconds=7), on_failure="fail_invocation")
    tool = McpTool(toolset, _tool("add"))
    assert tool.start_to_close_timeout == timedelta(seconds=7)
    assert tool.on_failure == "fail_invocation"


def _text(text: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=text)


@pytest.mark.parametrize(
    ("result", "response"),
    [
        (mcp_types.CallToolResult(content=[_text("no")], is_error=True), {"error": "no"}),
        (
            mcp_types.CallToolResult(content=[], is_error=True),
            {"error": "the tool reported an error"},
        ),
        (
            mcp_types.CallToolResult(content=[_text("{}")], structured_content={"sum": 3}),
            {"sum": 3},
        ),
        (mcp_types.CallToolResult(content=[_text("a"), _text("b")]), {"result": "a\nb"}),
        (mcp_types.CallToolResult(content=[]), {"result": ""}),
    ],
)
def test_result_conversion(result: mcp_types.CallToolResult, response: dict[str, Any]) -> None:
    """isError becomes an error; structured content wins; texts are joined."""
    assert convert_result(result) == response


def test_non_text_content_is_kept_in_mcp_json_form() -> None:
    """An image part stays in the response as MCP's JSON, next to the text."""
    image = mcp_types.ImageContent(type="image", data="aGk=", mime_type="image/png")
    response = convert_result(mcp_types.CallToolResult(content=[_text("see"), image]))
    assert response["result"] == "see"
    assert response["content"][0]["mimeType"] == "image/png"


async def test_listing_is_cached_for_its_ttl_and_agents_see_the_tools(tmp_path: Path) -> None:
    """Within the TTL the server is not asked again; after it, it is; the agent's resolved
    tools are its functions, then the listed tools, then nothing a function already names."""
    now = [0.0]
    toolset = stdio_toolset(
        tmp_path / "calls.jsonl",
        tool_filter=["add", "shout"],
        list_ttl_seconds=10,
        clock=lambda: now[0],
    )

    def shout(text: str) -> str:
        """My own shout."""
        return text

    registry = AgentRegistry([Agent("a", "m", tools=[shout, toolset])])
    try:
        first = await registry.resolve_tools("a")
        assert [(t.name, type(t).__name__) for t in first] == [
            ("shout", "FunctionTool"),
            ("add", "McpTool"),
        ]
        again = await toolset.get_tools()
        assert again[0] is first[1]  # the cached listing
        now[0] = 11
        assert (await toolset.get_tools())[0] is not first[1]
    finally:
        await close_connections()
    assert calls(tmp_path / "calls.jsonl") == []


async def test_a_server_that_is_gone_fails_listing_naming_it() -> None:
    """An unreachable HTTP server and a missing stdio command raise McpServerError with
    the server's URL or command, retryable."""
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    expected = re.escape(f"MCP server {url}: cannot connect")
    with pytest.raises(McpServerError, match=expected) as info:
        await McpToolset(url=url).get_tools()
    assert info.value.retryable
    with pytest.raises(McpServerError, match="no-such-mcp-command"):
        await McpToolset(command="no-such-mcp-command").get_tools()
    await close_connections()


async def test_translate_errors_keeps_mcp_retryability() -> None:
    """A retryable McpServerError fails the step retryably, typed by name; one marked
    non-retryable does not retry; other run errors stay retryable."""

    async def fail(err: Exception) -> None:
        raise err

    step = translate_errors(fail)
    with pytest.raises(ApplicationError) as retryable:
        await step(McpServerError("srv", "down"))
    assert (retryable.value.type, retryable.value.non_retryable) == ("McpServerError", False)
    assert "MCP server srv: down" in str(retryable.value)
    with pytest.raises(ApplicationError) as final:
        await step(McpServerError("srv", "refused", retryable=False))
    assert final.value.non_retryable
    with pytest.raises(ApplicationError) as other:
        await step(AdkRunError("x"))
    assert not other.value.non_retryable


@pytest.mark.parametrize(
    ("listing", "message"),
    [
        ("deep", "tool 'deep' (Invalid JSON: recursion limit exceeded"),
        ("string", "tool 'stringy' (inputSchema: Input should be a valid dictionary"),
        ("abyss", "the server sent a message that cannot be parsed"),
    ],
)
async def test_a_schema_the_sdk_cannot_parse_fails_listing_at_once_naming_the_tool(
    tmp_path: Path, listing: str, message: str
) -> None:
    """A stdio server lists a tool whose schema is nested deeper than the SDK parses, or is
    a string: listing fails non-retryably at once (not after the 300 s call timeout),
    naming that tool and not the one that parses; nested deeper than Python parses too,
    the answer cannot name the tool but still fails the listing at once."""
    toolset = raw_stdio_toolset(listing, tmp_path / "calls.jsonl")
    try:
        async with asyncio.timeout(60):  # a hang guard, not a measurement
            with pytest.raises(McpServerError) as info:
                await toolset.get_tools()
    finally:
        await close_connections()
    assert not info.value.retryable
    assert message in str(info.value) and "'fine'" not in str(info.value)
    assert [c["method"] for c in calls(tmp_path / "calls.jsonl")].count("tools/list") == 1


@pytest.mark.parametrize(
    ("listing", "message"),
    [("string", "tool 'stringy'"), ("deep", "the server's answer cannot be parsed")],
)
async def test_an_unparseable_listing_over_http_fails_at_once(
    tmp_path: Path, listing: str, message: str
) -> None:
    """Over streamable HTTP too, a string schema fails the listing non-retryably naming the
    tool; a schema nested too deep as well (the SDK drops that answer's text, so the tool
    cannot be named)."""
    server = HttpToolServer(tmp_path / "calls.jsonl", raw_listing=listing)
    server.start()
    try:
        async with asyncio.timeout(60):  # a hang guard, not a measurement
            with pytest.raises(McpServerError) as info:
                await McpToolset(url=server.url).get_tools()
    finally:
        await close_connections()
        server.kill()
    assert not info.value.retryable
    assert message in str(info.value)


async def test_tools_whose_names_sanitise_alike_fail_listing_naming_both(tmp_path: Path) -> None:
    """'a b' and 'a_b' would both reach the model as a_b: listing fails non-retryably,
    naming both; a filter that keeps one of them lists it under its own name."""
    log = tmp_path / "calls.jsonl"
    try:
        with pytest.raises(McpServerError) as info:
            await raw_stdio_toolset("collide", log).get_tools()
        filtered = raw_stdio_toolset("collide", log, tool_filter=["a_b", "other"])
        tools = await filtered.get_tools()
    finally:
        await close_connections()
    assert not info.value.retryable
    assert "'a b'" in str(info.value) and "'a_b'" in str(info.value)
    assert [(t.name, getattr(t, "mcp_name", None)) for t in tools] == [
        ("a_b", "a_b"),
        ("other", "other"),
    ]


async def test_names_that_collide_after_the_prefix_are_refused(
    tmp_path: Path,
) -> None:
    """The check is on the names the model sees: over HTTP, with a prefix, 'a b' and 'a_b'
    still collide."""
    server = HttpToolServer(tmp_path / "calls.jsonl", raw_listing="collide")
    server.start()
    try:
        with pytest.raises(McpServerError, match="calc_a_b") as info:
            await McpToolset(url=server.url, tool_name_prefix="calc ").get_tools()
    finally:
        await close_connections()
        server.kill()
    assert not info.value.retryable


def test_mcp_module_does_not_import_temporalio() -> None:
    """adk_temporal.mcp is core: importing it leaves temporalio unloaded."""
    code = "import sys, adk_temporal.mcp; print('temporalio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _closed_port() -> int:
    """A loopback port that was free a moment ago and has nothing listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
