"""A codec server: the Temporal UI and CLI read encrypted payloads through it.

It speaks Temporal's codec-server protocol: ``POST .../encode`` and ``POST .../decode``
take ``{"payloads": [...]}`` (``temporal.api.common.v1.Payloads`` in protobuf JSON) and
answer the same shape; only the last path segment is looked at, so the endpoints can be
mounted at any depth. Keys stay in this process; the browser and the ``temporal`` CLI only
ever send ciphertext and receive plaintext over this connection.

Every encode and decode needs the server's token, one of two ways:

* ``Authorization: Bearer <token>`` — the ``temporal`` CLI (``--codec-endpoint`` with
  ``TEMPORAL_CODEC_AUTH="Bearer <token>"``), scripts, and a UI whose users sign in.
* A session cookie, for the Temporal UI of a dev server, which has no sign-in and so no
  token of its own to send: open the server's page (``GET /``), paste the token once, and
  the UI's requests carry the cookie when its codec setting "Include cross-origin
  credentials" is on. The cookie is honoured only on requests whose ``Origin`` is an
  allowed UI origin; it is ``HttpOnly`` and ``SameSite=Strict``, so serve the UI and this
  server under the same host name (``127.0.0.1`` for both, say).

A payload of a forgotten session (its data key deleted: :mod:`adk_temporal.keys`) decodes
to a JSON object ``{"forgotten": "<when, and whose>"}``, so the UI shows the history with
"forgotten" in place of that data instead of an error page; other payloads decode as ever.

CORS lets exactly the configured UI origins call it, with credentials. The token is
compared in constant time and never logged; bodies over the size limit are refused before
they are read. Stdlib only (``http.server``), one thread per connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import json
import logging
import os
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from google.protobuf import json_format
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.converter import PayloadCodec

from .background_http import BackgroundServer
from .errors import EncryptionError, ForgottenError
from .signing import same_text

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_SESSION_SECONDS",
    "TOKEN_ENV",
    "TOKEN_FILE_ENV",
    "CodecServer",
    "CodecTokenError",
    "load_token",
]

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body accepted: a few 2 MB payloads (Temporal's limit) in base64."""

DEFAULT_SESSION_SECONDS = 12 * 3600
"""How long a browser sign-in lasts."""

TOKEN_ENV = "ADK_CODEC_TOKEN"
"""The environment variable that holds the token itself."""

TOKEN_FILE_ENV = "ADK_CODEC_TOKEN_FILE"
"""The environment variable that names a file holding the token."""

_MIN_TOKEN_CHARS = 16
_LOGIN_MAX_BYTES = 4096
_DRAIN_BYTES = 64 * 1024
_ALLOWED_HEADERS = "Authorization, Authorization-Extras, Content-Type, X-Namespace"
_MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'

logger = logging.getLogger(__name__)


class CodecTokenError(EncryptionError):
    """The codec server's token is missing, unreadable or too short to be a secret."""


def load_token(
    token_file: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """The token from ``token_file``, else ``ADK_CODEC_TOKEN_FILE``, else ``ADK_CODEC_TOKEN``.

    Surrounding whitespace (a trailing newline) is dropped.

    Raises:
        CodecTokenError: None is set, the file cannot be read, or the token is shorter than
            16 characters.
    """
    env = os.environ if environ is None else environ
    path = token_file or env.get(TOKEN_FILE_ENV)
    if path:
        try:
            token = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as err:
            raise CodecTokenError(f"cannot read the token file {path}: {err}") from None
        where = f"token file {path}"
    elif env.get(TOKEN_ENV):
        token, where = env[TOKEN_ENV].strip(), TOKEN_ENV
    else:
        raise CodecTokenError(
            f"the codec server needs a token: pass --token-file, or set {TOKEN_FILE_ENV} or "
            f"{TOKEN_ENV}; make one with {_MAKE_TOKEN}"
        )
    if len(token) < _MIN_TOKEN_CHARS:
        raise CodecTokenError(
            f"the token in {where} has {len(token)} characters; use at least "
            f"{_MIN_TOKEN_CHARS} random ones, e.g. {_MAKE_TOKEN}"
        )
    return token


def _digest(value: str) -> bytes:
    # Comparing fixed-length digests keeps compare_digest from revealing the token's length.
    return hashlib.sha256(value.encode()).digest()


class _Auth:
    """The token, and the session cookies derived from it."""

    def __init__(self, token: str, session_seconds: int, clock: Callable[[], float]) -> None:
        self._token_digest = _digest(token)
        # The cookie's MAC key is derived from the token: a new token ends every session,
        # and a cookie never contains the token itself.
        self._session_key = hmac.new(token.encode(), b"adk-temporal codec session", "sha256")
        self.session_seconds = session_seconds
        self._clock = clock

    def token_ok(self, candidate: str) -> bool:
        return hmac.compare_digest(_digest(candidate), self._token_digest)

    def new_session(self) -> str:
        expires = int(self._clock()) + self.session_seconds
        return f"{expires}.{self._mac(expires)}"

    def session_ok(self, value: str) -> bool:
        expires_text, _, mac = value.partition(".")
        if not expires_text.isdecimal() or int(expires_text) <= self._clock():
            return False
        return same_text(mac, self._mac(int(expires_text)))

    def _mac(self, expires: int) -> str:
        mac = self._session_key.copy()
        mac.update(str(expires).encode())
        return mac.hexdigest()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    app: CodecServer
    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[Any, Any]:
        """Accept a connection; with TLS, wrap it without shaking hands yet.

        The handshake then happens on the connection's own thread, on its first read, so
        a slow or silent client cannot stall the accepting thread.
        """
        sock, address = self.socket.accept()
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


class _Reply(Exception):
    """Ends a request early with a status and a JSON error body."""

    def __init__(self, status: HTTPStatus, message: str, **headers: str) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "adk-temporal-codec"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    # A client that stops sending mid-request frees its thread after this many seconds.
    timeout = 30
    # Headers and body leave in separate writes; with Nagle's algorithm on, the body waits
    # for the client's delayed ACK and every keep-alive request takes 40 ms longer.
    disable_nagle_algorithm = True

    # --------------------------------------------------------------- dispatch

    def do_OPTIONS(self) -> None:
        """A CORS preflight: allowed for the configured UI origins only."""
        origin = self.headers.get("Origin")
        if origin is None or origin not in self.server.app.ui_origins:
            self._json(HTTPStatus.FORBIDDEN, {"error": "origin not allowed"}, cors=False)
            return
        headers = {
            **self._cors(),
            "Access-Control-Allow-Methods": "POST, OPTIONS",
            "Access-Control-Allow-Headers": _ALLOWED_HEADERS,
            "Access-Control-Max-Age": "600",
        }
        if self.headers.get("Access-Control-Request-Private-Network") == "true":
            # Chromium's private-network preflight, for a UI served from a public address.
            headers["Access-Control-Allow-Private-Network"] = "true"
        self._send(HTTPStatus.NO_CONTENT, b"", "text/plain", headers)

    def do_GET(self) -> None:
        """``/``: the sign-in page for browsers; anything else is not found."""
        if urlsplit(self.path).path.rstrip("/") != "":
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        self._page(HTTPStatus.OK, _sign_in_page(self._own_origin()))

    def do_POST(self) -> None:
        """``.../encode``, ``.../decode`` and ``/login``."""
        path = urlsplit(self.path).path
        action = path.rstrip("/").rsplit("/", 1)[-1]
        try:
            if path.rstrip("/") == "/login":
                self._login()
            elif action in ("encode", "decode"):
                self._convert(action)
            else:
                raise _Reply(HTTPStatus.NOT_FOUND, "not found: POST .../encode or .../decode")
        except _Reply as reply:
            self._json(reply.status, {"error": str(reply)}, extra=reply.headers)

    # --------------------------------------------------------------- endpoints

    def _convert(self, action: str) -> None:
        app = self.server.app
        origin = self.headers.get("Origin")
        if origin is not None and origin not in app.ui_origins and origin != self._own_origin():
            raise _Reply(HTTPStatus.FORBIDDEN, f"origin {origin} is not allowed")
        self._authenticate(origin)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise _Reply(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send Content-Type: application/json")
        body = self._body(app.max_body_bytes)
        try:
            payloads = json_format.Parse(body, Payloads(), ignore_unknown_fields=True)
        except (json_format.ParseError, UnicodeDecodeError) as err:
            raise _Reply(
                HTTPStatus.BAD_REQUEST, f'expected {{"payloads": [...]}} in protobuf JSON: {err}'
            ) from None
        try:
            converted = asyncio.run(app.convert(action, list(payloads.payloads)))
        except EncryptionError as err:
            # The message names key ids and what to fix, never key material.
            raise _Reply(HTTPStatus.BAD_REQUEST, str(err)) from None
        except Exception:
            # Logged here, answered plainly: a traceback may quote payload contents.
            logger.exception("%s failed", action)
            raise _Reply(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"{action} failed; see the server log"
            ) from None
        self._json(HTTPStatus.OK, _to_json(Payloads(payloads=converted)))

    def _login(self) -> None:
        app = self.server.app
        origin = self.headers.get("Origin")
        # Only the sign-in page itself may sign a browser in (no login CSRF).
        if origin is not None and origin != self._own_origin():
            raise _Reply(HTTPStatus.FORBIDDEN, f"origin {origin} may not sign in here")
        form = parse_qs(self._body(_LOGIN_MAX_BYTES).decode("utf-8", errors="replace"))
        token = (form.get("token") or [""])[0].strip()
        if not app.auth.token_ok(token):
            self._page(HTTPStatus.FORBIDDEN, _result_page("Wrong token.", signed_in=False))
            return
        cookie = (
            f"{app.cookie_name}={app.auth.new_session()}; Path=/; HttpOnly; SameSite=Strict; "
            f"Max-Age={app.auth.session_seconds}"
        )
        if app.tls:
            cookie += "; Secure"
        self._page(HTTPStatus.OK, _result_page(app.url, signed_in=True), {"Set-Cookie": cookie})

    # --------------------------------------------------------------- helpers

    def _authenticate(self, origin: str | None) -> None:
        app = self.server.app
        authorization = self.headers.get("Authorization")
        if authorization is not None:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _Reply(
                    HTTPStatus.UNAUTHORIZED,
                    "send Authorization: Bearer <token>",
                    **{"WWW-Authenticate": 'Bearer realm="adk-temporal codec"'},
                )
            if not app.auth.token_ok(token.strip()):
                raise _Reply(HTTPStatus.FORBIDDEN, "invalid token")
            return
        session = self._cookie(app.cookie_name)
        # A cookie rides along with any request the browser makes, so it counts only on
        # requests from the UI origins this server was told to serve.
        if session is not None and origin in app.ui_origins:
            if app.auth.session_ok(session):
                return
            raise _Reply(
                HTTPStatus.UNAUTHORIZED,
                f"the browser session expired; sign in again at {app.url}/",
            )
        raise _Reply(
            HTTPStatus.UNAUTHORIZED,
            "missing token: send Authorization: Bearer <token>, or sign this browser in at "
            f"{app.url}/",
            **{"WWW-Authenticate": 'Bearer realm="adk-temporal codec"'},
        )

    def _cookie(self, name: str) -> str | None:
        raw = self.headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        morsel = jar.get(name)
        return morsel.value if morsel is not None else None

    def _body(self, limit: int) -> bytes:
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.isdecimal():
            self.close_connection = True
            raise _Reply(HTTPStatus.LENGTH_REQUIRED, "send Content-Length")
        length = int(length_text)
        if length > limit:
            self.close_connection = True
            if length <= limit + _DRAIN_BYTES:
                # Read and dropped, so the client is not reset before it reads the 413;
                # a larger body is never read, the connection just closes.
                self.rfile.read(length)
            raise _Reply(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"body of {length} bytes is over the limit of {limit}",
            )
        return self.rfile.read(length)

    def _own_origin(self) -> str:
        scheme = "https" if self.server.app.tls else "http"
        return f"{scheme}://{self.headers.get('Host', '')}"

    def _cors(self) -> dict[str, str]:
        origin = self.headers.get("Origin")
        if origin is None or origin not in self.server.app.ui_origins:
            return {}
        return {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Credentials": "true",
            "Vary": "Origin",
        }

    def _json(
        self,
        status: HTTPStatus,
        data: Any,
        *,
        cors: bool = True,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        headers = {**(self._cors() if cors else {}), **(extra or {})}
        body = json.dumps(data).encode()
        self._send(status, body, "application/json", headers)

    def _page(self, status: HTTPStatus, page: str, extra: Mapping[str, str] | None = None) -> None:
        headers = {
            # The page loads nothing and may only post its form back here.
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
            "form-action 'self'; frame-ancestors 'none'",
            **(extra or {}),
        }
        self._send(status, page.encode(), "text/html; charset=utf-8", headers)

    def _send(
        self, status: HTTPStatus, body: bytes, content_type: str, headers: Mapping[str, str]
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Log the request line and status only: headers carry the token and cookie."""
        logger.info("%s %s", self.address_string(), format % args)


def _to_json(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(message)
    # An empty list is left out by protobuf JSON; the protocol's clients expect the key.
    data.setdefault("payloads", [])
    return data


def _sign_in_page(origin: str) -> str:
    endpoint = html.escape(origin)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>adk-temporal codec server</title>
<style>body{{font-family:sans-serif;max-width:40em;margin:3em auto}}</style></head>
<body><h1>adk-temporal codec server</h1>
<p>Sign this browser in to let the Temporal UI decode payloads here.</p>
<form method="post" action="/login">
<label>Token <input type="password" name="token" autocomplete="off" autofocus></label>
<button type="submit">Sign in</button></form>
<p>Then, in the Temporal UI's codec server settings, set the endpoint to
<code>{endpoint}</code> and turn on "Include cross-origin credentials".</p>
</body></html>
"""


def _result_page(detail: str, *, signed_in: bool) -> str:
    text = (
        f"Signed in. Payloads decode for the Temporal UI through {html.escape(detail)}."
        if signed_in
        else html.escape(detail)
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>adk-temporal codec '
        f"server</title></head><body><p>{text}</p></body></html>\n"
    )


class CodecServer:
    """The codec-server protocol over ``codec``, on a thread, until :meth:`stop`.

    Args:
        codec: Encodes and decodes the payloads, e.g.
            :class:`~adk_temporal.codec.EncryptionCodec`.
        token: The secret every request must prove (see the module docstring).
        host: The address to bind; loopback by default.
        port: The port; ``0`` picks a free one (see :attr:`url`).
        ui_origins: Origins of Temporal UIs allowed to call it from a browser
            (``http://127.0.0.1:8233``); none by default.
        max_body_bytes: Larger request bodies are refused (413) unread.
        session_seconds: How long a browser sign-in lasts.
        tls: Serve HTTPS with this context (a certificate loaded); plain HTTP when ``None``.
        clock: Seconds since the epoch; injectable so tests can expire sessions.
    """

    def __init__(
        self,
        codec: PayloadCodec,
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ui_origins: Sequence[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        session_seconds: int = DEFAULT_SESSION_SECONDS,
        tls: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if len(token) < _MIN_TOKEN_CHARS:
            raise CodecTokenError(f"the token must have at least {_MIN_TOKEN_CHARS} characters")
        self.codec = codec
        self.host = host
        self.auth = _Auth(token, session_seconds, clock)
        self.ui_origins = frozenset(o.rstrip("/") for o in ui_origins)
        self.max_body_bytes = max_body_bytes
        self.tls = tls
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.tls = tls
        self._httpd.app = self
        self._serving = BackgroundServer(self._httpd, "adk-codec-server")

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL: the codec endpoint to give the UI and ``temporal --codec-endpoint``."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def cookie_name(self) -> str:
        """The session cookie's name; per port, since cookies do not tell ports apart."""
        return f"adk_codec_session_{self.port}"

    async def convert(self, action: str, payloads: list[Any]) -> list[Any]:
        """Encode or decode ``payloads`` with the codec; a forgotten one decodes to a note."""
        if action == "encode":
            return await self.codec.encode(payloads)
        try:
            return await self.codec.decode(payloads)
        except ForgottenError:
            # One by one, so only the forgotten payloads become notes.
            return [await self._decode_or_note(p) for p in payloads]

    async def _decode_or_note(self, payload: Payload) -> Payload:
        try:
            [decoded] = await self.codec.decode([payload])
        except ForgottenError as err:
            note = json.dumps({"forgotten": str(err)}).encode()
            return Payload(metadata={"encoding": b"json/plain"}, data=note)
        return decoded

    def start(self) -> CodecServer:
        """Serve on a daemon thread; returns at once."""
        self._serving.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._serving.stop()

    def __enter__(self) -> CodecServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
