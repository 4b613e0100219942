"""A real MCP server for the tests, written with the ``mcp`` SDK (``MCPServer``).

Run as ``python -m tests.mcp_servers.tool_server stdio`` or ``... http PORT``. Environment:
``MCP_TEST_LOG`` — a file each call appends one JSON line to (tool, args, the request's
``_meta``), so tests see what reached the server; ``MCP_TEST_BLOCK`` — when set, ``slow_add``
writes ``<log>.started`` and then hangs, so a test can kill the server mid-call.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-tools")


def _log(tool: str, args: dict[str, Any], ctx: Context) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if not path:
        return
    meta = ctx.request_context.meta
    dumped = meta if isinstance(meta, dict) else (meta.model_dump() if meta is not None else None)
    line = json.dumps({"tool": tool, "args": args, "meta": dumped, "pid": os.getpid()})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


@server.tool()
def add(a: int, b: int, ctx: Context) -> dict[str, int]:
    """Add two numbers."""
    _log("add", {"a": a, "b": b}, ctx)
    return {"sum": a + b}


@server.tool()
def shout(text: str, ctx: Context) -> str:
    """Say a text loudly."""
    _log("shout", {"text": text}, ctx)
    return text.upper()


@server.tool()
def broken(ctx: Context) -> str:
    """Always fails."""
    _log("broken", {}, ctx)
    raise ToolError("the broken tool broke")


@server.tool()
def doomed(ctx: Context) -> str:
    """A tool that ``retire`` removes."""
    _log("doomed", {}, ctx)
    return "still here"


@server.tool()
def retire(ctx: Context) -> str:
    """Remove the ``doomed`` tool from this server."""
    _log("retire", {}, ctx)
    server.remove_tool("doomed")
    return "doomed removed"


@server.tool()
async def slow_add(a: int, b: int, ctx: Context) -> dict[str, int]:
    """Add two numbers, slowly when the server was started to block."""
    _log("slow_add", {"a": a, "b": b}, ctx)
    if os.environ.get("MCP_TEST_BLOCK"):
        Path(os.environ["MCP_TEST_LOG"] + ".started").write_text(str(os.getpid()))
        while True:  # until the test kills this process
            time.sleep(0.05)
    return {"sum": a + b}


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
