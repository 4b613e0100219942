"""MCP toolsets: the tools of a Model Context Protocol server, run as durable tool calls.

An :class:`McpToolset` names a server — a command to start (stdio) or a URL (streamable
HTTP) — and which of its tools an agent may call. Everything that talks to the server runs
on the worker, inside the activities: the model step lists the tools (cached per toolset
for ``list_ttl_seconds``) and offers their declarations; each call the model makes is an
ordinary ``adk_tool_call`` activity with its retry policy, heartbeats, confirmation gate and
a result stored by reference. The call's ``ctx.idempotency_key`` travels in the request's
``_meta`` under :data:`IDEMPOTENCY_META_KEY`, so a server can make retried calls no-ops.

Connections are pooled per worker process (and event loop), keyed by the server's
configuration, and closed after ``idle_seconds`` unused or by :func:`close_connections`.

Errors: :class:`McpServerError` (an :class:`~adk_temporal.errors.AdkRunError`) names the
server. A server that cannot be reached, or dies mid-call, raises it retryable, so Temporal
retries the step. A listing that cannot be used raises :class:`McpListingError`, which is
not retried: the server answered it with a protocol error, a tool's schema cannot be parsed
(nested deeper than the SDK parses, or not an object — noticed as the answer arrives, not
after the call timeout), or two tools would reach the model under one name (``a b`` and
``a_b``); the message names the tools. A result with ``isError`` and a protocol error
answering a call (an unknown tool, invalid arguments) become ``{"error": ...}`` responses
the model sees.

This module needs the ``mcp`` SDK (``pip install 'adk-temporal[mcp]'``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from types import TracebackType
from typing import Any, TypeAlias, cast

import pydantic

from .extras import needs_extra

with needs_extra("mcp", "McpToolset"):
    import httpx2
    import mcp.types as mcp_types
    from mcp import Client, MCPError
    from mcp.client import Transport
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

from .errors import AdkRunError
from .tools import BaseToolset, ConfirmationPredicate, FunctionTool, OnFailure, RetryPolicyLike

__all__ = [
    "IDEMPOTENCY_META_KEY",
    "McpConfirmation",
    "McpListingError",
    "McpServerError",
    "McpTool",
    "McpToolFilter",
    "McpToolset",
    "close_connections",
    "convert_result",
]

IDEMPOTENCY_META_KEY = "adk/idempotencyKey"
"""The ``_meta`` key of a tool call's request that carries ``ctx.idempotency_key``."""

McpToolFilter: TypeAlias = Sequence[str] | Callable[[mcp_types.Tool], bool]
"""Which listed tools an agent gets: their names, or a predicate over the listed tool."""

McpConfirmation: TypeAlias = (
    bool | ConfirmationPredicate | Mapping[str, bool | ConfirmationPredicate]
)
"""Approval before a call: for every tool, per call (a predicate), or per tool name."""

_log = logging.getLogger(__name__)
# The function-name rule of the model API (see tools.py); MCP allows more characters.
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")


class McpServerError(AdkRunError):
    """An MCP server cannot list or run tools; the message names the server.

    Args:
        server: The server's label (its command or URL).
        message: What went wrong.
        retryable: ``False`` when retrying cannot help (the server refused the listing).
    """

    def __init__(self, server: str, message: str, *, retryable: bool = True) -> None:
        super().__init__(f"MCP server {server}: {message}")
        self.server = server
        self.retryable = retryable


class McpListingError(McpServerError):
    """An MCP server's tool listing cannot be used, so no retry can help; the message names
    the tools (a schema that cannot be parsed, two tools under one name) or the refusal.

    Args:
        server: The server's label (its command or URL).
        message: What is wrong with the listing.
    """

    def __init__(self, server: str, message: str) -> None:
        super().__init__(server, message, retryable=False)


@dataclass(frozen=True)
class _ServerConfig:
    """What identifies a server connection; equal configs share one pooled connection."""

    command: str | None
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str | None
    url: str | None
    headers: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        if self.url is not None:
            return self.url
        return " ".join([self.command or "", *self.args])


class McpToolset(BaseToolset):
    """The tools of one MCP server, offered to an agent next to its function tools.

    Give either ``command`` (a stdio server the worker starts) or ``url`` (a streamable
    HTTP server). The activity options apply to every tool's ``adk_tool_call``.

    Args:
        command: The executable of a stdio server.
        args: Its arguments.
        env: Extra environment variables for it (over the SDK's safe defaults).
        cwd: Its working directory.
        url: The endpoint of a streamable HTTP server.
        headers: HTTP headers for every request (authentication, say).
        name: Names the toolset in messages; the command or URL when ``None``.
        tool_filter: Tool names to offer, or a predicate over the listed tool; all when
            ``None``.
        require_confirmation: ``True`` to approve every call, a predicate over a call's
            arguments, or a mapping from tool name to either (tools not named need none).
        tool_name_prefix: Put before each tool's name as the model sees it (characters the
            model API does not allow in names become ``_``).
        list_ttl_seconds: How long a listing is reused before the server is asked again.
        idle_seconds: How long an unused connection stays open.
        call_timeout_seconds: How long one request may wait for the server's answer.
        start_to_close_timeout: The tool activities' start-to-close timeout.
        retry_policy: A ``temporalio.common.RetryPolicy`` for the tool activities.
        heartbeat_timeout: The tool activities' heartbeat timeout.
        on_failure: What a call that failed on every attempt does (see ``FunctionTool``).
        clock: Seconds for the listing's time-to-live (tests inject one).

    Raises:
        ValueError: Neither or both of ``command`` and ``url`` are given.
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        tool_filter: McpToolFilter | None = None,
        require_confirmation: McpConfirmation = False,
        tool_name_prefix: str = "",
        list_ttl_seconds: float = 60.0,
        idle_seconds: float = 300.0,
        call_timeout_seconds: float | None = 300.0,
        start_to_close_timeout: timedelta | None = None,
        retry_policy: RetryPolicyLike | None = None,
        heartbeat_timeout: timedelta | None = None,
        on_failure: OnFailure = "tell_model",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("McpToolset needs exactly one of command= (stdio) or url= (HTTP)")
        self.config = _ServerConfig(
            command=command,
            args=tuple(args),
            env=tuple(sorted((env or {}).items())),
            cwd=cwd,
            url=url,
            headers=tuple(sorted((headers or {}).items())),
        )
        self.name = name or self.config.label
        self.tool_filter = tool_filter
        self.require_confirmation = require_confirmation
        self.tool_name_prefix = tool_name_prefix
        self.list_ttl_seconds = list_ttl_seconds
        self.idle_seconds = idle_seconds
        self.call_timeout_seconds = call_timeout_seconds
        self.start_to_close_timeout = start_to_close_timeout
        self.retry_policy = retry_policy
        self.heartbeat_timeout = heartbeat_timeout
        self.on_failure: OnFailure = on_failure
        self._clock = clock
        self._listed: tuple[float, list[McpTool]] | None = None

    def __repr__(self) -> str:
        return f"McpToolset({self.name!r})"

    def offers(self, tool: mcp_types.Tool) -> bool:
        """Whether the filter lets the agent have ``tool``."""
        if self.tool_filter is None:
            return True
        if callable(self.tool_filter):
            return bool(self.tool_filter(tool))
        return tool.name in self.tool_filter

    def confirmation_for(self, tool_name: str) -> bool | ConfirmationPredicate:
        """The ``require_confirmation`` of the tool the server calls ``tool_name``."""
        rule = self.require_confirmation
        if isinstance(rule, Mapping):
            return rule.get(tool_name, False)
        return rule

    async def get_tools(self) -> list[FunctionTool]:
        """The server's tools that pass the filter, listed at most once per TTL.

        Raises:
            McpServerError: The server cannot be reached (retryable).
            McpListingError: The server refused to list, a tool's schema cannot be parsed,
                or two offered tools reach the model under one name (non-retryable).
        """
        now = self._clock()
        if self._listed is not None and now < self._listed[0]:
            return list(self._listed[1])
        listed = await _POOL.list_tools(self.config, self.idle_seconds, self.call_timeout_seconds)
        tools = [McpTool(self, t) for t in listed if self.offers(t)]
        _refuse_collisions(self.config.label, tools)
        self._listed = (now + self.list_ttl_seconds, tools)
        return list(tools)

    def forget_listing(self) -> None:
        """Drop the cached listing, so the next step asks the server again."""
        self._listed = None

    async def close(self) -> None:
        """Close this server's pooled connection (on the running event loop)."""
        self._listed = None
        await _POOL.close(self.config)


class McpTool(FunctionTool):
    """One listed tool of an :class:`McpToolset`, callable like a function tool.

    The server validates the arguments (against the schema the model was given); the
    arguments are passed through as the model sent them.

    Args:
        toolset: The toolset that listed it.
        listed: The tool as the server listed it.
    """

    def __init__(self, toolset: McpToolset, listed: mcp_types.Tool) -> None:
        # FunctionTool's constructor reads a Python signature; a listed tool has a JSON
        # schema instead, so the attributes the runtime reads are set here.
        self.toolset = toolset
        self.mcp_name = listed.name
        declared = _INVALID_NAME_CHARS.sub("_", toolset.tool_name_prefix + listed.name)[:64]
        self.name = declared if re.match(r"[A-Za-z_]", declared) else f"_{declared}"[:64]
        self.description = listed.description or listed.title or ""
        self.input_schema: dict[str, Any] = dict(listed.input_schema)
        self.require_confirmation = toolset.confirmation_for(listed.name)
        self.start_to_close_timeout = toolset.start_to_close_timeout
        self.retry_policy = toolset.retry_policy
        self.heartbeat_timeout = toolset.heartbeat_timeout
        self.on_failure = toolset.on_failure
        self.context_param = None
        self.func = self._not_a_function
        self._is_async = True

    def _not_a_function(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"MCP tool {self.name} runs through its server, not as a function")

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, server={self.toolset.name!r})"

    def parameters_schema(self) -> dict[str, Any] | None:
        """The input schema the server listed, or ``None`` when it takes no properties."""
        if not self.input_schema.get("properties"):
            return None
        return self.input_schema

    def validate_args(self, args: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments as sent: the server checks them against its own schema."""
        return dict(args or {})

    async def run(self, args: Mapping[str, Any] | None, ctx: Any) -> dict[str, Any]:
        """Call the tool on its server with the call's idempotency key in ``_meta``.

        Args:
            args: The call's arguments as the model sent them.
            ctx: The ``ToolContext``; its ``idempotency_key`` goes to the server.

        Returns:
            The result as a dict (see :func:`convert_result`).

        Raises:
            McpServerError: The server is unreachable or died during the call (retryable).
        """
        key = getattr(ctx, "idempotency_key", None)
        meta = (
            cast(mcp_types.RequestParamsMeta, {IDEMPOTENCY_META_KEY: key})
            if isinstance(key, str)
            else None
        )
        toolset = self.toolset
        try:
            result = await _POOL.call_tool(
                toolset.config,
                toolset.idle_seconds,
                toolset.call_timeout_seconds,
                self.mcp_name,
                dict(args or {}),
                meta,
            )
        except _ToolRefused as refused:
            # The server's listing changed under us (a removed tool, say): list afresh next
            # step, and tell the model now rather than fail the invocation.
            toolset.forget_listing()
            return {"error": f"MCP tool {self.name} failed: {refused}"}
        response = convert_result(result)
        if "error" in response and result.is_error:
            toolset.forget_listing()
            response["error"] = f"MCP tool {self.name}: {response['error']}"
        return response


def convert_result(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """The function response the model sees for an MCP tool result.

    Args:
        result: What the server answered.

    Returns:
        ``{"error": text}`` for a result with ``isError``; the structured content when it
        is a dict (wrapped as ``{"result": value}`` when not); otherwise the text parts
        joined as ``{"result": text}``, and other content (images, resources) as
        ``{"content": [...]}`` in MCP's JSON form.
    """
    texts = [c.text for c in result.content if isinstance(c, mcp_types.TextContent)]
    others = [
        c.model_dump(mode="json", by_alias=True, exclude_none=True)
        for c in result.content
        if not isinstance(c, mcp_types.TextContent)
    ]
    if result.is_error:
        return {"error": "\n".join(texts) or "the tool reported an error"}
    if result.structured_content is not None:
        structured: Any = result.structured_content
        return dict(structured) if isinstance(structured, dict) else {"result": structured}
    response: dict[str, Any] = {}
    if texts or not others:
        response["result"] = "\n".join(texts)
    if others:
        response["content"] = others
    return response


def _refuse_collisions(server: str, tools: Sequence[McpTool]) -> None:
    """Refuse tools that reach the model under one name: a call would run only one of them."""
    by_name: dict[str, list[str]] = {}
    for tool in tools:
        by_name.setdefault(tool.name, []).append(tool.mcp_name)
    for name, listed in by_name.items():
        if len(listed) > 1:
            raise McpListingError(
                server,
                f"tools {' and '.join(map(repr, listed))} "
                f"{'both' if len(listed) == 2 else 'all'} reach the model as {name!r} "
                "(names keep only letters, digits and _.:-); rename one on the server, or "
                "leave all but one out with tool_filter",
            )


class _ToolRefused(Exception):
    """The server answered a call with a protocol error (unknown tool, bad arguments)."""


_TransportStreams: TypeAlias = tuple[ReadStream[SessionMessage | Exception], Any]


class _WatchedStream:
    """A transport's read stream that shows each item to ``watch`` before the SDK reads it.

    The SDK drops an answer it cannot parse (the request then waits for its timeout) and
    reports a listing it cannot validate without the tool's name; the raw item seen here
    names the tool, and lets the listing fail as soon as the answer arrives.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        watch: Callable[[SessionMessage | Exception], None],
    ) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> Any:
        # The dispatcher reads the sender's context from the stream it iterates.
        return getattr(self._inner, "last_context", None)

    def _seen(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        try:
            self._watch(item)
        except Exception:  # a watcher must never break the SDK's read loop
            _log.debug("MCP stream watcher failed", exc_info=True)
        return item

    async def receive(self) -> SessionMessage | Exception:
        return self._seen(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return self._seen(await self._inner.__anext__())

    async def __aenter__(self) -> _WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


@contextlib.asynccontextmanager
async def _watched(
    transport: Transport, watch: Callable[[SessionMessage | Exception], None]
) -> AsyncIterator[_TransportStreams]:
    async with transport as (read, write):
        yield _WatchedStream(read, watch), write


def _unparsed_text(item: SessionMessage | Exception) -> str | None:
    # The stdio transport hands over a line it could not parse inside the parse error.
    if isinstance(item, pydantic.ValidationError):
        for detail in item.errors():
            text = detail.get("input")
            if detail["type"] == "json_invalid" and isinstance(text, str | bytes):
                return text.decode(errors="replace") if isinstance(text, bytes) else text
    return None


def _undecodable(item: SessionMessage | Exception) -> bool:
    """Whether ``item`` is a line the SDK could not parse and Python's parser cannot either."""
    text = _unparsed_text(item)
    if text is None:
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return True
    return False


def _validation_summary(err: pydantic.ValidationError) -> str:
    parts = [
        f"{'.'.join(map(str, e['loc']))}: {e['msg']}" if e["loc"] else e["msg"]
        for e in err.errors()[:3]
    ]
    return "; ".join(parts)[:300]


def _tool_problem(raw: Any, *, as_json: bool) -> str | None:
    """Why the SDK cannot take ``raw`` as a listed tool; ``None`` when it can."""
    try:
        if as_json:
            # The depth of the message the transport refused: the tool in its envelope.
            envelope = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"tools": [raw]}})
            mcp_types.jsonrpc_message_adapter.validate_json(envelope, by_name=False)
        mcp_types.Tool.model_validate(raw, by_name=False)
    except pydantic.ValidationError as err:
        return _validation_summary(err)
    except (ValueError, RecursionError) as err:
        return type(err).__name__
    return None


def _listing_fault(item: SessionMessage | Exception) -> str | None:
    """Why ``item`` is a tool listing that cannot be used, naming the tools; ``None`` when
    it is a usable listing or no listing at all."""
    result: Any = None
    as_json = False
    if isinstance(item, SessionMessage):
        if isinstance(item.message, mcp_types.JSONRPCResponse):
            result = item.message.result
    elif (text := _unparsed_text(item)) is not None:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return None
        result = message.get("result") if isinstance(message, dict) else None
        as_json = True
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
        return None
    bad = []
    for index, raw in enumerate(result["tools"]):
        if (problem := _tool_problem(raw, as_json=as_json)) is not None:
            name = raw.get("name") if isinstance(raw, dict) else None
            label = repr(name) if isinstance(name, str) else f"#{index + 1}"
            bad.append(f"tool {label} ({problem})")
    if bad:
        return f"{', '.join(bad)} cannot be parsed"
    # Only the whole message failed to parse: the tools are fine one by one.
    return "the listing cannot be parsed" if as_json else None


# Protocol error codes that mean the connection, not the request, failed.
_TRANSPORT_CODES = frozenset({mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT})


class _Connection:
    """One open client session, held by a task of its own.

    The SDK's client lives in anyio task groups that must be entered and left by the same
    task; activities come and go in tasks of their own, so a holder task owns the client
    and activities only send requests through it.
    """

    def __init__(self, config: _ServerConfig, idle_seconds: float) -> None:
        self.config = config
        self.idle_seconds = idle_seconds
        self.in_use = 0
        self.last_used = time.monotonic()
        self.broken = False
        self.listings = 0
        """Listings in flight, waiting for :attr:`unusable_listing`."""
        self.unusable_listing: str | None = None
        """Why the last unusable listing the server sent cannot be used (the connection is
        dropped once a listing fails)."""
        self._listing_refused = asyncio.Event()
        self._ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(), name=f"mcp {config.label}")

    async def client(self) -> Client:
        return await asyncio.shield(self._ready)

    def _watch(self, item: SessionMessage | Exception) -> None:
        reason = _listing_fault(item)
        if isinstance(item, SessionMessage):
            # The SDK refuses this answer itself, at once; the reason only names the tools.
            self.unusable_listing = reason or self.unusable_listing
            return
        if reason is None and self.listings and _undecodable(item):
            # Not even Python's parser reads it, so it cannot be told apart: while a
            # listing waits, it is taken for the listing's answer rather than waited out.
            reason = "the server sent a message that cannot be parsed"
        if reason is not None:
            # The SDK drops this answer: without this, its listing waits for the timeout.
            self.unusable_listing = reason
            self._listing_refused.set()

    async def listing(
        self, request: Awaitable[mcp_types.ListToolsResult]
    ) -> mcp_types.ListToolsResult:
        """The page ``request`` lists, or :class:`McpListingError` once the server's answer
        shows the listing cannot be used.

        Raises:
            McpListingError: The answer cannot be parsed or validated.
        """
        self.listings += 1
        page = asyncio.ensure_future(request)
        refused = asyncio.ensure_future(self._listing_refused.wait())
        try:
            await asyncio.wait({page, refused}, return_when=asyncio.FIRST_COMPLETED)
            if page.done():
                return page.result()
        except pydantic.ValidationError as err:
            reason = self.unusable_listing or _validation_summary(err)
            raise McpListingError(self.config.label, f"cannot list tools: {reason}") from None
        finally:
            self.listings -= 1
            page.cancel()
            refused.cancel()
        raise McpListingError(self.config.label, f"cannot list tools: {self.unusable_listing}")

    async def _hold(self) -> None:
        http: httpx2.AsyncClient | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                config = self.config
                if config.url is not None:
                    http = create_mcp_http_client(headers=dict(config.headers))
                    await stack.enter_async_context(http)
                    transport: Transport = streamable_http_client(config.url, http_client=http)
                else:
                    params = StdioServerParameters(
                        command=config.command or "",
                        args=list(config.args),
                        env=dict(config.env) or None,
                        cwd=config.cwd,
                    )
                    transport = stdio_client(params)
                # cache=None: listings are cached by the toolset, with its own TTL.
                watched = _watched(transport, self._watch)
                client = await stack.enter_async_context(Client(watched, cache=None))
                self._ready.set_result(client)
                await self._idle_watch()
        except BaseException as err:  # handed to whoever waits for the client, then re-raised
            if not self._ready.done():
                self._ready.set_exception(err if isinstance(err, Exception) else ConnectionError())
            if isinstance(err, asyncio.CancelledError):
                raise
            _log.debug("MCP connection to %s ended: %r", self.config.label, err)
        finally:
            self.broken = True
            if not self._ready.done():
                self._ready.set_exception(ConnectionError("connection closed"))

    async def _idle_watch(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=self.idle_seconds)
            if self.in_use == 0 and time.monotonic() - self.last_used >= self.idle_seconds:
                # Marked before the client shuts down, so no lease is handed a closing one.
                self.broken = True
                return

    async def close(self) -> None:
        self.broken = True
        self._stop.set()
        # A holder stuck in the transport's shutdown must not hang the caller for ever.
        with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout=10)
        if not self._task.done():
            self._task.cancel()


class _Pool:
    """The worker's open MCP connections, by event loop and server configuration."""

    def __init__(self) -> None:
        self._open: dict[tuple[int, _ServerConfig], _Connection] = {}
        # Closing connections, referenced until closed: a bare task may be collected mid-close.
        self._closing: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def _lease(
        self, config: _ServerConfig, idle_seconds: float
    ) -> AsyncIterator[tuple[Client, _Connection]]:
        key = (id(asyncio.get_running_loop()), config)
        conn = self._open.get(key)
        if conn is None or conn.broken:
            conn = self._open[key] = _Connection(config, idle_seconds)
        conn.in_use += 1
        try:
            client = await conn.client()
        except Exception as err:
            conn.in_use -= 1
            self._drop(key, conn)
            raise McpServerError(config.label, f"cannot connect: {_describe(err)}") from err
        try:
            yield client, conn
        except (MCPError, _ToolRefused):
            raise
        except Exception:
            # The transport failed (the server died mid-request): the next lease reconnects.
            self._drop(key, conn)
            raise
        finally:
            conn.in_use -= 1
            conn.last_used = time.monotonic()

    def _drop(self, key: tuple[int, _ServerConfig], conn: _Connection) -> None:
        if self._open.get(key) is conn:
            del self._open[key]
        conn.broken = True
        closing = asyncio.get_running_loop().create_task(conn.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def list_tools(
        self, config: _ServerConfig, idle_seconds: float, timeout: float | None
    ) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        try:
            async with self._lease(config, idle_seconds) as (client, conn):
                cursor: str | None = None
                while True:
                    async with asyncio.timeout(timeout):
                        page = await conn.listing(client.list_tools(cursor=cursor))
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        return tools
        except McpServerError:
            raise
        except MCPError as err:
            self._forget(config)
            if err.code in _TRANSPORT_CODES:
                raise McpServerError(config.label, f"cannot list tools: {err}") from err
            # A refusal, or an answer the transport could not parse (HTTP): final.
            raise McpListingError(config.label, f"cannot list tools: {_refusal(err)}") from err
        except Exception as err:
            raise McpServerError(config.label, f"cannot list tools: {_describe(err)}") from err

    async def call_tool(
        self,
        config: _ServerConfig,
        idle_seconds: float,
        timeout: float | None,
        name: str,
        args: dict[str, Any],
        meta: mcp_types.RequestParamsMeta | None,
    ) -> mcp_types.CallToolResult:
        try:
            async with self._lease(config, idle_seconds) as (client, _):
                try:
                    async with asyncio.timeout(timeout):
                        return await client.call_tool(name, args, meta=meta)
                except MCPError as err:
                    if err.code in _TRANSPORT_CODES:
                        raise ConnectionError(str(err)) from err
                    raise _ToolRefused(str(err)) from err
        except (McpServerError, _ToolRefused):
            raise
        except Exception as err:
            raise McpServerError(
                config.label, f"call to tool {name} failed: {_describe(err)}"
            ) from err

    def _forget(self, config: _ServerConfig) -> None:
        key = (id(asyncio.get_running_loop()), config)
        conn = self._open.get(key)
        if conn is not None:
            self._drop(key, conn)

    async def close(self, config: _ServerConfig | None = None) -> None:
        loop = id(asyncio.get_running_loop())
        closing = [
            (key, conn)
            for key, conn in self._open.items()
            if key[0] == loop and (config is None or key[1] == config)
        ]
        for key, _ in closing:
            del self._open[key]
        await asyncio.gather(*(conn.close() for _, conn in closing))


_POOL = _Pool()


async def close_connections() -> None:
    """Close every pooled MCP connection of the running event loop (at worker shutdown)."""
    await _POOL.close()


def _refusal(err: MCPError) -> str:
    lines = str(err).splitlines() or [type(err).__name__]
    if err.code != mcp_types.PARSE_ERROR:
        return lines[0][:300]
    # The parser's verdict, without the excerpt of the server's answer pydantic appends.
    detail = next((line.strip() for line in lines if "Invalid JSON" in line), lines[0])
    return f"the server's answer cannot be parsed ({detail.split(' [type=')[0][:300]})"


def _describe(err: BaseException) -> str:
    # Task groups wrap the cause; the innermost message is the one an operator can act on.
    while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
