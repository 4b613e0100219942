"""An ``adk-temporal web`` subprocess on a free loopback port, and a small HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_temporal.ports import free_port

from .. import web_app
from .workers import REPO, Deployment

TOKEN = "t-weather-0123456789abcdef"
"""May use app ``weather``."""
OTHER_TOKEN = "t-other-0123456789abcdef"
"""May use app ``other`` only."""
LINK_SECRET = "link-secret-for-the-tests"
SECRET_ENV = web_app.SECRET_ENV
CORS_ORIGIN = "https://tickets.example.com"
"""The one other site whose pages may call the gateway's API."""


def _lower(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


@dataclass
class Reply:
    """An HTTP reply: status, headers (names in lower case), body (JSON when it is)."""

    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.text)


@dataclass
class Gateway:
    """A running gateway."""

    base: str
    process: subprocess.Popen[str]
    log: Path
    """Everything the gateway printed, its access log included."""

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = TOKEN,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Reply:
        """Send one request (blocking: tests run it in a thread)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token:
            sent["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return Reply(reply.status, _lower(reply.headers.items()), reply.read().decode())
        except urllib.error.HTTPError as err:
            return Reply(err.code, _lower(err.headers.items()), err.read().decode())

    def oversized(self, path: str, *, declared: int | None, chunks: Iterable[bytes] = ()) -> Reply:
        """POST a body the gateway must refuse: a ``Content-Length`` of ``declared`` with
        nothing sent, or (``declared=None``) ``chunks`` in chunked encoding, which only the
        byte count can stop.

        Every byte sent is one the gateway reads before it answers, so it never closes the
        connection on unread data (a reset would lose the reply).
        """
        host, port = self.base.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            conn.putrequest("POST", path)
            conn.putheader("Authorization", f"Bearer {TOKEN}")
            conn.putheader("Content-Type", "application/json")
            if declared is not None:
                conn.putheader("Content-Length", str(declared))
                conn.endheaders()
            else:
                conn.putheader("Transfer-Encoding", "chunked")
                conn.endheaders()
                for chunk in chunks:
                    conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                conn.send(b"0\r\n\r\n")
            reply = conn.getresponse()
            return Reply(reply.status, _lower(reply.getheaders()), reply.read().decode())
        finally:
            conn.close()

    def sse(
        self,
        path: str,
        token: str = TOKEN,
        comments: list[str] | None = None,
        last_event_id: str | None = None,
    ) -> list[tuple[str, Any]]:
        """Read a server-sent event stream to its ``end`` event: ``(event, data)`` pairs;
        comment lines are added to ``comments`` as they arrive. ``last_event_id`` is sent as
        a reconnecting browser sends it."""
        headers = {"Authorization": f"Bearer {token}"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        request = urllib.request.Request(self.base + path, headers=headers)
        frames: list[tuple[str, Any]] = []
        with urllib.request.urlopen(request, timeout=60) as reply:
            assert reply.headers["Content-Type"].startswith("text/event-stream")
            name = ""
            for raw in reply:
                line = raw.decode().rstrip("\n")
                if line.startswith(":") and comments is not None:
                    comments.append(line)
                elif line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    frames.append((name, json.loads(line.removeprefix("data: "))))
                    if name == "end":
                        return frames
        return frames


@contextmanager
def gateway_process(
    deployment: Deployment,
    tmp: Path,
    *,
    console: bool = False,
    app: str | None = None,
    args: Sequence[str] = (),
    tokens_lines: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Gateway]:
    """``adk-temporal web`` for the examples app (or ``app``, ``module:attribute``) on
    ``deployment``, with more options ``args``, more lines of the tokens file
    ``tokens_lines`` and more environment ``env``, until the block ends."""
    tokens = tmp / "tokens.txt"
    more = "".join(f"{line}\n" for line in tokens_lines)
    tokens.write_text(f"# tests\n{TOKEN} weather\n{OTHER_TOKEN} other\n{more}")
    port = free_port()
    log = tmp / "gateway.log"
    # A file, not a pipe: an unread pipe fills up and stalls the server's logging.
    output = log.open("w")
    process = subprocess.Popen(
        deployment.command(
            "web",
            *(["--app", app] if app else ["--examples"]),
            *args,
            "--port",
            str(port),
            "--tokens-file",
            str(tokens),
            # Long enough for a worker on a loaded machine to take the update; the cases
            # without a worker wait it out once each.
            "--answer-wait",
            "5",
            "--sse-keepalive",
            "0.2",
            "--cors-origin",
            CORS_ORIGIN,
            "--link-secret-env",
            SECRET_ENV,
            "--console" if console else "--no-console",
        ),
        env={**os.environ, SECRET_ENV: LINK_SECRET, **(env or {})},
        cwd=REPO,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
    )
    gateway = Gateway(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if gateway.call("GET", "/openapi.json", token=None).status == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"the gateway did not start: {log.read_text()}")
            time.sleep(0.1)
        yield gateway
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()
