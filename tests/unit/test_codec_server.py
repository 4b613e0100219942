"""The codec server over loopback: the protocol, the token, CORS, sign-in, limits, TLS."""

from __future__ import annotations

import asyncio
import datetime
import http.client
import ipaddress
import json
import logging
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from adk_temporal.codec import EncryptionCodec, EncryptionKeys
from adk_temporal.codec_server import CodecServer, CodecTokenError, load_token
from adk_temporal.errors import EncryptionError

TOKEN = "codec-test-token-0123456789"
UI = "http://127.0.0.1:8233"
MARKER = "Codec-server-marker-42"


@dataclass
class Reply:
    """One HTTP response, read whole."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, object]:
        """The body as JSON."""
        data: dict[str, object] = json.loads(self.body)
        return data


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def codec() -> EncryptionCodec:
    """A codec with one fresh key."""
    return EncryptionCodec(EncryptionKeys.generate())


@pytest.fixture
def clock() -> Clock:
    """The codec server's clock."""
    return Clock()


@pytest.fixture
def server(codec: EncryptionCodec, clock: Clock) -> Iterator[CodecServer]:
    """A codec server on a free loopback port allowing the UI origin ``UI``."""
    with CodecServer(
        codec, TOKEN, ui_origins=[UI], max_body_bytes=64 * 1024, clock=clock
    ) as running:
        yield running


def request(
    server: CodecServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> Reply:
    """Send one request to ``server`` and read the whole reply."""
    if context is None:
        conn: http.client.HTTPConnection = http.client.HTTPConnection(
            "127.0.0.1", server.port, timeout=10
        )
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=10, context=context)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return Reply(response.status, dict(response.getheaders()), response.read())
    finally:
        conn.close()


def payloads_json(payloads: list[Payload]) -> bytes:
    """``{"payloads": [...]}`` in protobuf JSON, as the UI and CLI send it."""
    return json_format.MessageToJson(Payloads(payloads=payloads)).encode()


def parse_payloads(body: bytes) -> list[Payload]:
    """The payloads of a protocol body."""
    return list(json_format.Parse(body, Payloads()).payloads)


def plain(text: str = MARKER) -> Payload:
    """A json/plain payload holding ``text``."""
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())


def sealed(codec: EncryptionCodec, text: str = MARKER) -> Payload:
    """``plain(text)`` sealed by ``codec``."""
    return asyncio.run(codec.encode([plain(text)]))[0]


def bearer(token: str = TOKEN) -> dict[str, str]:
    """JSON headers with a bearer token."""
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def test_decode_opens_payloads_at_any_depth_with_a_query(
    server: CodecServer, codec: EncryptionCodec
) -> None:
    """POST .../decode (mounted anywhere, UI's query string too) answers the same shape."""
    body = payloads_json([sealed(codec), plain("as is")])
    for path in ("/decode", "/default/codec/decode?preserveStorageRefs=true"):
        reply = request(server, "POST", path, body, bearer())
        assert reply.status == 200, reply.body
        assert parse_payloads(reply.body) == [plain(), plain("as is")]
        assert reply.headers["Content-Type"] == "application/json"


def test_encode_seals_with_the_current_key(server: CodecServer, codec: EncryptionCodec) -> None:
    """POST /encode seals each payload; decoding the answer gives the input back."""
    reply = request(server, "POST", "/encode", payloads_json([plain()]), bearer())
    assert reply.status == 200
    [encoded] = parse_payloads(reply.body)
    assert encoded.metadata["encryption-key-id"] == b"k1"
    assert MARKER.encode() not in encoded.data
    assert asyncio.run(codec.decode([encoded])) == [plain()]


def test_an_empty_request_gets_an_empty_list(server: CodecServer) -> None:
    """``{"payloads": []}`` round-trips with the key present."""
    reply = request(server, "POST", "/decode", b'{"payloads": []}', bearer())
    assert reply.status == 200
    assert reply.json() == {"payloads": []}


def test_a_missing_token_is_401_and_a_wrong_one_403(
    server: CodecServer, codec: EncryptionCodec
) -> None:
    """No token: 401 with a challenge; wrong token or scheme: refused; nothing decoded."""
    body = payloads_json([sealed(codec)])
    missing = request(server, "POST", "/decode", body, {"Content-Type": "application/json"})
    assert missing.status == 401
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert "missing token" in str(missing.json()["error"])
    wrong = request(server, "POST", "/decode", body, bearer("x" * len(TOKEN)))
    assert wrong.status == 403
    assert wrong.json() == {"error": "invalid token"}
    basic = {"Authorization": f"Basic {TOKEN}", "Content-Type": "application/json"}
    assert request(server, "POST", "/decode", body, basic).status == 401
    for reply in (missing, wrong):
        assert MARKER.encode() not in reply.body


def test_the_token_never_reaches_the_log(
    server: CodecServer, codec: EncryptionCodec, caplog: pytest.LogCaptureFixture
) -> None:
    """Requests are logged by line and status only; the token and cookies stay out."""
    caplog.set_level(logging.DEBUG, logger="adk_temporal.codec_server")
    request(server, "POST", "/decode", payloads_json([sealed(codec)]), bearer())
    request(server, "POST", "/decode", b"{}", bearer("wrong-token-" + TOKEN))
    request(server, "POST", "/login", urlencode({"token": TOKEN}).encode(), _form())
    assert "POST /decode" in caplog.text
    assert TOKEN not in caplog.text


def test_preflight_allows_the_ui_origin_with_credentials(server: CodecServer) -> None:
    """OPTIONS from the UI origin: 204 with origin, credentials, methods and headers."""
    reply = request(
        server,
        "OPTIONS",
        "/decode",
        headers={
            "Origin": UI,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,x-namespace",
        },
    )
    assert reply.status == 204
    assert reply.headers["Access-Control-Allow-Origin"] == UI
    assert reply.headers["Access-Control-Allow-Credentials"] == "true"
    assert "POST" in reply.headers["Access-Control-Allow-Methods"]
    allowed = {h.strip().lower() for h in reply.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type", "x-namespace"} <= allowed


def test_other_origins_are_refused(server: CodecServer, codec: EncryptionCodec) -> None:
    """A page from another origin gets no CORS grant, even holding the token."""
    evil = "http://127.0.0.1:9999"
    preflight = request(server, "OPTIONS", "/decode", headers={"Origin": evil})
    assert preflight.status == 403
    assert "Access-Control-Allow-Origin" not in preflight.headers
    body = payloads_json([sealed(codec)])
    reply = request(server, "POST", "/decode", body, {**bearer(), "Origin": evil})
    assert reply.status == 403
    assert "Access-Control-Allow-Origin" not in reply.headers
    allowed = request(server, "POST", "/decode", body, {**bearer(), "Origin": UI})
    assert allowed.status == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == UI


def _form(origin: str | None = None) -> dict[str, str]:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin:
        headers["Origin"] = origin
    return headers


def _sign_in(server: CodecServer, token: str = TOKEN) -> Reply:
    own = f"http://127.0.0.1:{server.port}"
    return request(server, "POST", "/login", urlencode({"token": token}).encode(), _form(own))


def test_a_browser_signs_in_once_then_the_ui_decodes_with_its_cookie(
    server: CodecServer, codec: EncryptionCodec, clock: Clock
) -> None:
    """The sign-in cookie works from the UI origin only, and only until it expires."""
    page = request(server, "GET", "/")
    assert page.status == 200 and b'name="token"' in page.body
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert _sign_in(server, "wrong-token-0000000000").status == 403
    signed_in = _sign_in(server)
    assert signed_in.status == 200
    cookie = signed_in.headers["Set-Cookie"]
    assert cookie.startswith(f"{server.cookie_name}=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert TOKEN not in cookie
    session = cookie.split(";")[0]
    body = payloads_json([sealed(codec)])
    ui = {"Content-Type": "application/json", "Origin": UI, "Cookie": session}
    reply = request(server, "POST", "/decode", body, ui)
    assert reply.status == 200
    assert parse_payloads(reply.body) == [plain()]
    no_origin = {"Content-Type": "application/json", "Cookie": session}
    assert request(server, "POST", "/decode", body, no_origin).status == 401
    forged = {**ui, "Cookie": session[:-4] + "0000"}
    assert request(server, "POST", "/decode", body, forged).status == 401
    clock.now += 13 * 3600
    expired = request(server, "POST", "/decode", body, ui)
    assert expired.status == 401
    assert "expired" in str(expired.json()["error"])


def test_sign_in_from_another_origin_is_refused(server: CodecServer) -> None:
    """Only the server's own page may sign a browser in (no login CSRF)."""
    reply = request(server, "POST", "/login", urlencode({"token": TOKEN}).encode(), _form(UI))
    assert reply.status == 403
    assert "Set-Cookie" not in reply.headers


def test_bodies_over_the_limit_are_refused(server: CodecServer) -> None:
    """A body over max_body_bytes gets 413; JSON is required and must parse."""
    big = b'{"payloads": [], "pad": "' + b"x" * (65 * 1024) + b'"}'
    assert request(server, "POST", "/decode", big, bearer()).status == 413
    text = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"}
    assert request(server, "POST", "/decode", b"{}", text).status == 415
    broken = request(server, "POST", "/decode", b'{"payloads": [1', bearer())
    assert broken.status == 400
    assert "protobuf JSON" in str(broken.json()["error"])


def test_an_undecodable_payload_is_a_400_naming_the_key(server: CodecServer) -> None:
    """A payload sealed with a key the server lacks is refused with the key id, no secret."""
    stranger = EncryptionCodec(EncryptionKeys.generate("other"))
    reply = request(server, "POST", "/decode", payloads_json([sealed(stranger)]), bearer())
    assert reply.status == 400
    assert "'other'" in str(reply.json()["error"])


def test_unknown_paths_are_404(server: CodecServer) -> None:
    """Only encode, decode, login and the sign-in page exist."""
    assert request(server, "POST", "/download", b"{}", bearer()).status == 404
    assert request(server, "GET", "/decode").status == 404


def test_tokens_come_from_a_file_or_the_environment(tmp_path: Path) -> None:
    """--token-file, ADK_CODEC_TOKEN_FILE, ADK_CODEC_TOKEN; short or absent ones refused."""
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    assert load_token(path, {}) == TOKEN
    assert load_token(None, {"ADK_CODEC_TOKEN_FILE": str(path)}) == TOKEN
    assert load_token(None, {"ADK_CODEC_TOKEN": TOKEN}) == TOKEN
    with pytest.raises(CodecTokenError, match="needs a token"):
        load_token(None, {})
    with pytest.raises(CodecTokenError, match="at least 16"):
        load_token(None, {"ADK_CODEC_TOKEN": "short"})
    with pytest.raises(CodecTokenError, match="cannot read"):
        load_token(tmp_path / "absent", {})
    assert issubclass(CodecTokenError, EncryptionError)


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_tls_serves_https_and_marks_the_cookie_secure(
    tmp_path: Path, codec: EncryptionCodec
) -> None:
    """With a certificate the server speaks HTTPS only and its cookie is Secure."""
    cert, key = _self_signed(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    with CodecServer(codec, TOKEN, tls=tls) as server:
        assert server.url.startswith("https://")
        reply = request(
            server, "POST", "/decode", payloads_json([sealed(codec)]), bearer(), context=client
        )
        assert reply.status == 200
        assert parse_payloads(reply.body) == [plain()]
        own = f"https://127.0.0.1:{server.port}"
        signed_in = request(
            server,
            "POST",
            "/login",
            urlencode({"token": TOKEN}).encode(),
            _form(own),
            context=client,
        )
        assert "Secure" in signed_in.headers["Set-Cookie"]
