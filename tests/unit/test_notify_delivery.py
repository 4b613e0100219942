"""One webhook delivery against real receivers on loopback: its deadline, its pool, its
refusal to follow redirects, and the HTTP it speaks."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import ssl
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from adk_temporal.background_http import BackgroundServer
from adk_temporal.errors import NotificationRejectedError, NotificationUndeliveredError
from adk_temporal.notifications import (
    Endpoint,
    Notice,
    NoticeDelivery,
    Notifications,
    endpoint_id,
    notice_id,
)
from adk_temporal.signing import verify_body
from adk_temporal.steps import deliver_notice

SECRET = b"delivery-secret"

# asyncio's default executor is a ThreadPoolExecutor of min(32, CPUs + 4) threads: one
# delivery more than the largest such pool would occupy every thread if deliveries used it.
MORE_THAN_THE_DEFAULT_POOL = 33


class Trickler:
    """A loopback receiver that reads the request, then sends one header byte a second, for
    ever: every socket read succeeds, the response never ends."""

    def __init__(self) -> None:
        self.accepted = 0
        self.connected = asyncio.Event()
        """Set once a client connected."""
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[Any]] = set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.connected.set()
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while True:
                await writer.drain()
                await asyncio.sleep(1)  # the peer's pace is what is under test
                writer.write(b"a")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            # Unblocks a client stuck reading, whatever it runs on.
            writer.transport.abort()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        """Serve on a free loopback port; yield its URL; close every connection after."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            self._server.close()
            for handler in self._handlers:
                handler.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            await self._server.wait_closed()


class Recorder:
    """A loopback receiver that records each request and answers ``status`` (with
    ``headers``)."""

    def __init__(self, status: int = 204, headers: dict[str, str] | None = None) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                recorder.requests.append((self.command, self.path, dict(self.headers), body))
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.background = BackgroundServer(HTTPServer(("127.0.0.1", 0), Handler), "recorder")
        self.url = f"http://127.0.0.1:{self.background.port}/hook"

    def __enter__(self) -> Recorder:
        self.background.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.background.stop()


def _setup(*urls: str | Endpoint, timeout: float = 10) -> tuple[Notifications, Notice]:
    config = Notifications(endpoints=list(urls), secret=SECRET, timeout=timedelta(seconds=timeout))
    notice = Notice(
        id=notice_id("adk/app/u/s", "e-1", "paused", []),
        event="paused",
        app_name="app",
        user_id="u",
        session_id="s",
        workflow_id="adk/app/u/s",
        run_id="r-1",
        invocation_id="e-1",
        created_at=1_800_000_000.0,
    )
    return config, notice


def _delivery(notice: Notice, url: str) -> NoticeDelivery:
    return NoticeDelivery(notice=notice, endpoint=endpoint_id(url))


async def test_a_trickling_receiver_fails_the_attempt_and_never_holds_a_pool_thread(
    tmp_path: Path,
) -> None:
    """More deliveries than the default executor has threads, to a receiver that trickles a
    header byte a second: a thread-pool save on the same loop completes while they are all
    still waiting, then each fails on its own deadline, undelivered."""
    trickler = Trickler()
    order: list[str] = []
    async with trickler.running() as base:
        urls = [f"{base}/hook/{i}" for i in range(MORE_THAN_THE_DEFAULT_POOL)]
        config, notice = _setup(*urls, timeout=2)

        async def deliver(url: str) -> BaseException | None:
            try:
                await deliver_notice(config, _delivery(notice, url))
            except Exception as err:
                return err
            finally:
                order.append("delivery")
            return None

        deliveries = [asyncio.create_task(deliver(url)) for url in urls]
        try:
            await asyncio.wait_for(trickler.connected.wait(), timeout=30)
            artifact = tmp_path / "report.txt"
            try:
                async with asyncio.timeout(30):  # a hang guard, not a measurement
                    await asyncio.to_thread(artifact.write_bytes, b"v1")
            except TimeoutError:
                pytest.fail("a thread-pool save waited behind webhook deliveries")
            order.append("save")
            async with asyncio.timeout(60):
                outcomes = await asyncio.gather(*deliveries)
        finally:
            for task in deliveries:
                task.cancel()
    assert order[0] == "save" and order.count("delivery") == MORE_THAN_THE_DEFAULT_POOL
    assert all(isinstance(o, NotificationUndeliveredError) for o in outcomes)
    assert not any(isinstance(o, NotificationRejectedError) for o in outcomes)
    assert all("did not answer within 2 s" in str(o) for o in outcomes)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_a_failed_delivery_and_is_never_followed(status: int) -> None:
    """The endpoint answers a redirect to a second server: the delivery fails retryably,
    saying a redirect is not followed, without the location; the second server never hears
    from the worker, so it never sees the endpoint's credentials or the signature."""
    with Recorder() as target:
        location = f"{target.url}?leak=1"
        with Recorder(status, {"Location": location}) as endpoint:
            config, notice = _setup(Endpoint(endpoint.url, {"Authorization": "Bearer ep-token"}))
            with pytest.raises(NotificationUndeliveredError) as failure:
                await deliver_notice(config, _delivery(notice, endpoint.url))
    assert not isinstance(failure.value, NotificationRejectedError)
    assert f"HTTP {status}" in str(failure.value) and "redirect" in str(failure.value)
    assert "127.0.0.1" not in str(failure.value) and "leak" not in str(failure.value)
    assert [method for method, _, _, _ in endpoint.requests] == ["POST"]
    assert target.requests == []


async def test_the_post_carries_the_signed_document_headers_and_path() -> None:
    """The receiver gets one POST to the endpoint's path and query with the endpoint's
    headers, the signed body and its exact length; a 2xx is delivered."""
    with Recorder(202) as receiver:
        url = f"{receiver.url}/x?token=t0k3n"
        config, notice = _setup(Endpoint(url, {"Authorization": "Bearer ep-token"}))
        await deliver_notice(config, _delivery(notice, url))
    [(method, path, headers, body)] = receiver.requests
    assert (method, path) == ("POST", "/hook/x?token=t0k3n")
    assert headers["Authorization"] == "Bearer ep-token"
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(body)
    assert headers["Host"] == f"127.0.0.1:{receiver.background.port}"
    verify_body(
        SECRET,
        signature=headers["X-Adk-Signature"],
        timestamp=headers["X-Adk-Timestamp"],
        idempotency_key=headers["Idempotency-Key"],
        body=body,
        now=time.time(),
    )
    assert headers["Idempotency-Key"] == json.loads(body)["id"] == notice.id


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (400, NotificationRejectedError, "refused it with HTTP 400"),
        (429, NotificationUndeliveredError, "answered HTTP 429"),
        (503, NotificationUndeliveredError, "answered HTTP 503"),
    ],
)
async def test_statuses_other_than_2xx_fail_as_rejected_or_undelivered(
    status: int, error: type[Exception], message: str
) -> None:
    """A 4xx other than 408/429 is refused for good; 429 and 5xx are retried."""
    with Recorder(status) as receiver:
        config, notice = _setup(receiver.url)
        with pytest.raises(error, match=message) as failure:
            await deliver_notice(config, _delivery(notice, receiver.url))
    assert type(failure.value) is error


@contextlib.asynccontextmanager
async def _one_reply(reply: bytes) -> AsyncIterator[str]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(reply)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    "reply",
    [b"", b"SMTP ready\r\n\r\n", b"HTTP/1.1 2xx OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nX-Cut: "],
)
async def test_a_reply_that_is_not_http_is_undelivered(reply: bytes) -> None:
    """No reply, a reply that is not HTTP, a malformed status or a cut-off header: the
    delivery fails retryably."""
    async with _one_reply(reply) as url:
        config, notice = _setup(url)
        with pytest.raises(NotificationUndeliveredError) as failure:
            await deliver_notice(config, _delivery(notice, url))
    assert not isinstance(failure.value, NotificationRejectedError)


async def test_an_interim_response_is_skipped_for_the_final_status() -> None:
    """A 100 Continue before the final status: the final status decides."""
    reply = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    async with _one_reply(reply) as url:
        config, notice = _setup(url)
        await deliver_notice(config, _delivery(notice, url))


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no system trusts, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "adk-test")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_https_is_verified_against_the_trusted_certificates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over https the receiver's certificate is checked: one no CA vouches for fails the
    delivery, undelivered; trusted (SSL_CERT_FILE), the same receiver gets the POST."""
    cert, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with Recorder(204) as receiver:
        server = receiver.background.server
        server.socket = tls.wrap_socket(server.socket, server_side=True)
        url = receiver.url.replace("http://", "https://")
        config, notice = _setup(url)
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(NotificationUndeliveredError, match="CERTIFICATE_VERIFY_FAILED"):
            await deliver_notice(config, _delivery(notice, url))
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        await deliver_notice(config, _delivery(notice, url))
    assert [(method, path) for method, path, _, _ in receiver.requests] == [("POST", "/hook")]


async def test_a_closed_port_is_undelivered() -> None:
    """Nothing listens: the delivery fails retryably, saying the endpoint is unreachable."""
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    url = f"http://127.0.0.1:{port}/hook"
    config, notice = _setup(url)
    with pytest.raises(NotificationUndeliveredError, match="unreachable"):
        await deliver_notice(config, _delivery(notice, url))
