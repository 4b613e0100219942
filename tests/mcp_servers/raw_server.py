"""An MCP server written by hand — JSON-RPC without the SDK — so it can list tools the SDK
would refuse to send: schemas it cannot parse, names that collide once sanitised.

Run as ``python -m tests.mcp_servers.raw_server stdio LISTING`` or ``... http PORT LISTING``,
LISTING one of :data:`LISTINGS`. Environment: ``MCP_TEST_LOG`` — a file each request
appends one JSON line to (its method, and a call's tool name), so tests see what reached
the server.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_OBJECT = {"type": "object", "properties": {}}


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


LISTINGS: dict[str, list[dict[str, Any]]] = {
    # Deeper than the SDK's JSON parser goes: the whole message fails to parse.
    "deep": [
        {"name": "fine", "inputSchema": _OBJECT},
        {"name": "deep", "inputSchema": _nested(200)},
    ],
    # Deeper than Python's JSON parser goes too: the message cannot even be read.
    "abyss": [
        {"name": "fine", "inputSchema": _OBJECT},
        {"name": "abyss", "inputSchema": _nested(2000)},
    ],
    # A schema that is not an object: the message parses, the listing does not.
    "string": [
        {"name": "fine", "inputSchema": _OBJECT},
        {"name": "stringy", "inputSchema": "object"},
    ],
    # Distinct for MCP, one name for the model API once sanitised.
    "collide": [
        {"name": "a b", "inputSchema": _OBJECT},
        {"name": "a_b", "inputSchema": _OBJECT},
        {"name": "other", "inputSchema": _OBJECT},
    ],
}


def _log(entry: dict[str, Any]) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({**entry, "pid": os.getpid()}) + "\n")


def answer(message: dict[str, Any], listing: str) -> dict[str, Any] | None:
    """The JSON-RPC answer to ``message``; ``None`` for a notification."""
    if "id" not in message:
        return None
    method = message.get("method")
    params = message.get("params") or {}
    _log({"method": method, "tool": params.get("name")})
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-tools", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": LISTINGS[listing]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": f"ran {params.get('name')}"}]}
    elif method == "ping":
        result = {}
    else:
        # server/discover among them: the client then falls back to initialize.
        error = {"code": -32601, "message": f"method {method} not found"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio(listing: str) -> None:
    """One JSON-RPC message a line on stdin, one answer a line on stdout."""
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line), listing)
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


def serve_http(port: int, listing: str) -> None:
    """Streamable HTTP, answering each POST with a JSON body (no event stream)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            reply = answer(json.loads(body), listing)
            data = b"" if reply is None else json.dumps(reply).encode()
            self.send_response(202 if reply is None else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_response(405)  # no server-initiated stream
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_DELETE = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    sys.setrecursionlimit(20_000)  # so json.dumps can write the "abyss" listing
    if sys.argv[1] == "stdio":
        serve_stdio(sys.argv[2])
    else:
        serve_http(int(sys.argv[2]), sys.argv[3])
