"""The gateway process under hostile use: what its logs show, how many console sessions and
event streams one token may hold, slow readers, and plain HTTP on a public address."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from google.genai import types

from adk_temporal.devserver import DevServer
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.ports import free_port
from adk_temporal.sessions import SqliteSessionService

from .gateway import LINK_SECRET, OTHER_TOKEN, SECRET_ENV, TOKEN, Gateway, Reply
from .workers import REPO, Deployment, worker_process

pytestmark = pytest.mark.integration

SECOND_TOKEN = "t-second-0123456789abcdef"
"""May use app ``weather`` too: another principal of the same app."""
RUNS = "/v1/apps/weather/runs"
USER = "u-limits"


@dataclass
class Served:
    """A gateway process, its access log (stdout) and its stderr apart."""

    gateway: Gateway
    stderr: Path

    def logs(self) -> str:
        """Everything the process printed so far."""
        return self.gateway.log.read_text() + self.stderr.read_text()


@contextmanager
def launched(deployment: Deployment, root: Path, *options: str) -> Iterator[Served]:
    """``adk-temporal web --examples --console OPTIONS`` on a free port (bound as
    ``--host`` in ``options`` says, reached on loopback), until the block ends."""
    root.mkdir(parents=True, exist_ok=True)
    tokens = root / "tokens.txt"
    tokens.write_text(f"{TOKEN} weather\n{SECOND_TOKEN} weather\n{OTHER_TOKEN} other\n")
    port = free_port()
    out, err = root / "stdout.log", root / "stderr.log"
    # Files, not pipes: an unread pipe fills up and stalls the server's logging.
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            deployment.command(
                "web",
                "--examples",
                "--console",
                "--port",
                str(port),
                "--tokens-file",
                str(tokens),
                "--sse-keepalive",
                "0.2",
                "--link-secret-env",
                SECRET_ENV,
                *options,
            ),
            env={**os.environ, SECRET_ENV: LINK_SECRET},
            cwd=REPO,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
        served = Served(Gateway(f"http://127.0.0.1:{port}", process, out), err)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if served.gateway.call("GET", "/openapi.json", token=None).status == 200:
                        break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    raise AssertionError(f"the gateway did not start: {served.logs()}")
                time.sleep(0.1)
            yield served
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory the workers and the gateways share."""
    return Deployment(dev_server.address, "gateway-limits", tmp_path_factory.mktemp("limits"))


@pytest.fixture(scope="module")
def served(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A gateway with the default limits, on loopback."""
    with launched(deployment, tmp_path_factory.mktemp("gateway")) as running:
        yield running


# ---------------------------------------------------------------- HTTP without redirects


@dataclass
class Raw:
    """A reply as sent: status, every header (names in lower case), body."""

    status: int
    headers: list[tuple[str, str]]
    text: str

    def header(self, name: str) -> str | None:
        """The first ``name`` header."""
        return next((v for k, v in self.headers if k == name), None)


def _connection(gateway: Gateway) -> http.client.HTTPConnection:
    host, port = gateway.base.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=60)


def _exchange(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Raw:
    body = None if form is None else urlencode(form)
    sent = dict(headers or {})
    if form is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=sent)
    reply = conn.getresponse()
    return Raw(
        reply.status,
        [(k.lower(), v) for k, v in reply.getheaders()],
        reply.read().decode(),
    )


def _raw(gateway: Gateway, method: str, path: str, **kw: Any) -> Raw:
    """One request on its own connection; redirects are not followed."""
    conn = _connection(gateway)
    try:
        return _exchange(conn, method, path, **kw)
    finally:
        conn.close()


def _session_cookie(reply: Raw) -> str:
    found = re.match(r"adk_console=([^;]+)", reply.header("set-cookie") or "")
    assert found, reply.headers
    return found.group(1)


def _sign_in_form(gateway: Gateway) -> tuple[str, str]:
    """A browser's pre-sign-in cookie and the CSRF token of its sign-in form."""
    page = _raw(gateway, "GET", "/console/sign-in")
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found, page.text
    return _session_cookie(page), found.group(1)


def _sign_in(gateway: Gateway, token: str) -> str:
    """Sign in with ``token`` as a browser does; the signed-in session's cookie."""
    cookie, csrf = _sign_in_form(gateway)
    reply = _raw(
        gateway,
        "POST",
        "/console/sign-in",
        headers={"Cookie": f"adk_console={cookie}"},
        form={"csrf": csrf, "token": token},
    )
    assert reply.status == 303, reply.text
    return _session_cookie(reply)


async def _call(gateway: Gateway, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    return await asyncio.to_thread(gateway.call, method, path, body, **kw)


async def _until(probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll ``probe`` (a coroutine function) until it returns something truthy."""
    async with asyncio.timeout(timeout):
        while not (found := await probe()):
            await asyncio.sleep(0.1)
    return found


async def _start(gateway: Gateway, message: str) -> str:
    reply = await _call(
        gateway, "POST", RUNS, {"agent": "weather_agent", "user_id": USER, "message": message}
    )
    assert reply.status == 201, reply.text
    path: str = reply.json["links"]["self"]
    return path


# ---------------------------------------------------------------- logs


async def test_no_query_value_or_link_token_reaches_the_logs(served: Served) -> None:
    """Values sent in query strings (credential names or not, bare, ``;``-separated, a
    token standing as a name) and link tokens in paths (behind extra slashes, in capitals)
    appear in no line the gateway prints; the query's parameter names do."""
    secret = [f"s3cret{n}-0123456789ab" for n in range(14)]
    asked = [
        (f"{RUNS}?access_token={secret[0]}", TOKEN),
        (f"{RUNS}?token={secret[1]}&limit=5", TOKEN),
        (f"{RUNS}?{secret[2]}", TOKEN),
        (f"{RUNS}?key={secret[3]};sig={secret[4]}", TOKEN),
        (f"{RUNS}?{secret[5]}=", TOKEN),
        (f"{RUNS}?password=x&Authorization=Bearer%20{secret[6]}", None),
        (f"/v1/links/{secret[7]}?x=1", None),
        (f"/v1/links/{secret[8]}/more", None),
        (f"//v1/links//{secret[9]}", None),
        (f"/V1/LINKS/{secret[10]}", None),
        (f"/nowhere?secret={secret[11]}&signature={secret[12]}", None),
    ]
    for path, token in asked:
        await _call(served.gateway, "GET", path, token=token)
    await _call(served.gateway, "POST", f"/v1/links/{secret[13]}?sig=1", token=None)
    logs = served.logs()
    assert [s for s in secret if s in logs] == []
    assert f"GET {RUNS}?access_token=… HTTP/1.1" in logs
    assert f"GET {RUNS}?token=…&limit=… HTTP/1.1" in logs
    assert "POST /v1/links/…?sig=… HTTP/1.1" in logs


# ---------------------------------------------------------------- console sessions


def _flood(gateway: Gateway, token: str, times: int) -> None:
    """Sign in ``times`` times with ``token`` on one kept-alive connection."""
    cookie, csrf = _sign_in_form(gateway)
    conn = _connection(gateway)
    try:
        for _ in range(times):
            reply = _exchange(
                conn,
                "POST",
                "/console/sign-in",
                headers={"Cookie": f"adk_console={cookie}"},
                form={"csrf": csrf, "token": token},
            )
            assert reply.status == 303, reply.text
    finally:
        conn.close()


async def test_another_apps_token_signing_in_10001_times_signs_no_other_browser_out(
    served: Served,
) -> None:
    """A browser signed in with the weather token stays signed in while a token of another
    app signs in 10,001 times, more than the gateway keeps sessions in all."""
    mine = await asyncio.to_thread(_sign_in, served.gateway, TOKEN)
    await asyncio.gather(
        *(asyncio.to_thread(_flood, served.gateway, OTHER_TOKEN, n) for n in (2501,) * 3 + (2498,))
    )
    page = await asyncio.to_thread(
        _raw,
        served.gateway,
        "GET",
        "/console/apps/weather",
        headers={"Cookie": f"adk_console={mine}"},
    )
    assert page.status == 200, (page.status, page.header("location"))
    assert "App weather" in page.text


# ---------------------------------------------------------------- event streams


@dataclass
class _Stream:
    """An event stream whose headers arrived; its body is left unread."""

    conn: http.client.HTTPConnection
    reply: http.client.HTTPResponse

    def close(self) -> None:
        """Hang up, as a closed browser tab does."""
        self.reply.close()
        self.conn.close()


def _open_stream(gateway: Gateway, path: str, headers: dict[str, str]) -> _Stream | Raw:
    """The stream when the gateway serves it, else its refusal."""
    conn = _connection(gateway)
    conn.request("GET", path, headers=headers)
    reply = conn.getresponse()
    if reply.status == 200:
        return _Stream(conn, reply)
    try:
        return Raw(
            reply.status, [(k.lower(), v) for k, v in reply.getheaders()], reply.read().decode()
        )
    finally:
        conn.close()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_event_streams_are_capped_per_token_and_in_all(
    deployment: Deployment, tmp_path: Path
) -> None:
    """With 2 streams per token and 3 in all: the token's third stream, over the API or from
    its console session, is refused with 429, a Retry-After and a JSON error; another token
    takes the last place, then the gateway refuses it too; a hung-up stream frees its place."""
    limits = ("--sse-max-streams", "3", "--sse-max-streams-per-token", "2")
    with launched(deployment, tmp_path / "gateway", *limits) as capped:
        gateway = capped.gateway
        # No worker: the run waits, and its streams stay open with keep-alive comments.
        path = await _start(gateway, "What is the weather in Quito?")
        events = f"{path}/events"
        opened: list[_Stream] = []
        try:
            for _ in range(2):
                stream = await asyncio.to_thread(_open_stream, gateway, events, _bearer(TOKEN))
                assert isinstance(stream, _Stream), stream
                opened.append(stream)
            third = await asyncio.to_thread(_open_stream, gateway, events, _bearer(TOKEN))
            assert isinstance(third, Raw)
            assert third.status == 429
            assert third.header("retry-after") == "5"
            assert json.loads(third.text)["error"]["type"] == "too_many_streams"
            assert "2 event streams" in json.loads(third.text)["error"]["message"]

            cookie = await asyncio.to_thread(_sign_in, gateway, TOKEN)
            console = path.replace("/v1/", "/console/", 1) + "/events"
            browser = await asyncio.to_thread(
                _open_stream, gateway, console, {"Cookie": f"adk_console={cookie}"}
            )
            assert isinstance(browser, Raw)
            assert browser.status == 429
            assert json.loads(browser.text)["error"]["type"] == "too_many_streams"

            other = await asyncio.to_thread(_open_stream, gateway, events, _bearer(SECOND_TOKEN))
            assert isinstance(other, _Stream), other
            opened.append(other)
            full = await asyncio.to_thread(_open_stream, gateway, events, _bearer(SECOND_TOKEN))
            assert isinstance(full, Raw)
            assert full.status == 429
            assert "the gateway already serves 3" in json.loads(full.text)["error"]["message"]

            opened.pop(0).close()

            async def reopened() -> _Stream | None:
                found = await asyncio.to_thread(
                    _open_stream, gateway, console, {"Cookie": f"adk_console={cookie}"}
                )
                return found if isinstance(found, _Stream) else None

            opened.append(await _until(reopened))
        finally:
            for stream in opened:
                stream.close()


BIG_EVENTS = 32
BIG_TEXT = 512 * 1024


def _frames(body: str) -> list[tuple[str, str | None, str]]:
    """``(event, id, data)`` of each complete frame of a stream's body."""
    found = []
    for block in body.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            found.append((fields["event"], fields.get("id"), fields["data"]))
    return found


def _stalled_reader(gateway: Gateway, path: str) -> http.client.HTTPConnection:
    """A request for ``path`` from a socket with a tiny receive buffer, nothing read yet."""
    host, port = gateway.base.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.sock = sock
    conn.request("GET", path, headers=_bearer(TOKEN))
    return conn


async def _completed(gateway: Gateway, path: str) -> None:
    async def done() -> bool:
        return bool((await _call(gateway, "GET", path)).json["status"] == "completed")

    await _until(done)


async def test_a_reader_that_stops_is_dropped_with_a_last_event_and_one_that_reads_is_not(
    deployment: Deployment, tmp_path: Path
) -> None:
    """16 MB of events wait for a reader that takes nothing: the gateway drops it (and logs
    so), and when it reads again it gets whole frames, then ``event: dropped`` with its
    reason, and no end. A reader that keeps up gets all of it and the end."""
    limits = ("--sse-max-backlog", str(1 << 20), "--sse-slow-reader-seconds", "2")
    with launched(deployment, tmp_path / "gateway", *limits) as slow:
        gateway = slow.gateway
        with worker_process(deployment):
            path = await _start(gateway, "What is the weather in Lagos?")
            await _completed(gateway, path)
        events = f"{path}/events"
        first = await asyncio.to_thread(gateway.sse, events)
        [invocation] = {data["invocation_id"] for name, data in first if name == "adk_event"}
        # The finished run's events as a long session replays them: far over the backlog.
        store = SqliteSessionService(deployment.data_dir / "sessions.db")
        try:
            text = types.Content(role="model", parts=[types.Part(text="x" * BIG_TEXT)])
            await store.append_events(
                SessionKey("weather", USER, path.rsplit("/", 1)[1]),
                [
                    Event(
                        id=f"big-{n}",
                        invocation_id=invocation,
                        author="weather_agent",
                        content=text,
                    )
                    for n in range(BIG_EVENTS)
                ],
            )
        finally:
            await store.close()

        stalled = await asyncio.to_thread(_stalled_reader, gateway, events)
        try:

            async def logged() -> bool:
                return "dropped the event stream of adk/weather/" in slow.logs()

            await _until(logged)
            reply = await asyncio.to_thread(stalled.getresponse)
            body = (await asyncio.to_thread(reply.read)).decode()
        finally:
            stalled.close()
        frames = _frames(body)
        name, _, data = frames[-1]
        assert name == "dropped"
        assert json.loads(data)["reason"] == "slow_reader"
        assert "end" not in [n for n, _, _ in frames]
        big = [i for n, i, _ in frames if i and i.startswith("big-")]
        assert len(big) < BIG_EVENTS
        # Whole frames only: each one's data is the JSON of an event.
        assert all(json.loads(d)["author"] for n, _, d in frames[:-1])

        again = await asyncio.to_thread(gateway.sse, events)
        assert [e["id"] for n, e in again if n == "adk_event"][-BIG_EVENTS:] == [
            f"big-{n}" for n in range(BIG_EVENTS)
        ]
        assert again[-1] == ("end", {"status": "completed"})


# ---------------------------------------------------------------- plain HTTP and proxies


def _warnings(served: Served) -> list[str]:
    return [line for line in served.stderr.read_text().splitlines() if "clear text" in line]


async def test_a_public_address_without_a_proxy_warns_that_tokens_travel_in_clear_text(
    served: Served, deployment: Deployment, tmp_path: Path
) -> None:
    """Bound to 0.0.0.0 with no proxy named, the gateway says on stderr, in one line, that
    tokens travel in clear text and how to fix that; on loopback, or behind a named proxy,
    it says nothing of the kind."""
    with launched(deployment, tmp_path / "public", "--host", "0.0.0.0") as public:
        [warning] = _warnings(public)
    assert warning.startswith("warning: serving plain HTTP on 0.0.0.0")
    assert "bearer tokens" in warning
    assert "--forwarded-allow-ips" in warning and "127.0.0.1" in warning
    proxied = ("--host", "0.0.0.0", "--forwarded-allow-ips", "10.0.0.1")
    with launched(deployment, tmp_path / "proxied", *proxied) as behind:
        assert _warnings(behind) == []
    assert _warnings(served) == []


def _secure(reply: Raw) -> bool:
    cookie = reply.header("set-cookie") or ""
    assert cookie.startswith("adk_console="), reply.headers
    return "secure" in [a.strip().lower() for a in cookie.split(";")]


def _secure_sign_in(gateway: Gateway, headers: dict[str, str]) -> tuple[bool, bool]:
    """Whether the sign-in page's cookie and the signed-in one are ``Secure``, both
    requests carrying ``headers``."""
    page = _raw(gateway, "GET", "/console/sign-in", headers=headers)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert csrf, page.text
    signed_in = _raw(
        gateway,
        "POST",
        "/console/sign-in",
        headers={**headers, "Cookie": f"adk_console={_session_cookie(page)}"},
        form={"csrf": csrf.group(1), "token": TOKEN},
    )
    assert signed_in.status == 303, signed_in.text
    return _secure(page), _secure(signed_in)


async def test_the_console_cookie_is_secure_only_when_a_trusted_proxy_forwards_https(
    served: Served, deployment: Deployment, tmp_path: Path
) -> None:
    """With ``--forwarded-allow-ips`` naming the proxy, its ``X-Forwarded-Proto: https``
    makes the session cookie ``Secure``; from an address not named, or with no option at
    all (uvicorn alone would trust loopback), the header changes nothing."""
    https = {"X-Forwarded-Proto": "https"}
    assert await asyncio.to_thread(_secure_sign_in, served.gateway, https) == (False, False)
    trusted = ("--forwarded-allow-ips", "127.0.0.1")
    with launched(deployment, tmp_path / "trusted", *trusted) as behind:
        assert await asyncio.to_thread(_secure_sign_in, behind.gateway, https) == (True, True)
        assert await asyncio.to_thread(_secure_sign_in, behind.gateway, {}) == (False, False)
    elsewhere = ("--forwarded-allow-ips", "10.20.30.40")
    with launched(deployment, tmp_path / "elsewhere", *elsewhere) as other:
        assert await asyncio.to_thread(_secure_sign_in, other.gateway, https) == (False, False)
