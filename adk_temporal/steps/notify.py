"""Delivering a notification: one signed POST of a notice to one endpoint.

The engine retries a delivery that failed retryably (:class:`NotificationUndeliveredError`)
and gives up on one the endpoint refused (:class:`NotificationRejectedError`).

The POST is a small HTTP/1.1 client on the event loop, not ``urllib`` in a thread: the
endpoint is a third party, and a receiver that answers one byte at a time would hold a
thread of the loop's default pool for as long as it likes — the pool every sync tool and
file or GCS artifact save waits on. Here one deadline covers the whole attempt (connect,
send, status line and headers), and cancelling closes the connection. Redirects are never
followed: a 3xx is a failed delivery, so a receiver cannot send the endpoint's credentials
and the signature to another host.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import re
import socket
import ssl
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from ..errors import NotificationRejectedError, NotificationUndeliveredError
from ..notifications import NoticeDelivery, Notifications, signed_request

__all__ = ["deliver_notice"]

logger = logging.getLogger(__name__)

# A server-side timeout and a rate limit: 4xx, yet worth another attempt.
_RETRYABLE_4XX = frozenset({408, 429})

# Name resolution blocks; it gets threads of its own so a slow resolver can delay only
# notices, never the tools and artifact saves on the loop's default pool.
_RESOLVER = concurrent.futures.ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="adk-notify-dns"
)

_STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([1-5][0-9][0-9])(?: [^\r\n]*)?\r?\n")
# The client writes these itself: an endpoint's own would make the request ambiguous.
_OWN_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})
_MAX_HEADER_LINES = 100


class _Unanswered(Exception):
    """The endpoint's reply is not an HTTP response."""


async def _connect(
    host: str, port: int, tls: ssl.SSLContext | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    resolve = functools.partial(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    addresses = await loop.run_in_executor(_RESOLVER, resolve)
    error: OSError = OSError(f"{host} has no address")
    for family, kind, proto, _, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
        except OSError as err:
            sock.close()
            error = err
            continue
        except BaseException:
            sock.close()
            raise
        return await asyncio.open_connection(
            sock=sock, ssl=tls, server_hostname=host if tls is not None else None
        )
    raise error


def _request(url: str, body: bytes, headers: Mapping[str, str]) -> tuple[str, int, bytes]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    default_port = 443 if parts.scheme == "https" else 80
    port = parts.port or default_port
    authority = f"[{host}]" if ":" in host else host
    if port != default_port:
        authority = f"{authority}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {authority}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in headers.items() if k.lower() not in _OWN_HEADERS),
    ]
    # The URL and the endpoint's headers were checked for line breaks and non-ASCII
    # characters when configured (Endpoint), so nothing here can start another line.
    return host, port, "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body


async def _read_status(reader: asyncio.StreamReader) -> int:
    """The final status of the response, once its header block has arrived whole."""
    while True:
        match = _STATUS_LINE.fullmatch(await reader.readline())
        if match is None:
            raise _Unanswered("its reply is not an HTTP/1.x response")
        for _ in range(_MAX_HEADER_LINES):
            line = await reader.readline()
            if not line.endswith(b"\n"):
                raise _Unanswered("its reply ended inside the headers")
            if line in (b"\r\n", b"\n"):
                break
        else:
            raise _Unanswered(f"its reply has more than {_MAX_HEADER_LINES} header lines")
        status = int(match.group(1))
        if status >= 200:  # 1xx are interim: the final status follows
            return status


async def _post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
    """POST within ``timeout`` seconds in all and return the final status."""
    host, port, request = _request(url, body, headers)
    # What urllib used: the system's CAs (or SSL_CERT_FILE's), the host name checked.
    tls = ssl.create_default_context() if urlsplit(url).scheme == "https" else None
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await _connect(host, port, tls)
            writer.write(request)
            await writer.drain()
            return await _read_status(reader)
    finally:
        if writer is not None:
            # abort, not close: a TLS close waits for the peer, which may never answer.
            writer.transport.abort()


async def deliver_notice(config: Notifications | None, delivery: NoticeDelivery) -> None:
    """POST the notice to its endpoint, signed with the app's secret.

    Raises:
        NotificationRejectedError: The endpoint answered a 4xx other than 408 and 429.
        NotificationUndeliveredError: Anything else went wrong — no notifications on this
            worker (another, configured worker of the deployment may take the retry), the
            endpoint unreachable, no whole answer within ``Notifications.timeout``, a
            redirect (never followed), another status.
    """
    if config is None:
        raise NotificationUndeliveredError(
            "this worker has no notifications configured (App.notifications)"
        )
    endpoint = config.endpoint(delivery.endpoint)
    if endpoint is None:
        # The endpoint was removed from the configuration since the run began.
        logger.warning("notification %s dropped: endpoint gone", delivery.notice.id)
        return
    body, headers = signed_request(config, endpoint, delivery.notice, now=time.time())
    timeout = config.timeout.total_seconds()
    try:
        status = await _post(endpoint.url, body, headers, timeout)
    except TimeoutError:  # an OSError too: caught first
        raise NotificationUndeliveredError(
            f"notification endpoint did not answer within {timeout:g} s"
        ) from None
    except _Unanswered as err:
        raise NotificationUndeliveredError(f"notification endpoint: {err}") from None
    except (OSError, ValueError) as err:
        # ValueError: a reply line over the stream's limit, a host name IDNA cannot encode.
        raise NotificationUndeliveredError(f"notification endpoint unreachable: {err}") from None
    if 200 <= status < 300:
        return
    if 300 <= status < 400:
        # The Location is the receiver's to choose; it is neither followed nor repeated.
        raise NotificationUndeliveredError(
            f"notification endpoint answered HTTP {status}: a redirect is not followed; "
            "configure the URL it redirects to"
        )
    if 400 <= status < 500 and status not in _RETRYABLE_4XX:
        raise NotificationRejectedError(f"notification endpoint refused it with HTTP {status}")
    raise NotificationUndeliveredError(f"notification endpoint answered HTTP {status}")
