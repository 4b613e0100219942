"""``FakeGeminiServer``: a real local HTTP server that answers like the Gemini API.

Point a google-genai client at :attr:`FakeGeminiServer.base_url` (``HttpOptions(base_url=...)``)
and it calls ``POST /<version>/models/<model>:generateContent`` or
``:streamGenerateContent?alt=sse`` here; any API version and any prefix before ``models/``
(a Vertex AI path too) is accepted. Replies come from a queue the test fills; every request is
recorded, with the API key removed, for assertions.

A streamed reply is written one SSE event at a time, each sent as soon as it is written, with
an optional pause between events and an optional gate before the last one, so a test can
see a first chunk arrive while the server still holds the rest (:attr:`events_sent` counts
what went out, each event before a client can read it; :attr:`sent_at` says when).

The server runs in its own thread, so it serves sync and async tests alike. An empty queue is
answered with HTTP 500 and a message saying so, which makes a test's missing reply obvious —
unless a default reply is set (:meth:`FakeGeminiServer.answer_by_default`). Like the real API
it can refuse traffic with 429 and ``Retry-After``: over a rate (:meth:`limit_rate`), or on
the first request of each conversation (:meth:`refuse_first`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from adk_temporal.background_http import BackgroundServer

__all__ = ["FakeGeminiServer", "RecordedRequest"]

_ENDPOINT = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization"})
_SECRET_QUERY_PARAMS = frozenset({"key"})
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake server received, credentials removed."""

    method: str
    path: str
    model: str
    stream: bool
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = 0.0
    """When it arrived (``time.time()``)."""
    status: int = 0
    """The status it was answered with (0 while it is being answered)."""


@dataclass(frozen=True)
class _Reply:
    status: int
    # One body for generateContent; for a stream, one SSE event per chunk.
    chunks: list[dict[str, Any]]
    delay: float = 0.0
    # Streams only: the pause between two events, and an event set by the test before
    # the last event may go out.
    event_delay: float = 0.0
    hold_last: threading.Event | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    replies: deque[_Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    sent_at: list[float] = field(default_factory=list)
    default: _Reply | None = None
    rate: tuple[float, float | None] | None = None
    """(requests per second, Retry-After seconds) of :meth:`FakeGeminiServer.limit_rate`."""
    accepted_at: deque[float] = field(default_factory=deque)
    first: tuple[Callable[[dict[str, Any]], str], float] | None = None
    seen_keys: set[str] = field(default_factory=set)

    def refusal(self, body: dict[str, Any], now: float) -> _Reply | None:
        """The 429 a rate or first-request rule answers this request with (under the lock)."""
        if self.first is not None:
            key_of, first_wait = self.first
            key = key_of(body)
            if key not in self.seen_keys:
                self.seen_keys.add(key)
                return _too_many(f"first request of {key!r} refused", first_wait)
        if self.rate is not None:
            per_second, wait = self.rate
            while self.accepted_at and self.accepted_at[0] <= now - 1.0:
                self.accepted_at.popleft()
            if len(self.accepted_at) >= per_second:
                return _too_many(f"quota of {per_second:g} requests per second exceeded", wait)
            self.accepted_at.append(now)
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        # Test output should show assertions, not an access log.
        pass

    def do_POST(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        query = [(k, v) for k, v in parse_qsl(url.query) if k not in _SECRET_QUERY_PARAMS]
        path = url.path + (f"?{urlencode(query)}" if query else "")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        endpoint = _ENDPOINT.search(url.path)
        if endpoint is None:
            self._send_json(404, _error_body(404, f"FakeGeminiServer does not serve {path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        stream = endpoint["method"] == "streamGenerateContent"
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    method="POST",
                    path=path,
                    model=endpoint["model"],
                    stream=stream,
                    headers={
                        k.lower(): v
                        for k, v in self.headers.items()
                        if k.lower() not in _SECRET_HEADERS
                    },
                    body=body,
                    received_at=time.time(),
                )
            )
            number = len(state.requests)
            reply = state.refusal(body, time.time())
            if reply is None:
                reply = state.replies.popleft() if state.replies else state.default
            if reply is not None:
                state.requests[-1] = replace(state.requests[-1], status=reply.status)
        if reply is None:
            message = (
                f"FakeGeminiServer has no scripted reply left for request #{number} "
                f"(POST {path}); enqueue one before calling the model"
            )
            self._send_json(500, _error_body(500, message))
            return
        # Waiting on the stop event lets stop() end a delayed reply at once.
        if reply.delay and state.stopping.wait(reply.delay):
            return
        try:
            if stream and reply.status == 200:
                self._send_sse(reply)
            else:
                self._send_json(reply.status, reply.chunks[0], reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # The client gave up (a timeout test); nothing is left to answer.

    def _send_json(
        self, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_sse(self, reply: _Reply) -> None:
        state = self.server.state
        events = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in reply.chunks]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(len(e) for e in events)))
        self.end_headers()
        for number, event in enumerate(events):
            if number and reply.event_delay and state.stopping.wait(reply.event_delay):
                return
            if number == len(events) - 1 and reply.hold_last is not None:
                # Polls so that stop() still ends a stream whose gate the test never opened.
                while not reply.hold_last.wait(0.05):
                    if state.stopping.is_set():
                        return
            # Counted before it is written: once written, the client may read it and
            # finish before this thread runs again (under load it did, and a test read
            # two events sent of three received).
            with state.lock:
                state.sent_at.append(time.perf_counter())
            self.wfile.write(event)
            # Sent now rather than with the next write, so the client can read this chunk
            # while the server still holds the rest.
            self.wfile.flush()


def _error_body(status: int, message: str, status_name: str | None = None) -> dict[str, Any]:
    name = status_name or _STATUS_NAMES.get(status, "UNKNOWN")
    return {"error": {"code": status, "message": message, "status": name}}


def _too_many(message: str, retry_after: float | None) -> _Reply:
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return _Reply(status=429, chunks=[_error_body(429, message)], headers=headers)


def _candidate_body(
    parts: list[dict[str, Any]], finish_reason: str, usage: tuple[int, int] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": finish_reason}
        ]
    }
    if usage is not None:
        prompt, candidates = usage
        body["usageMetadata"] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": candidates,
            "totalTokenCount": prompt + candidates,
        }
    return body


class FakeGeminiServer:
    """A Gemini-API look-alike on a free loopback port, replying from a scripted queue.

    Use it as a context manager (``with FakeGeminiServer() as server:``) or call
    :meth:`start` and :meth:`stop`.

    Args:
        host: The loopback address to bind.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._host = host
        self._state = _State()
        self._serving: BackgroundServer | None = None

    def start(self) -> FakeGeminiServer:
        """Bind a free port and serve in a background thread; returns ``self``.

        Raises:
            RuntimeError: The server is already running.
        """
        if self._serving is not None:
            raise RuntimeError("FakeGeminiServer is already running")
        self._state.stopping.clear()
        self._serving = BackgroundServer(_Server((self._host, 0), self._state), "fake-gemini")
        self._serving.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; a no-op when not running."""
        if self._serving is None:
            return
        self._state.stopping.set()
        self._serving.stop()
        self._serving = None

    def __enter__(self) -> FakeGeminiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port.

        Raises:
            RuntimeError: The server is not running.
        """
        if self._serving is None:
            raise RuntimeError("FakeGeminiServer is not running; call start() first")
        return self._serving.port

    @property
    def base_url(self) -> str:
        """``http://<host>:<port>``, for ``HttpOptions(base_url=...)``."""
        return f"http://{self._host}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def events_sent(self) -> int:
        """How many SSE events all streamed replies have written so far; an event counts
        before it is written, so a client that read it always finds it counted."""
        with self._state.lock:
            return len(self._state.sent_at)

    @property
    def sent_at(self) -> list[float]:
        """When each SSE event went out (``time.perf_counter()``), oldest first."""
        with self._state.lock:
            return list(self._state.sent_at)

    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._state.lock:
            return len(self._state.replies)

    def enqueue_response(
        self, body: Mapping[str, Any], *, status: int = 200, delay: float = 0.0
    ) -> None:
        """Queue a raw reply body (a ``GenerateContentResponse`` in its JSON form).

        Args:
            body: The JSON body; sent as the single SSE event on a streaming call.
            status: The HTTP status.
            delay: Seconds to wait before answering (to exercise client timeouts).
        """
        self._push(_Reply(status=status, chunks=[dict(body)], delay=delay))

    def enqueue_stream(
        self,
        chunks: Sequence[Mapping[str, Any]],
        *,
        delay_seconds: float = 0.0,
        hold_last: threading.Event | None = None,
    ) -> None:
        """Queue a streaming reply: one ``data:`` event per chunk (a non-streaming call gets
        the first chunk).

        Args:
            chunks: The events' JSON bodies, in order; an ``{"error": ...}`` body makes the
                client raise at that point of the stream.
            delay_seconds: The pause between two events.
            hold_last: When given, the last event is sent only once the test sets it.

        Raises:
            ValueError: ``chunks`` is empty.
        """
        if not chunks:
            raise ValueError("a streamed reply needs at least one chunk")
        self._push(
            _Reply(
                status=200,
                chunks=[dict(c) for c in chunks],
                event_delay=delay_seconds,
                hold_last=hold_last,
            )
        )

    def enqueue_text_stream(
        self,
        text: str,
        *,
        chunk_chars: int,
        delay_seconds: float = 0.0,
        usage: tuple[int, int] | None = None,
        finish_reason: str = "STOP",
        hold_last: threading.Event | None = None,
    ) -> None:
        """Queue a streamed text reply, ``chunk_chars`` characters per SSE event.

        The last event carries ``finish_reason`` and ``usage`` as the API's last chunk does;
        a non-streaming call gets only the first piece.

        Args:
            text: The whole reply; must not be empty.
            chunk_chars: Characters per event.
            delay_seconds: The pause between two events.
            usage: (prompt, candidates) tokens to report in the last event.
            finish_reason: The last event's ``finishReason``.
            hold_last: When given, the last event is sent only once the test sets it.

        Raises:
            ValueError: ``text`` is empty or ``chunk_chars`` is below 1.
        """
        if not text or chunk_chars < 1:
            raise ValueError(
                f"enqueue_text_stream needs text and chunk_chars >= 1, got {len(text)} "
                f"characters and chunk_chars={chunk_chars}"
            )
        pieces = [text[i : i + chunk_chars] for i in range(0, len(text), chunk_chars)]
        chunks = [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}}]}
            for p in pieces[:-1]
        ]
        chunks.append(_candidate_body([{"text": pieces[-1]}], finish_reason, usage))
        self.enqueue_stream(chunks, delay_seconds=delay_seconds, hold_last=hold_last)

    def enqueue_text(
        self, text: str, *, finish_reason: str = "STOP", usage: tuple[int, int] | None = None
    ) -> None:
        """Queue a model reply made of one text part; ``usage`` is (prompt, candidates)
        tokens to report in ``usageMetadata``."""
        self.enqueue_response(_candidate_body([{"text": text}], finish_reason, usage))

    def enqueue_function_call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        usage: tuple[int, int] | None = None,
    ) -> None:
        """Queue a model reply with one function call (``usage`` as for :meth:`enqueue_text`)."""
        self.enqueue_function_calls([(name, args or {})], usage=usage)

    def enqueue_function_calls(
        self,
        calls: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        usage: tuple[int, int] | None = None,
    ) -> None:
        """Queue a model reply with several (parallel) function calls, in order."""
        parts = [{"functionCall": {"name": n, "args": dict(a)}} for n, a in calls]
        self.enqueue_response(_candidate_body(parts, "STOP", usage))

    def enqueue_error(
        self,
        status: int,
        message: str,
        *,
        status_name: str | None = None,
        retry_after: str | None = None,
        retry_delay: str | None = None,
    ) -> None:
        """Queue an error reply with a Google-style ``{"error": {code, message, status}}`` body.

        Args:
            status: The HTTP status, also the body's ``code``.
            message: The error message.
            status_name: The canonical status (``RESOURCE_EXHAUSTED``…); derived from
                ``status`` when ``None``.
            retry_after: A ``Retry-After`` header value (seconds or an HTTP date).
            retry_delay: A ``google.rpc.RetryInfo`` detail's ``retryDelay`` (``"27s"``).
        """
        body = _error_body(status, message, status_name)
        if retry_delay is not None:
            body["error"]["details"] = [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
            ]
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self._push(_Reply(status=status, chunks=[body], headers=headers))

    def answer_by_default(self, text: str) -> None:
        """Answer every request the queue has no reply for with a text reply."""
        with self._state.lock:
            self._state.default = _Reply(
                status=200, chunks=[_candidate_body([{"text": text}], "STOP")]
            )

    def limit_rate(self, per_second: float, *, retry_after: float | None = 1.0) -> None:
        """Answer 429 (with ``Retry-After``) to requests beyond ``per_second`` in any second.

        Refused requests do not count against the quota, as with the real API.
        """
        with self._state.lock:
            self._state.rate = (per_second, retry_after)

    def refuse_first(self, key: Callable[[dict[str, Any]], str], *, retry_after: float) -> None:
        """Answer 429 + ``Retry-After`` to the first request of each ``key(body)``."""
        with self._state.lock:
            self._state.first = (key, retry_after)

    def _push(self, reply: _Reply) -> None:
        with self._state.lock:
            self._state.replies.append(reply)
