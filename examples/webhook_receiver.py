"""A webhook receiver for adk-temporal's notifications: check each one, handle it once.

It dedupes on the document's ``id``, which is the ``Idempotency-Key`` header: the signature
covers both, and ``verify_notification`` refuses a key that is not the document's id.

Run it with the app's secret, then point ``Notifications(endpoints=[...])`` at it::

    ADK_NOTIFY_SECRET=change-me python -m adk_temporal.examples.webhook_receiver 8080

Without ``ADK_NOTIFY_SECRET`` it exits with status 1 and says so.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from adk_temporal.notifications import NotificationConfigError, secret_from_env
from adk_temporal.signing import SignatureError, verify_notification

__all__ = ["receiver"]


def receiver(
    secret: bytes, handle: Callable[[dict[str, Any]], None]
) -> type[BaseHTTPRequestHandler]:
    """A request handler that passes each genuine, fresh, first-seen notification on."""
    seen: set[str] = set()  # keep this durable in a real receiver

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                doc = verify_notification(
                    secret,
                    signature=self.headers.get("X-Adk-Signature"),
                    timestamp=self.headers.get("X-Adk-Timestamp"),
                    idempotency_key=self.headers.get("Idempotency-Key"),
                    body=body,
                    now=time.time(),
                )
            except SignatureError:
                self.send_response(401)  # not from our app, replayed, or its key altered
            else:
                if doc["id"] not in seen:  # a retry of what was handled already is acknowledged
                    handle(doc)
                    seen.add(doc["id"])
                self.send_response(204)
            self.end_headers()

    return Receiver


if __name__ == "__main__":
    try:
        secret = secret_from_env()
    except NotificationConfigError as err:
        # A KeyError traceback would not say which secret the receiver shares with the app.
        sys.exit(f"error: {err} (the secret of the app's Notifications)")
    handler = receiver(secret, lambda doc: print(doc))
    HTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
